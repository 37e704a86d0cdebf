package sourceuse

// Adversarial review of issue 24 (commits fe8dc8b and 0b382cf): AnyPending
// must answer what "one of Pending's claims counts" answered, stopping at
// the first that counts and judging nothing when the link cache cannot be
// read. Every world of a small alphabet is built, every answer compared
// with Pending's, for predicates that count any subset of the claims.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse/sourceusetest"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// review24bLetter is a claim of the alphabet: in namespace, naming its
// source with ref (spec.dataSource too when ds), provisioned or not.
type review24bLetter struct {
	name, namespace string
	ref             v1.TypedObjectReference
	ds              bool
	provisioned     bool
	provisioner     string
}

func review24bStr(s string) *string { return &s }

func review24bLetters() []review24bLetter {
	snap := review24bStr(datasource.SnapshotGroup)
	shapes := []review24bLetter{
		{name: "ds", namespace: "prod", ref: v1.TypedObjectReference{APIGroup: snap, Kind: datasource.SnapshotKind, Name: "snap"}, ds: true},
		{name: "ownns", namespace: "prod", ref: v1.TypedObjectReference{APIGroup: snap, Kind: datasource.SnapshotKind, Name: "snap", Namespace: review24bStr("prod")}},
		{name: "refns", namespace: "test", ref: v1.TypedObjectReference{APIGroup: snap, Kind: datasource.SnapshotKind, Name: "snap", Namespace: review24bStr("prod")}},
		{name: "link", namespace: "test", ref: v1.TypedObjectReference{APIGroup: snap, Kind: datasource.LinkKind, Name: "to-snap"}},
		{name: "clone", namespace: "prod", ref: v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: "data"}, ds: true},
		{name: "clonens", namespace: "test", ref: v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: "data", Namespace: review24bStr("prod")}},
	}
	var out []review24bLetter
	for _, s := range shapes {
		for _, provisioned := range []bool{false, true} {
			for _, prov := range []string{"", "other.example.com"} {
				l := s
				l.provisioned, l.provisioner = provisioned, prov
				out = append(out, l)
			}
		}
	}
	return out
}

// review24bLinkAnswers is a link cache whose two reads may fail.
type review24bLinkAnswers struct {
	links              linkcachetest.Links
	linksToErr, getErr bool
	partial            bool // LinksTo returns its links with the error
}

var review24bErr = errors.New("review24b: cannot read the link cache")

func (l review24bLinkAnswers) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	if l.getErr {
		return nil, review24bErr
	}
	return l.links.GetLink(namespace, name)
}

func (l review24bLinkAnswers) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	links, _ := l.links.LinksTo(namespace, name)
	switch {
	case l.linksToErr && l.partial:
		return links, review24bErr
	case l.linksToErr:
		return nil, review24bErr
	}
	return links, nil
}

// review24bSorted returns an index's claims in name order or its reverse.
type review24bSorted struct {
	cache.Indexer
	reverse bool
}

func (s review24bSorted) ByIndex(name, key string) ([]any, error) {
	objs, err := s.Indexer.ByIndex(name, key)
	slices.SortFunc(objs, func(a, b any) int {
		ka, _ := cache.MetaNamespaceKeyFunc(a)
		kb, _ := cache.MetaNamespaceKeyFunc(b)
		if s.reverse {
			ka, kb = kb, ka
		}
		return strings.Compare(ka, kb)
	})
	return objs, err
}

type review24bGrants referencegrant.Reason

func (g review24bGrants) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: g == review24bGrants(referencegrant.ReasonAllowed), Reason: referencegrant.Reason(g)}
}

// review24bFinder builds the finder of a world: claims from letters, the
// link test/to-snap to prod/snap, and the link cache answering as told.
func review24bFinder(t *testing.T, letters []review24bLetter, links review24bLinkAnswers, gate bool, grant referencegrant.Reason,
	reverse bool) Finder {
	t.Helper()
	var claims []*v1.PersistentVolumeClaim
	var volumes []string
	for i, l := range letters {
		name := fmt.Sprintf("c%d-%s", i, l.name)
		ref := l.ref
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: l.namespace, Name: name, UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))},
			Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: &ref}}
		if l.ds {
			c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: ref.APIGroup, Kind: ref.Kind, Name: ref.Name}
		}
		if l.provisioner != "" {
			c.Annotations = map[string]string{claimsource.AnnStorageProvisioner: l.provisioner}
		}
		if l.provisioned {
			volumes = append(volumes, "pvc-"+name)
		}
		claims = append(claims, c)
	}
	index, pvs := sourceusetest.Caches(t, claims, volumes...)
	links.links = linkcachetest.Links{linkcachetest.Link("test", "to-snap", "prod", "snap")}
	return Finder{Claims: review24bSorted{Indexer: index, reverse: reverse}, Links: links, Volumes: pvs,
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }, Provisioner: "own.example.com",
		Policy: claimsource.Policy{CrossNamespace: gate, Grants: review24bGrants(grant), SnapshotLinks: true, Links: links,
			Driver: claimsource.Driver{Name: "own.example.com"}}}
}

// TestReview24bAnyPendingIsPendingStoppedAtTheFirstThatCounts: for every
// pair of letters (both orders), every use of prod/snap and prod/data,
// every link cache answer, gate and grant answer, and predicates counting
// each subset of the claims or the verdict protection counts, AnyPending
// answers as Pending does, calls its predicate only with Pending's uses,
// in Pending's order, and never again after one counted; with an error it
// reports the error and judges nothing.
func TestReview24bAnyPendingIsPendingStoppedAtTheFirstThatCounts(t *testing.T) {
	sources := []datasource.Source{
		{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"},
		{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ExplicitNamespace: true},
		{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ThroughLink: true},
		{Kind: datasource.ClaimKind, Namespace: "prod", Name: "data"},
		{Kind: datasource.ClaimKind, Namespace: "prod", Name: "data", ExplicitNamespace: true},
	}
	linkModes := []review24bLinkAnswers{{}, {linksToErr: true}, {linksToErr: true, partial: true}, {getErr: true}}
	letters := review24bLetters()
	worlds, found, errs := 0, 0, 0
	for _, src := range sources {
		obj := &metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name}
		for _, links := range linkModes {
			for _, gate := range []bool{false, true} {
				for _, grant := range []referencegrant.Reason{referencegrant.ReasonAllowed, referencegrant.ReasonNotGranted, referencegrant.ReasonUnavailable} {
					for i, a := range letters {
						for _, b := range letters[i:] {
							for _, reverse := range []bool{false, true} {
								f := review24bFinder(t, []review24bLetter{a, b}, links, gate, grant, reverse)
								uses, err := f.Pending(src, obj)
								where := fmt.Sprintf("%s (explicit %v, link %v), links %+v, gate %v, grant %s, claims %s and %s, reverse %v",
									src, src.ExplicitNamespace, src.ThroughLink, links, gate, grant, a.name, b.name, reverse)
								for _, counts := range review24bPredicates() {
									worlds++
									var calls []Use
									got, gotErr := f.AnyPending(src, obj, func(u Use) bool {
										calls = append(calls, u)
										return counts.counts(u)
									})
									if (gotErr != nil) != (err != nil) {
										t.Fatalf("%s, %s: AnyPending error %v, Pending error %v", where, counts.name, gotErr, err)
									}
									if err != nil {
										errs++
										if got || len(calls) > 0 {
											t.Fatalf("%s, %s: with the link cache unreadable AnyPending judged %d uses and answered %v; want nothing judged",
												where, counts.name, len(calls), got)
										}
										continue
									}
									want, stop := false, len(uses)
									for k, u := range uses {
										if counts.counts(u) {
											want, stop = true, k+1
											break
										}
									}
									if got != want {
										t.Fatalf("%s, %s: AnyPending = %v, one of Pending's %d uses counts: %v", where, counts.name, got, len(uses), want)
									}
									if got {
										found++
									}
									if !slices.EqualFunc(calls, uses[:stop], func(x, y Use) bool { return x.Claim == y.Claim && x.Verdict == y.Verdict }) {
										t.Fatalf("%s, %s: AnyPending judged %s, want Pending's uses up to the first that counts, %s",
											where, counts.name, review24bNames(calls), review24bNames(uses[:stop]))
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d answers compared: %d found a use that counts, %d with the link cache unreadable", worlds, found, errs)
	if found == 0 || errs == 0 || found+errs == worlds {
		t.Fatalf("%d answers, %d found, %d errors: the enumeration does not tell the answers apart", worlds, found, errs)
	}
}

// review24bPredicate is a counts function of AnyPending.
type review24bPredicate struct {
	name   string
	counts func(Use) bool
}

// review24bPredicates count every subset of the claims c0 and c1, and the
// verdicts source protection counts.
func review24bPredicates() []review24bPredicate {
	out := []review24bPredicate{{"the verdicts protection counts", func(u Use) bool {
		return u.Verdict.HoldsSource() || u.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable
	}}}
	for set := range 4 {
		out = append(out, review24bPredicate{fmt.Sprintf("claims counted %02b", set), func(u Use) bool {
			i := 0
			if strings.HasPrefix(u.Claim.Name, "c1-") {
				i = 1
			}
			return set&(1<<i) != 0
		}})
	}
	return out
}

func review24bNames(uses []Use) string {
	names := make([]string, len(uses))
	for i, u := range uses {
		names[i] = u.Claim.Name
	}
	return "[" + strings.Join(names, " ") + "]"
}
