package referencegrant

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// FuzzDecide checks that the grant rule never panics on any grant or
// reference, and agrees with itself: a grant of either API version decides
// the same, the informer index (check) decides as Decide does over the same
// grants, the order of grants does not matter, an allowing decision names a
// grant in the target's namespace that Allows the reference, and ValidateSpec
// refuses any group with a version in it.
func FuzzDecide(f *testing.F) {
	// grantNs, fromGroup, fromKind, fromNs, toGroup, toKind, toName, noToName,
	// terminating, then the reference: fromNs, toGroup, toKind, toNs, toName.
	type seed struct {
		grantNs, fromGroup, fromKind, fromNs, toGroup, toKind, toName string
		noToName, terminating                                         bool
		refFromNs, refToGroup, refToKind, refToNs, refToName          string
	}
	ok := seed{"prod", "", claimKind, "test", snapshotGroup, snapshotKind, "foo-backup", false, false,
		"test", snapshotGroup, snapshotKind, "prod", "foo-backup"}
	seeds := []seed{ok}
	for _, change := range []func(*seed){
		func(s *seed) { s.toGroup = snapshotGroup + "/v1" },
		func(s *seed) { s.refToGroup = snapshotGroup + "/v1"; s.toGroup = s.refToGroup },
		func(s *seed) { s.toGroup = "Snapshot.storage.k8s.io" },
		func(s *seed) { s.toKind = "volumesnapshot" },
		func(s *seed) { s.toKind = "VolumeSnapshots" },
		func(s *seed) { s.fromKind = "PersistentVolumeClaims" },
		func(s *seed) { s.fromGroup = "core" },
		func(s *seed) { s.fromNs = "Test" },
		func(s *seed) { s.fromNs = "" },
		func(s *seed) { s.grantNs = "test" },
		func(s *seed) { s.toName, s.noToName = "", true },
		func(s *seed) { s.toName = "" },
		func(s *seed) { s.toName = "foo-backup2" },
		func(s *seed) { s.toName = strings.Repeat("a", 254) },
		func(s *seed) { s.terminating = true },
		func(s *seed) { s.refToNs = "test"; s.grantNs = "test" },
		func(s *seed) { s.refToName = "fóó" },
		func(s *seed) { s.toGroup, s.toKind, s.refToGroup, s.refToKind = "a/b", "c", "a", "b/c" },
	} {
		s := ok
		change(&s)
		seeds = append(seeds, s)
	}
	for _, s := range seeds {
		f.Add(s.grantNs, s.fromGroup, s.fromKind, s.fromNs, s.toGroup, s.toKind, s.toName, s.noToName, s.terminating,
			s.refFromNs, s.refToGroup, s.refToKind, s.refToNs, s.refToName)
	}
	f.Fuzz(func(t *testing.T, grantNs, fromGroup, fromKind, fromNs, toGroup, toKind, toName string, noToName, terminating bool,
		refFromNs, refToGroup, refToKind, refToNs, refToName string) {
		g := Grant{Namespace: grantNs, Name: "bar", Terminating: terminating,
			From: []From{{Group: fromGroup, Kind: fromKind, Namespace: fromNs}},
			To:   []To{{Group: toGroup, Kind: toKind, Name: toName}}}
		rg := v1Grant(g)
		if noToName {
			rg.Spec.To[0].Name = nil
		}
		if terminating {
			rg.DeletionTimestamp = &metav1.Time{}
		}
		v1g, v1beta1g := FromV1(rg), FromV1beta1((*gatewayv1beta1.ReferenceGrant)(rg))
		// A second grant in the same namespace that allows every
		// PersistentVolumeClaim in "test" every VolumeSnapshot.
		other := grant(named("abc"), inNamespace(grantNs), claimsFromTest, everySnapshot)
		ref := ClaimReference(refFromNs, refToGroup, refToKind, refToNs, refToName)

		d := Decide([]Grant{v1g, other}, ref)
		if d2 := Decide([]Grant{v1beta1g, other}, ref); d2 != d {
			t.Fatalf("v1 decides %+v, v1beta1 %+v", d, d2)
		}
		if d2 := Decide([]Grant{other, v1g}, ref); d2 != d {
			t.Fatalf("grant order changes the decision: %+v, then %+v", d, d2)
		}
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers())
		for _, obj := range []any{rg, v1Grant(other)} {
			c, err := toCached(obj)
			if err == nil {
				err = indexer.Add(c)
			}
			if err != nil {
				t.Fatalf("caching %+v: %v", obj, err)
			}
		}
		if d2 := check(indexer, ref); d2 != d {
			t.Fatalf("the cache decides %+v, Decide %+v", d2, d)
		}
		switch {
		case d.Allowed != (d.Reason == ReasonAllowed) || d.Message == "":
			t.Fatalf("inconsistent decision %+v", d)
		case d.Allowed && (ref.ToNamespace != grantNs || (!Allows(v1g, ref) && !Allows(other, ref))):
			t.Fatalf("decision %+v for %+v is not backed by a grant", d, ref)
		case terminating && d.Grant == grantNs+"/bar":
			t.Fatalf("a terminating grant allows %+v", ref)
		}
		if strings.Contains(toGroup, "/") && len(ValidateSpec(rg.Spec)) == 0 {
			t.Fatalf("ValidateSpec accepts to.group %q", toGroup)
		}
	})
}
