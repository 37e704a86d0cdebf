package sourceprotection

// Adversarial review of issue 24 (commits fe8dc8b and 0b382cf): inUse
// stopped listing every pending claim of a source (sourceuse.Finder.Pending)
// and asks sourceuse.Finder.AnyPending, which stops at the first claim that
// holds the source. inUse decides whether a protection finalizer may be
// removed, so a wrong "not in use" lets a source be deleted under a pending
// restore or clone. These tests build every small world of a bounded
// alphabet (sources, claims, links, caches, grants, the gate, attempts in
// flight, the deletion order) and compare inUse with the rule it replaced,
// written here from Pending, on two checks in a row.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/deletionorder"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// review24bOldInUse is inUse as it was before fe8dc8b: every pending claim
// is listed, an error of the link cache is "in use", and any claim whose
// verdict holds the source (or whose link became unreadable) keeps it.
func review24bOldInUse(p *Protector, src datasource.Source, obj metav1.Object) bool {
	if p.cfg.InFlight != nil && p.cfg.InFlight.Uses(src) {
		return true
	}
	if src.ThroughLink && p.cfg.Links == nil {
		return true
	}
	uses, err := p.finder().Pending(src, obj)
	if err != nil {
		return true
	}
	for _, u := range uses {
		if u.Verdict.HoldsSource() || u.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable {
			return true
		}
	}
	return false
}

const (
	review24bOwn   = "own.example.com"
	review24bOther = "other.example.com"
)

// review24bDeletion is when the source's deletion was requested, a whole
// second as the API keeps it.
var review24bDeletion = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// The uses of one snapshot (prod/snap) and one claim (prod/data) checked.
var review24bSources = []datasource.Source{
	{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"},
	{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ExplicitNamespace: true},
	{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ThroughLink: true},
	{Kind: datasource.ClaimKind, Namespace: "prod", Name: "data"},
	{Kind: datasource.ClaimKind, Namespace: "prod", Name: "data", ExplicitNamespace: true},
}

// review24bShape is how a claim names its source.
type review24bShape struct {
	name      string
	namespace string
	ds        *v1.TypedLocalObjectReference
	ref       *v1.TypedObjectReference
}

func review24bPtr(s string) *string { return &s }

func review24bSnapRef(name string, namespace *string) *v1.TypedObjectReference {
	return &v1.TypedObjectReference{APIGroup: review24bPtr(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: name, Namespace: namespace}
}

func review24bLinkRef(name string) *v1.TypedObjectReference {
	return &v1.TypedObjectReference{APIGroup: review24bPtr(datasource.SnapshotGroup), Kind: datasource.LinkKind, Name: name}
}

// review24bShapes: every way this review knows for a claim to name prod/snap
// or prod/data (and two that name something else).
var review24bShapes = []review24bShape{
	{name: "ds", namespace: "prod", ds: &v1.TypedLocalObjectReference{APIGroup: review24bPtr(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: "snap"}},
	{name: "both", namespace: "prod", ds: &v1.TypedLocalObjectReference{APIGroup: review24bPtr(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: "snap"},
		ref: review24bSnapRef("snap", nil)},
	{name: "ref", namespace: "prod", ref: review24bSnapRef("snap", nil)},
	{name: "refownns", namespace: "prod", ref: review24bSnapRef("snap", review24bPtr("prod"))},
	{name: "refns", namespace: "test", ref: review24bSnapRef("snap", review24bPtr("prod"))},
	{name: "link", namespace: "test", ref: review24bLinkRef("to-snap")},
	{name: "locallink", namespace: "prod", ref: review24bLinkRef("local-link")},
	{name: "latelink", namespace: "test", ref: review24bLinkRef("late-link")},
	{name: "samelink", namespace: "test", ref: review24bLinkRef("same-link")},
	{name: "clone", namespace: "prod", ds: &v1.TypedLocalObjectReference{Kind: datasource.ClaimKind, Name: "data"}},
	{name: "clonens", namespace: "test", ref: &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: "data", Namespace: review24bPtr("prod")}},
	{name: "cloneownns", namespace: "prod", ref: &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: "data", Namespace: review24bPtr("prod")}},
	{name: "other", namespace: "test", ref: review24bSnapRef("other", review24bPtr("prod"))},
	{name: "otherlink", namespace: "test", ref: review24bLinkRef("to-other")},
}

// review24bState is where a claim stands.
type review24bState int

const (
	review24bPending  review24bState = iota
	review24bPV                      // its PV exists
	review24bDeleting                // deletionTimestamp set
	review24bPVError                 // the PV cache cannot say
	review24bBound                   // spec.volumeName set (not indexed)
)

// review24bWhen is when a claim was created against the deletion request.
type review24bWhen int

const (
	review24bBefore      review24bWhen = iota
	review24bAfter                     // a later second
	review24bSameSeen                  // the same second, seen before the deletion arrived
	review24bSameUnseen                // the same second, not seen yet
	review24bSameNoOrder               // the same second, no deletion order kept
)

// review24bClaim is one letter of the claims' alphabet.
type review24bClaim struct {
	shape       review24bShape
	state       review24bState
	provisioner string
	when        review24bWhen
}

func (c review24bClaim) String() string {
	return fmt.Sprintf("%s/state%d/%q/when%d", c.shape.name, c.state, c.provisioner, c.when)
}

// review24bLinks is how the link cache answers.
type review24bLinks int

const (
	review24bLinksOff     review24bLinks = iota // --cross-namespace-snapshot off
	review24bLinksOK                            // readable
	review24bLinksToErr                         // LinksTo cannot be read (unsynced)
	review24bLinksPartial                       // LinksTo returns links and an error
	review24bGetLinkErr                         // LinksTo found them, GetLink cannot read them
	review24bGetLinkGone                        // LinksTo found them, GetLink finds none
	review24bLinksBothErr                       // neither can be read
	review24bLinksCount   = iota
)

// review24bLinkIndex is a link cache answering as mode says.
type review24bLinkIndex struct {
	links linkcachetest.Links
	mode  review24bLinks
}

var review24bErr = errors.New("review24b: the cache cannot be read")

func (l review24bLinkIndex) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	switch l.mode {
	case review24bGetLinkErr, review24bLinksBothErr:
		return nil, review24bErr
	case review24bGetLinkGone:
		return nil, nil
	}
	return l.links.GetLink(namespace, name)
}

func (l review24bLinkIndex) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	links, _ := l.links.LinksTo(namespace, name)
	switch l.mode {
	case review24bLinksToErr, review24bLinksBothErr:
		return nil, review24bErr
	case review24bLinksPartial:
		return links, review24bErr
	}
	return links, nil
}

func (l review24bLinkIndex) LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return l.links.LinksInto(namespace)
}

// review24bGrants answers every grant check with one reason.
type review24bGrants referencegrant.Reason

func (g review24bGrants) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: g == review24bGrants(referencegrant.ReasonAllowed), Reason: referencegrant.Reason(g)}
}

// review24bVolumes is a PV lister whose answers a world sets per PV name.
type review24bVolumes struct {
	corelisters.PersistentVolumeLister
	exists, broken map[string]bool
}

func (v review24bVolumes) Get(name string) (*v1.PersistentVolume, error) {
	switch {
	case v.broken[name]:
		return nil, review24bErr
	case v.exists[name]:
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

// review24bOrdered returns the claims of an index in name order, or the
// reverse, so that both orders of every pair are checked (the indexer's
// own order is a map's).
type review24bOrdered struct {
	cache.Indexer
	reverse bool
}

func (o review24bOrdered) ByIndex(name, key string) ([]any, error) {
	objs, err := o.Indexer.ByIndex(name, key)
	slices.SortFunc(objs, func(a, b any) int {
		ka, _ := cache.MetaNamespaceKeyFunc(a)
		kb, _ := cache.MetaNamespaceKeyFunc(b)
		if o.reverse {
			return strings.Compare(kb, ka)
		}
		return strings.Compare(ka, kb)
	})
	return objs, err
}

// review24bInFlight is what the attempts in flight hold.
type review24bInFlight int

const (
	review24bNoRegistry review24bInFlight = iota
	review24bNoAttempt
	review24bAttemptOfSrc      // an attempt reads the use checked
	review24bAttemptOfOtherUse // an attempt reads another use of the object
	review24bInFlightCount     = iota
)

// review24bObj is the source object as last seen.
type review24bObj int

const (
	review24bAlive             review24bObj = iota
	review24bDeletedProtected               // deletion requested, waits for the use's finalizer
	review24bDeletedOtherFinal              // deletion requested, the use's finalizer already gone
	review24bObjCount          = iota
)

// review24bConfig is everything of a world but its claims.
type review24bConfig struct {
	src      datasource.Source
	obj      review24bObj
	gate     bool
	grants   referencegrant.Reason
	links    review24bLinks
	inFlight review24bInFlight
	driver   string
	reverse  bool
}

func (c review24bConfig) String() string {
	return fmt.Sprintf("src=%s explicit=%v link=%v obj=%d gate=%v grants=%s links=%d inflight=%d driver=%q reverse=%v",
		c.src, c.src.ExplicitNamespace, c.src.ThroughLink, c.obj, c.gate, c.grants, c.links, c.inFlight, c.driver, c.reverse)
}

// review24bWorld is one world, built afresh for each rule compared: the
// deletion order keeps what it saw, so each rule gets its own.
type review24bWorld struct {
	p       *Protector
	obj     metav1.Object
	volumes review24bVolumes
	claims  []*v1.PersistentVolumeClaim
}

// review24bBuild builds the world of cfg and claims. The deletion order's
// clock moves forward at every reading, as a real clock does.
func review24bBuild(t testing.TB, cfg review24bConfig, letters []review24bClaim) *review24bWorld {
	var tick atomic.Int64
	order := deletionorder.New(func() time.Time {
		return review24bDeletion.Add(time.Duration(tick.Add(1)) * time.Millisecond)
	})
	w := &review24bWorld{volumes: review24bVolumes{exists: map[string]bool{}, broken: map[string]bool{}}}
	target := cfg.src.Target()
	meta := &metav1.ObjectMeta{Namespace: target.Namespace, Name: target.Name, UID: "source", ResourceVersion: "1"}
	claims := make([]*v1.PersistentVolumeClaim, len(letters))
	for i, l := range letters {
		name := fmt.Sprintf("c%d-%s", i, l.shape.name)
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: l.shape.namespace, Name: name, UID: types.UID(name)},
			Spec: v1.PersistentVolumeClaimSpec{DataSource: l.shape.ds, DataSourceRef: l.shape.ref}}
		if l.provisioner != "" {
			c.Annotations = map[string]string{claimsource.AnnStorageProvisioner: l.provisioner}
		}
		switch l.when {
		case review24bBefore:
			c.CreationTimestamp = metav1.NewTime(review24bDeletion.Add(-time.Hour))
		case review24bAfter:
			c.CreationTimestamp = metav1.NewTime(review24bDeletion.Add(time.Minute))
		default:
			c.CreationTimestamp = metav1.NewTime(review24bDeletion)
		}
		switch l.state {
		case review24bPV:
			w.volumes.exists["pvc-"+name] = true
		case review24bDeleting:
			c.DeletionTimestamp = &metav1.Time{Time: review24bDeletion.Add(2 * time.Minute)}
		case review24bPVError:
			w.volumes.broken["pvc-"+name] = true
		case review24bBound:
			c.Spec.VolumeName = "pvc-" + name
		}
		if l.when == review24bSameSeen {
			order.ClaimHandler().OnAdd(c, false)
		}
		claims[i] = c
	}
	// Links are as old as their names say; same-link was created in the
	// second of the deletion request and not seen yet.
	links := linkcachetest.Links{
		linkcachetest.Link("test", "to-snap", "prod", "snap"),
		linkcachetest.Link("prod", "local-link", "", "snap"),
		linkcachetest.Link("test", "late-link", "prod", "snap"),
		linkcachetest.Link("test", "same-link", "prod", "snap"),
		linkcachetest.Link("test", "to-other", "prod", "other"),
	}
	for _, l := range links {
		l.UID = types.UID(l.Namespace + "-" + l.Name)
		switch l.Name {
		case "late-link":
			l.CreationTimestamp = metav1.NewTime(review24bDeletion.Add(time.Minute))
		case "same-link":
			l.CreationTimestamp = metav1.NewTime(review24bDeletion)
		default:
			l.CreationTimestamp = metav1.NewTime(review24bDeletion.Add(-time.Hour))
		}
	}
	if cfg.obj != review24bAlive {
		before := meta.DeepCopy()
		meta.DeletionTimestamp = &metav1.Time{Time: review24bDeletion}
		meta.ResourceVersion = "2"
		meta.Finalizers = []string{"example.com/other"}
		if cfg.obj == review24bDeletedProtected {
			meta.Finalizers = append(meta.Finalizers, cfg.src.Finalizer())
		}
		if !slices.ContainsFunc(letters, func(l review24bClaim) bool { return l.when == review24bSameNoOrder }) {
			order.SourceHandler().OnUpdate(before, meta) // the deletion request arrives
		}
	}
	w.obj, w.claims = meta, claims

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	for _, c := range claims {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	policy := claimsource.Policy{CrossNamespace: cfg.gate, Grants: review24bGrants(cfg.grants), Driver: claimsource.Driver{Name: cfg.driver},
		Order: order}
	pcfg := Config{Claims: review24bOrdered{Indexer: indexer, reverse: cfg.reverse}, Volumes: w.volumes,
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }}
	if cfg.links != review24bLinksOff {
		index := review24bLinkIndex{links: links, mode: cfg.links}
		policy.SnapshotLinks, policy.Links, pcfg.Links = true, index, index
	}
	pcfg.Policy = policy
	if cfg.inFlight != review24bNoRegistry {
		pcfg.InFlight = inflight.New()
	}
	switch cfg.inFlight {
	case review24bAttemptOfSrc:
		pcfg.InFlight.Begin(&inflight.Attempt{Claim: "gone", Source: cfg.src})
	case review24bAttemptOfOtherUse:
		other := cfg.src
		if other.ThroughLink || other.Kind == datasource.ClaimKind {
			other.ThroughLink = false
			other.Kind, other.APIGroup, other.Name = datasource.SnapshotKind, datasource.SnapshotGroup, "snap"
		} else {
			other.ThroughLink, other.ExplicitNamespace = true, false
		}
		pcfg.InFlight.Begin(&inflight.Attempt{Claim: "gone", Source: other})
	}
	// Only cfg and finder are read by inUse: no queues, no goroutines.
	w.p = &Protector{cfg: pcfg}
	return w
}

// review24bCompare checks two decisions in a row on the world of cfg and
// letters, once with inUse and once with the old rule, each in a world of
// its own: the first as built, the second after the first pending claim of
// the world was provisioned (its PV appeared). It returns the answers of
// inUse, and reports a difference.
func review24bCompare(t *testing.T, cfg review24bConfig, letters []review24bClaim) (first, second bool) {
	t.Helper()
	now, old := review24bBuild(t, cfg, letters), review24bBuild(t, cfg, letters)
	var got, want [2]bool
	for step := range 2 {
		got[step] = now.p.inUse(cfg.src, now.obj)
		want[step] = review24bOldInUse(old.p, cfg.src, old.obj)
		if step == 0 {
			for i, l := range letters {
				if l.state == review24bPending {
					name := "pvc-" + string(now.claims[i].UID)
					now.volumes.exists[name], old.volumes.exists[name] = true, true
					break
				}
			}
		}
	}
	if got != want {
		t.Errorf("world %s, claims %v: inUse answers %v at the two checks, the rule it replaced %v", cfg, letters, got, want)
	}
	return got[0], got[1]
}

// review24bLinkModes are the link cache's answers enumerated for src:
// every one for a use through links, else whether links are followed and
// whether their cache can be read (a direct use reads no link).
func review24bLinkModes(src datasource.Source) []review24bLinks {
	if src.ThroughLink {
		return []review24bLinks{review24bLinksOff, review24bLinksOK, review24bLinksToErr, review24bLinksPartial,
			review24bGetLinkErr, review24bGetLinkGone, review24bLinksBothErr}
	}
	return []review24bLinks{review24bLinksOff, review24bLinksOK, review24bLinksBothErr}
}

// review24bConfigs enumerates every config of src until visit returns
// false; driver names the provisioner of the sidecar (claims of others are
// judged with the gate on).
func review24bConfigs(src datasource.Source, visit func(review24bConfig) bool) {
	for obj := range review24bObj(review24bObjCount) {
		for _, gate := range []bool{false, true} {
			for _, g := range []referencegrant.Reason{referencegrant.ReasonAllowed, referencegrant.ReasonNotGranted, referencegrant.ReasonUnavailable} {
				for _, links := range review24bLinkModes(src) {
					for inFlight := range review24bInFlight(review24bInFlightCount) {
						for _, driver := range []string{review24bOwn, ""} {
							if !visit(review24bConfig{src: src, obj: obj, gate: gate, grants: g, links: links, inFlight: inFlight, driver: driver}) {
								return
							}
						}
					}
				}
			}
		}
	}
}

// review24bAlphabet is every claim letter; unless the source waits for
// the use's finalizer while being deleted, the creation time is read by
// nothing, and one suffices.
func review24bAlphabet(obj review24bObj) []review24bClaim {
	var out []review24bClaim
	whens := []review24bWhen{review24bBefore}
	if obj == review24bDeletedProtected {
		whens = []review24bWhen{review24bBefore, review24bAfter, review24bSameSeen, review24bSameUnseen, review24bSameNoOrder}
	}
	for _, shape := range review24bShapes {
		for _, state := range []review24bState{review24bPending, review24bPV, review24bDeleting, review24bPVError, review24bBound} {
			for _, prov := range []string{"", review24bOwn, review24bOther} {
				for _, when := range whens {
					out = append(out, review24bClaim{shape: shape, state: state, provisioner: prov, when: when})
				}
			}
		}
	}
	return out
}

// TestReview24bInUseAsBeforeForEveryClaimAlone: for each use, every
// config with no claim, and with each letter of the alphabet alone.
func TestReview24bInUseAsBeforeForEveryClaimAlone(t *testing.T) {
	for _, src := range review24bSources {
		t.Run(review24bSourceName(src), func(t *testing.T) {
			t.Parallel()
			worlds, held := 0, 0
			review24bConfigs(src, func(cfg review24bConfig) bool {
				if first, _ := review24bCompare(t, cfg, nil); first {
					held++
				}
				worlds++
				if cfg.inFlight != review24bNoAttempt {
					return !t.Failed() // the other attempts answer before any claim is read
				}
				for _, l := range review24bAlphabet(cfg.obj) {
					if first, _ := review24bCompare(t, cfg, []review24bClaim{l}); first {
						held++
					}
					worlds++
				}
				return !t.Failed()
			})
			if t.Failed() {
				return
			}
			t.Logf("%d worlds, %d of them in use at the first check", worlds, held)
			if held == 0 || held == worlds {
				t.Fatalf("%d of %d worlds in use: the enumeration does not tell the rules apart", held, worlds)
			}
		})
	}
}

// review24bSourceName names a use for a subtest.
func review24bSourceName(src datasource.Source) string {
	name := src.Kind
	switch {
	case src.ThroughLink:
		name += "-through-link"
	case src.ExplicitNamespace:
		name += "-explicit"
	}
	return name
}

// review24bPairLetters is the alphabet of the pairs for src: every shape
// that names src's object (the others are never found, which the test of
// single claims checks), pending or with its PV, of no provisioner or
// another one, created before the deletion request or in its second unseen.
func review24bPairLetters(src datasource.Source) []review24bClaim {
	var shapes []string
	switch {
	case src.ThroughLink:
		shapes = []string{"link", "locallink", "latelink", "samelink"}
	case src.Kind == datasource.SnapshotKind:
		shapes = []string{"ds", "both", "ref", "refownns", "refns"}
	default:
		shapes = []string{"clone", "clonens", "cloneownns"}
	}
	var out []review24bClaim
	for _, shape := range review24bShapes {
		if !slices.Contains(shapes, shape.name) {
			continue
		}
		for _, state := range []review24bState{review24bPending, review24bPV} {
			for _, prov := range []string{"", review24bOther} {
				for _, when := range []review24bWhen{review24bBefore, review24bSameUnseen} {
					out = append(out, review24bClaim{shape: shape, state: state, provisioner: prov, when: when})
				}
			}
		}
	}
	return out
}

// TestReview24bInUseAsBeforeForEveryPair: for each use, every pair of
// letters naming the source (in both orders), the source being deleted or
// not, every grant answer and gate, every link cache answer for uses
// through links (the others never read links), with no attempt in flight.
func TestReview24bInUseAsBeforeForEveryPair(t *testing.T) {
	for _, src := range review24bSources {
		t.Run(review24bSourceName(src), func(t *testing.T) {
			t.Parallel()
			letters := review24bPairLetters(src)
			worlds, held, split := 0, 0, 0
			for _, obj := range []review24bObj{review24bAlive, review24bDeletedProtected} {
				for _, gate := range []bool{false, true} {
					for _, g := range []referencegrant.Reason{referencegrant.ReasonAllowed, referencegrant.ReasonNotGranted, referencegrant.ReasonUnavailable} {
						for _, links := range review24bLinkModes(src) {
							cfg := review24bConfig{src: src, obj: obj, gate: gate, grants: g, links: links, inFlight: review24bNoAttempt, driver: review24bOwn}
							for i, a := range letters {
								for _, b := range letters[i:] {
									for _, reverse := range []bool{false, true} {
										cfg.reverse = reverse
										first, second := review24bCompare(t, cfg, []review24bClaim{a, b})
										if first {
											held++
										}
										if first != second {
											split++
										}
										worlds++
									}
								}
							}
							if t.Failed() {
								return
							}
						}
					}
				}
			}
			t.Logf("%d worlds, %d in use at the first check, %d changing between the checks", worlds, held, split)
			if held == 0 || held == worlds || split == 0 {
				t.Fatalf("%d of %d worlds in use, %d changing: the enumeration does not tell the rules apart", held, worlds, split)
			}
		})
	}
}
