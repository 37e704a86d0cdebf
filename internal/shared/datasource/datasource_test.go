package datasource

import (
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type claimOption func(*v1.PersistentVolumeClaim)

func newClaim(opts ...claimOption) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "foo-testing", Namespace: "test"}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func ptr(s string) *string { return &s }

func withDataSource(group, kind, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSource = &v1.TypedLocalObjectReference{Kind: kind, Name: name}
		if group != "" {
			c.Spec.DataSource.APIGroup = ptr(group)
		}
	}
}

func withDataSourceRef(group, kind, namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: kind, Name: name}
		if group != "" {
			c.Spec.DataSourceRef.APIGroup = ptr(group)
		}
		if namespace != "" {
			c.Spec.DataSourceRef.Namespace = ptr(namespace)
		}
	}
}

func TestResolve(t *testing.T) {
	snap := func(ns, name string, explicit bool) Source {
		return Source{APIGroup: SnapshotGroup, Kind: SnapshotKind, Namespace: ns, Name: name, ExplicitNamespace: explicit}
	}
	tests := []struct {
		name     string
		claim    *v1.PersistentVolumeClaim
		want     Source
		wantType Type
		wantErr  bool
	}{
		{
			name:     "a claim without data source gets an empty volume",
			claim:    newClaim(),
			want:     Source{Namespace: "test"},
			wantType: None,
		},
		{
			name:     "legacy dataSource alone names a snapshot in the claim's namespace",
			claim:    newClaim(withDataSource(SnapshotGroup, SnapshotKind, "snap")),
			want:     snap("test", "snap", false),
			wantType: Snapshot,
		},
		{
			name:     "legacy dataSource without apiGroup names a PVC to clone",
			claim:    newClaim(withDataSource("", ClaimKind, "src")),
			want:     Source{Kind: ClaimKind, Namespace: "test", Name: "src"},
			wantType: Claim,
		},
		{
			name:     "dataSourceRef alone without namespace means the claim's namespace",
			claim:    newClaim(withDataSourceRef(SnapshotGroup, SnapshotKind, "", "snap")),
			want:     snap("test", "snap", false),
			wantType: Snapshot,
		},
		{
			name: "dataSource and dataSourceRef that agree are accepted",
			claim: newClaim(withDataSource(SnapshotGroup, SnapshotKind, "snap"),
				withDataSourceRef(SnapshotGroup, SnapshotKind, "", "snap")),
			want:     snap("test", "snap", false),
			wantType: Snapshot,
		},
		{
			name: "dataSource and dataSourceRef that name different objects are rejected",
			claim: newClaim(withDataSource(SnapshotGroup, SnapshotKind, "a"),
				withDataSourceRef(SnapshotGroup, SnapshotKind, "", "b")),
			wantErr: true,
		},
		{
			name: "dataSource and dataSourceRef of different kinds are rejected",
			claim: newClaim(withDataSource("", ClaimKind, "a"),
				withDataSourceRef(SnapshotGroup, SnapshotKind, "", "a")),
			wantErr: true,
		},
		{
			name:     "dataSourceRef with another namespace names a cross-namespace snapshot",
			claim:    newClaim(withDataSourceRef(SnapshotGroup, SnapshotKind, "prod", "foo-backup")),
			want:     snap("prod", "foo-backup", true),
			wantType: Snapshot,
		},
		{
			name:     "dataSourceRef naming the claim's own namespace still counts as explicit (needs a grant)",
			claim:    newClaim(withDataSourceRef(SnapshotGroup, SnapshotKind, "test", "snap")),
			want:     snap("test", "snap", true),
			wantType: Snapshot,
		},
		{
			name: "a local dataSource cannot agree with a dataSourceRef in another namespace",
			claim: newClaim(withDataSource(SnapshotGroup, SnapshotKind, "foo-backup"),
				withDataSourceRef(SnapshotGroup, SnapshotKind, "prod", "foo-backup")),
			wantErr: true,
		},
		{
			name:     "a custom kind in dataSourceRef is a populator's business",
			claim:    newClaim(withDataSourceRef("hello.example.com", "Hello", "", "h")),
			want:     Source{APIGroup: "hello.example.com", Kind: "Hello", Namespace: "test", Name: "h"},
			wantType: Populator,
		},
		{
			name:     "a VolumeSnapshot kind in another group is a populator's business",
			claim:    newClaim(withDataSourceRef("example.com", SnapshotKind, "", "s")),
			want:     Source{APIGroup: "example.com", Kind: SnapshotKind, Namespace: "test", Name: "s"},
			wantType: Populator,
		},
		{
			name:    "an apiGroup with a version, as in the KEP's example, is rejected",
			claim:   newClaim(withDataSourceRef("snapshot.storage.k8s.io/v1", SnapshotKind, "prod", "foo-backup")),
			wantErr: true,
		},
		{
			name:    "a versioned apiGroup in the legacy dataSource is rejected too",
			claim:   newClaim(withDataSource("snapshot.storage.k8s.io/v1", SnapshotKind, "s")),
			wantErr: true,
		},
		{
			name:    "a dataSourceRef that names nothing is rejected, not read as no data source",
			claim:   newClaim(withDataSourceRef("", "", "", "")),
			wantErr: true,
		},
		{
			name:    "a dataSource that names nothing is rejected too",
			claim:   newClaim(withDataSource("", "", "")),
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.claim)
			if tt.wantErr {
				var invalid *InvalidError
				if !errors.As(err, &invalid) {
					t.Fatalf("Resolve() error = %v, want an *InvalidError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() unexpected error: %v", err)
			}
			if got != tt.want {
				t.Errorf("Resolve() = %+v, want %+v", got, tt.want)
			}
			if got.Type() != tt.wantType {
				t.Errorf("Type() = %v, want %v", got.Type(), tt.wantType)
			}
		})
	}
}

func TestSourceString(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want string
	}{
		{"a snapshot is named by kind and namespace/name", Source{APIGroup: SnapshotGroup, Kind: SnapshotKind, Namespace: "prod", Name: "s"}, "VolumeSnapshot prod/s"},
		{"a populator kind carries its group", Source{APIGroup: "example.com", Kind: "Hello", Namespace: "a", Name: "h"}, "Hello.example.com a/h"},
		{"no source says so", Source{Namespace: "a"}, "no data source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.src.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestServesDespiteDeletion(t *testing.T) {
	at := func(minute int) metav1.Time {
		return metav1.NewTime(time.Date(2026, 11, 23, 12, minute, 0, 0, time.UTC))
	}
	deleted := func(minute int, finalizers ...string) *metav1.ObjectMeta {
		ts := at(minute)
		return &metav1.ObjectMeta{DeletionTimestamp: &ts, Finalizers: finalizers}
	}
	created := func(minute int) *metav1.ObjectMeta { return &metav1.ObjectMeta{CreationTimestamp: at(minute)} }
	tests := []struct {
		name   string
		source *metav1.ObjectMeta
		claim  *metav1.ObjectMeta
		order  DeletionOrder
		want   bool
	}{
		{"a source not being deleted serves every claim", &metav1.ObjectMeta{}, created(9), nil, true},
		{"a protected source being deleted serves the claims that were there first", deleted(5, SnapshotFinalizer), created(4), seenAfter(true), true},
		{"a claim created in the second of the deletion request counts as first when nothing orders them", deleted(5, SnapshotFinalizer), created(5), nil, true},
		{"a claim created in the second of the deletion request counts as first when the order is unknown", deleted(5, SnapshotFinalizer), created(5), unknownOrder{}, true},
		{"a claim seen after the deletion request in its second is not served", deleted(5, SnapshotFinalizer), created(5), seenAfter(true), false},
		{"a claim seen before the deletion request in its second is served", deleted(5, SnapshotFinalizer), created(5), seenAfter(false), true},
		{"a claim created after the deletion request is not served", deleted(5, SnapshotFinalizer), created(6), seenAfter(false), false},
		{"without the protection finalizer nothing holds the source for the claim", deleted(5, "other"), created(4), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServesDespiteDeletion(tt.source, SnapshotFinalizer, tt.claim, tt.order); got != tt.want {
				t.Errorf("ServesDespiteDeletion() = %v, want %v", got, tt.want)
			}
		})
	}
}

// seenAfter is a DeletionOrder that knows.
type seenAfter bool

func (s seenAfter) CreatedAfterDeletion(_, _ metav1.Object) (bool, bool) { return bool(s), true }

// unknownOrder is a DeletionOrder that cannot tell.
type unknownOrder struct{}

func (unknownOrder) CreatedAfterDeletion(_, _ metav1.Object) (bool, bool) { return false, false }

func TestEachUseHasItsFinalizer(t *testing.T) {
	snap := Source{APIGroup: SnapshotGroup, Kind: SnapshotKind, Namespace: "prod", Name: "snap"}
	explicitSnap, linkedSnap := snap, snap
	explicitSnap.ExplicitNamespace, linkedSnap.ThroughLink = true, true
	clone := Source{Kind: ClaimKind, Namespace: "prod", Name: "data"}
	explicitClone := clone
	explicitClone.ExplicitNamespace = true
	tests := []struct {
		name string
		src  Source
		want string
	}{
		{"a snapshot named in spec.dataSource is upstream's", snap, SnapshotFinalizer},
		{"a snapshot named with spec.dataSourceRef.namespace has its own", explicitSnap, CrossNamespaceSnapshotFinalizer},
		{"a snapshot restored through a link has the links'", linkedSnap, LinkSnapshotFinalizer},
		{"a claim cloned from spec.dataSource is upstream's", clone, CloneFinalizer},
		{"a claim cloned with spec.dataSourceRef.namespace has its own", explicitClone, CrossNamespaceCloneFinalizer},
		{"a populator's kind has none", Source{APIGroup: "example.com", Kind: "Hello", Namespace: "a", Name: "h"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.src.Finalizer(); got != tt.want {
				t.Errorf("Finalizer() = %q, want %q", got, tt.want)
			}
		})
	}
	var used []string
	for _, src := range []Source{snap, clone} {
		for _, use := range src.Uses() {
			used = append(used, use.Finalizer())
		}
	}
	if !slices.Equal(used, Finalizers) {
		t.Errorf("the uses of a snapshot and a claim have finalizers %v, want each of %v once", used, Finalizers)
	}
	for _, f := range Finalizers {
		if errs := apivalidation.ValidateFinalizerName(f, field.NewPath("metadata", "finalizers")); len(errs) > 0 {
			t.Errorf("the API server would refuse finalizer %q: %v", f, errs.ToAggregate())
		}
	}
}
