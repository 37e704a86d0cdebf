package datasource

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// hostileSource is a hand-written malformed (or nearly right) data source
// for the fuzz corpus: spec.dataSourceRef, or spec.dataSource when legacy.
type hostileSource struct {
	group            string
	noGroup          bool // apiGroup nil
	kind, name       string
	namespace        string
	noNamespace      bool // namespace nil
	legacy           bool // spec.dataSource instead
	alsoLegacyTarget bool // spec.dataSource too, naming the same object
}

// hostileSources are the seed corpus of FuzzResolve; the claim is in
// namespace "test".
var hostileSources = []hostileSource{
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: "prod"},
	{group: SnapshotGroup, kind: "", name: "foo-backup", namespace: "prod"},                                   // empty kind
	{group: SnapshotGroup + "/v1", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},                 // the KEP's spelling
	{group: SnapshotGroup + "/v1", kind: SnapshotKind, name: "foo-backup", legacy: true},                      // ... in dataSource
	{group: "Snapshot.Storage.K8s.IO", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},             // uppercase group
	{group: SnapshotGroup + ".", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},                   // trailing dot
	{group: "." + SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: "prod"},                   // leading dot
	{group: "snapshot..storage.k8s.io", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},            // empty label
	{group: "/", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},                                   // only a slash
	{noGroup: true, kind: SnapshotKind, name: "foo-backup", namespace: "prod"},                                // nil apiGroup
	{group: SnapshotGroup, kind: "volumesnapshot", name: "foo-backup", namespace: "prod"},                     // lowercase kind
	{group: SnapshotGroup, kind: "VolumeSnapshots", name: "foo-backup", namespace: "prod"},                    // plural kind
	{group: SnapshotGroup, kind: "VolumeSnapshotContent", name: "foo-backup", namespace: "prod"},              // unknown kind
	{group: "example.com", kind: "Unknown", name: "x"},                                                        // a populator's kind
	{group: SnapshotGroup, kind: SnapshotKind, name: strings.Repeat("a", 253), namespace: "prod"},             // longest name
	{group: SnapshotGroup, kind: SnapshotKind, name: strings.Repeat("a", 254), namespace: "prod"},             // too long
	{group: strings.Repeat("g", 254) + ".io", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},      // too long group
	{group: SnapshotGroup, kind: SnapshotKind, name: "fóó-backüp", namespace: "prød"},                         // unicode
	{group: "snapshot.storage.k8s.іо", kind: SnapshotKind, name: "foo-backup", namespace: "prod"},             // Cyrillic look-alikes
	{group: SnapshotGroup, kind: "Volume\x00Snapshot", name: "foo\nbackup", namespace: "prod\t"},              // control characters
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: "test"},                         // the claim's own namespace
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: ""},                             // empty namespace
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", noNamespace: true},                         // no namespace
	{group: SnapshotGroup, kind: SnapshotKind, name: "", namespace: "prod"},                                   // empty name
	{group: "", kind: "", name: "", noNamespace: true},                                                        // empty reference
	{group: "", kind: "", name: "", namespace: "prod"},                                                        // only a namespace
	{group: "", kind: ClaimKind, name: "src", namespace: "prod"},                                              // clone across namespaces
	{group: "core", kind: ClaimKind, name: "src"},                                                             // "core" is not the core group
	{group: SnapshotGroup, kind: LinkKind, name: "link", namespace: "prod"},                                   // link in another namespace
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: "prod", alsoLegacyTarget: true}, // dataSource differs
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", noNamespace: true, alsoLegacyTarget: true}, // dataSource agrees
	{group: SnapshotGroup, kind: SnapshotKind, name: "../prod/foo-backup"},                                    // path in the name
	{group: SnapshotGroup, kind: SnapshotKind, name: "foo-backup", namespace: "PROD"},                         // uppercase namespace
}

// fuzzClaim builds the claim a fuzz input describes.
func fuzzClaim(claimNamespace string, s hostileSource) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: claimNamespace}}
	var group, namespace *string
	if !s.noGroup {
		group = &s.group
	}
	if !s.noNamespace {
		namespace = &s.namespace
	}
	if s.legacy || s.alsoLegacyTarget {
		c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: group, Kind: s.kind, Name: s.name}
	}
	if !s.legacy {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: group, Kind: s.kind, Name: s.name, Namespace: namespace}
	}
	return c
}

// FuzzResolve checks that Resolve, ValidateClaimSources and ValidateGroup
// never panic on any data source, and what Resolve promises: the source is
// in the claim's namespace unless dataSourceRef names one (and then needs a
// grant), a group with a version is refused, every error is an
// InvalidError, and every spelling Resolve refuses ValidateClaimSources
// refuses too.
func FuzzResolve(f *testing.F) {
	for _, s := range hostileSources {
		f.Add("test", s.group, s.noGroup, s.kind, s.name, s.namespace, s.noNamespace, s.legacy, s.alsoLegacyTarget)
	}
	f.Fuzz(func(t *testing.T, claimNamespace, group string, noGroup bool, kind, name, namespace string, noNamespace, legacy, alsoLegacy bool) {
		s := hostileSource{group: group, noGroup: noGroup, kind: kind, name: name, namespace: namespace,
			noNamespace: noNamespace, legacy: legacy, alsoLegacyTarget: alsoLegacy}
		claim := fuzzClaim(claimNamespace, s)
		src, err := Resolve(claim)
		invalid := ValidateClaimSources(claim.Spec)
		groupErrs := ValidateGroup(field.NewPath("apiGroup"), group)
		if strings.Contains(group, "/") && len(groupErrs) == 0 {
			t.Fatalf("ValidateGroup(%q) accepts a group with a version", group)
		}
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Message == "" {
				t.Fatalf("Resolve error %v (%T) is not an InvalidError with a message", err, err)
			}
			if len(groupErrs) > 0 && !noGroup && len(invalid) == 0 {
				t.Fatalf("Resolve refuses group %q (%v), ValidateClaimSources accepts it", group, err)
			}
			return
		}
		if !noGroup && len(groupErrs) > 0 {
			t.Fatalf("Resolve accepts group %q that ValidateGroup refuses: %v", group, groupErrs)
		}
		explicit := !legacy && !noNamespace && namespace != ""
		switch {
		case explicit && (src.Namespace != namespace || !src.NeedsGrant()):
			t.Fatalf("dataSourceRef.namespace %q resolved to %+v: want that namespace, needing a grant", namespace, src)
		case !explicit && (src.Namespace != claimNamespace || src.NeedsGrant()):
			t.Fatalf("a source without namespace resolved to %+v: want the claim's namespace %q, no grant", src, claimNamespace)
		case src.Name != name || src.Kind != kind:
			t.Fatalf("resolved to %+v, want kind %q name %q", src, kind, name)
		}
		_ = src.String()
	})
}
