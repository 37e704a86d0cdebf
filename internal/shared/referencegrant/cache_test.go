package referencegrant

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// cached is g as the informer stores it.
func cached(g Grant) *cachedGrant {
	obj, _ := toCached(v1Grant(g))
	return obj.(*cachedGrant)
}

func TestToCached(t *testing.T) {
	g := grant(claimsFromTest, fooBackup, everySnapshot)
	full := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{
			Namespace: "prod", Name: "bar", UID: "uid-1", ResourceVersion: "42", Generation: 3,
			Labels:          map[string]string{"team": "storage"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
			Finalizers:      []string{"example.com/keep"},
		}
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "prod/bar"}

	tests := []struct {
		name string
		obj  any
		want any
	}{
		{
			name: "a v1 grant keeps only the converted grant and its resourceVersion",
			obj:  func() any { rg := v1Grant(g); rg.ObjectMeta = *full(); return rg }(),
			want: &cachedGrant{Grant: g, ResourceVersion: "42"},
		},
		{
			name: "a v1beta1 grant is cached like v1",
			obj:  func() any { rg := v1beta1Grant(g); rg.ObjectMeta = *full(); return rg }(),
			want: &cachedGrant{Grant: g, ResourceVersion: "42"},
		},
		{
			name: "an already cached grant is unchanged",
			obj:  &cachedGrant{Grant: g, ResourceVersion: "42"},
			want: &cachedGrant{Grant: g, ResourceVersion: "42"},
		},
		{name: "a tombstone passes through", obj: tombstone, want: tombstone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toCached(tt.obj)
			if err != nil {
				t.Fatalf("toCached() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("toCached() = %+v\nwant        %+v", got, tt.want)
			}
		})
	}
}

func TestCachedGrantDeepCopy(t *testing.T) {
	orig := cached(grant(claimsFromTest, fooBackup))
	cp := orig.DeepCopyObject().(*cachedGrant)
	if !reflect.DeepEqual(cp, orig) {
		t.Fatalf("DeepCopyObject() = %+v, want %+v", cp, orig)
	}
	cp.Grant.From[0].Namespace = "changed"
	cp.Grant.To[0].Name = "changed"
	if orig.Grant.From[0].Namespace != "test" || orig.Grant.To[0].Name != "foo-backup" {
		t.Errorf("changing the copy changed the original: %+v", orig.Grant)
	}
}

func TestIndexByTarget(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{
			name: "a grant is indexed by its namespace and target group and kind",
			obj:  cached(grant(claimsFromTest, fooBackup)),
			want: []string{"prod/snapshot.storage.k8s.io/VolumeSnapshot"},
		},
		{
			name: "to entries of the same group and kind share one key",
			obj:  cached(grant(claimsFromTest, fooBackup, to(snapshotGroup, snapshotKind, "other"), to("", "Secret", ""))),
			want: []string{"prod/snapshot.storage.k8s.io/VolumeSnapshot", "prod//Secret"},
		},
		{
			name: "an object that is not a cached grant is not indexed",
			obj:  v1Grant(grant(claimsFromTest, fooBackup)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := indexByTarget(tt.obj)
			if err != nil {
				t.Fatalf("indexByTarget() error = %v", err)
			}
			if len(got) != 0 || len(tt.want) != 0 {
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("indexByTarget() = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestCheckReadsOnlyTheTargetIndex(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers())
	for _, g := range []Grant{
		grant(named("secrets"), claimsFromTest, to("", "Secret", "")),
		grant(named("other-namespace"), inNamespace("staging"), claimsFromTest, fooBackup),
		grant(named("snapshots"), claimsFromTest, everySnapshot),
	} {
		if err := indexer.Add(cached(g)); err != nil {
			t.Fatal(err)
		}
	}
	if d := check(indexer, claimUsesSnapshot()); d.Grant != "prod/snapshots" {
		t.Errorf("check() = %+v, want allowed by prod/snapshots", d)
	}
	staging := claimUsesSnapshot(func(r *Reference) { r.ToNamespace = "staging" })
	if d := check(indexer, staging); d.Grant != "staging/other-namespace" {
		t.Errorf("check() = %+v, want allowed by staging/other-namespace", d)
	}
	if d := check(indexer, claimUsesSnapshot(func(r *Reference) { r.ToNamespace = "dev" })); d.Reason != ReasonNotGranted {
		t.Errorf("check() = %+v, want not granted", d)
	}
}
