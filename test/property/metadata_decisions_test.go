package property

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/util"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse/sourceusetest"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/linkstatus"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook"
	"github.com/xns-csi/csi-provisioner/internal/validator"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// decisions is what every component decides in a world. facts holds each
// decision, rendered, by what was decided ("admit [test/restore-0]"), to
// compare worlds for equality; reach holds the accesses the decisions give
// ("test/restore-0 uses VolumeSnapshot prod/foo-backup"), each with the
// claim that gains it, if any, to check that metadata adds none; crossing
// counts those across namespaces by kind. choices lists, by claim, the
// facts that the claim's tenantChoices may change. grants are the world's
// grants, and answers the grant checks the decisions asked.
type decisions struct {
	facts    map[string]string
	reach    map[string]string
	crossing map[string]int
	choices  map[string][]string
	grants   grantSet
	answers  map[referencegrant.Reference]referencegrant.Decision
}

// The kinds of access the decisions give.
const (
	accessProvision  = "provision"
	accessGrant      = "grant"
	accessProtection = "protection"
	accessLink       = "link status"
	accessWebhook    = "webhook"
	accessValidator  = "validator"
)

var accessKinds = []string{accessProvision, accessGrant, accessProtection, accessLink, accessWebhook, accessValidator}

func (d decisions) note(what, decided string) { d.facts[what] = decided }

// noteChoice notes a decision about claim that its tenantChoices may
// change.
func (d decisions) noteChoice(claim metav1.Object, what, decided string) {
	what += " [" + key(claim) + "]"
	d.note(what, decided)
	d.choices[key(claim)] = append(d.choices[key(claim)], what)
}

// gives records an access of kind, from namespace to namespace, that
// claim (nil: no claim) gains.
func (d decisions) gives(kind, from, to, access string, claim metav1.Object) {
	gainer := ""
	if claim != nil {
		gainer = key(claim)
	}
	d.reach[kind+": "+access] = gainer
	if from != to {
		d.crossing[kind]++
	}
}

// decideAll runs, over the objects of w, every decision of a component that
// authorizes a use across namespaces or protects a source for one. Each
// reads the objects as that component's informer caches hold them (the
// same transforms), so that metadata the caches drop is dropped here too.
func decideAll(t *testing.T, w metaWorld) decisions {
	d := decisions{facts: map[string]string{}, reach: map[string]string{}, crossing: map[string]int{}, choices: map[string][]string{},
		answers: map[referencegrant.Reference]referencegrant.Decision{}}
	for _, g := range w.grants {
		d.grants = append(d.grants, convertGrant(g.ReferenceGrant, g.version))
	}
	d.decideSidecar(t, w)
	d.decideGuard(t, w)
	d.decideValidator(t, w)
	return d
}

// Check decides a grant check with referencegrant.Decide and notes the
// answer. Which references are asked depends on the claims' sources, the
// settings and, for source protection, whose claims they are; the answer
// to each depends on the grants alone.
func (d decisions) Check(ref referencegrant.Reference) referencegrant.Decision {
	decision := d.grants.Check(ref)
	if _, seen := d.answers[ref]; !seen && decision.Allowed && ref.FromNamespace != ref.ToNamespace {
		d.crossing[accessGrant]++
	}
	d.answers[ref] = decision
	return decision
}

// decideSidecar decides as the sidecar: provisioning (Admit, then Decide
// with the class the controller library reads), source protection
// (sourceuse) and the links' status.
func (d decisions) decideSidecar(t *testing.T, w metaWorld) {
	core := cachetrim.Core(driverName)
	claims := cached(t, core, slices.Concat(w.restores, w.sources))
	claimIndex, _ := sourceusetest.Caches(t, claims)
	volumes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, pv := range cached(t, core, w.volumes) {
		if err := volumes.Add(pv); err != nil {
			t.Fatal(err)
		}
	}
	snapshots := snapshotStore{snapshots: cached(t, cachetrim.Snapshot, w.snapshots), contents: cached(t, cachetrim.Content, w.contents)}
	links := linkcachetest.Links(cached(t, cachetrim.Meta, w.links))
	policy := claimsource.Policy{CrossNamespace: w.gate, Grants: d, SnapshotLinks: w.snapshotLinks, Links: links,
		Driver:    claimsource.Driver{Name: driverName, RestoresSnapshots: true, Clones: true, PreventVolumeModeConversion: true},
		Snapshots: snapshots, Claims: corelisters.NewPersistentVolumeClaimLister(claimIndex), Volumes: corelisters.NewPersistentVolumeLister(volumes)}
	for _, c := range claims[:len(w.restores)] {
		src, verdict, err := policy.Admit(c)
		d.verdict("admit", c, src, verdict, err)
		src, verdict, err = policy.Decide(c, util.GetPersistentVolumeClaimClass(c))
		d.verdict("decide", c, src, verdict, err)
	}
	finder := sourceuse.Finder{Claims: claimIndex, Volumes: corelisters.NewPersistentVolumeLister(volumes), VolumeName: volumeName, Policy: policy,
		Provisioner: driverName} // as the sidecar's source protection asks
	if w.snapshotLinks {
		finder.Links = links
	}
	d.pending(finder, snapshots.snapshots, claims[len(w.restores):])
	for _, l := range links {
		d.linkStatus(l, snapshots)
	}
}

// verdict notes a claim's verdict; the claim uses the object it is
// provisioned from.
func (d decisions) verdict(what string, claim *v1.PersistentVolumeClaim, src datasource.Source, v claimsource.Verdict, err error) {
	d.noteChoice(claim, what, fmt.Sprintf("source %s: action %d, %s: %s; uses %s, content %q, error %v",
		src, v.Action, v.Reason, v.Message, v.Uses, v.Content.GetSnapshot().GetSnapshotId()+v.Content.GetVolume().GetVolumeId(), err))
	if err == nil && v.Action == claimsource.Provision && v.Uses.Type() != datasource.None {
		d.gives(accessProvision, claim.Namespace, v.Uses.Namespace, fmt.Sprintf("%s uses %s %s/%s", key(claim), v.Uses.Kind, v.Uses.Namespace, v.Uses.Name), claim)
	}
}

// pending notes, for each use of each source (datasource.Source.Finalizer:
// named in the claim's namespace, with spec.dataSourceRef.namespace,
// through a link), the claims source protection finds pending and their
// verdicts, and the claims that keep the source from being deleted.
func (d decisions) pending(finder sourceuse.Finder, snapshots []*snapv1.VolumeSnapshot, sources []*v1.PersistentVolumeClaim) {
	type use struct {
		src datasource.Source
		obj metav1.Object
	}
	var uses []use
	for _, s := range snapshots {
		src := datasource.Source{APIGroup: snapshotGroup, Kind: snapshotKind, Namespace: s.Namespace, Name: s.Name}
		for _, u := range sourceUses(src) {
			uses = append(uses, use{u, s})
		}
	}
	for _, c := range sources {
		for _, u := range sourceUses(datasource.Source{Kind: datasource.ClaimKind, Namespace: c.Namespace, Name: c.Name}) {
			uses = append(uses, use{u, c})
		}
	}
	for _, u := range uses {
		what := fmt.Sprintf("source protection: %s (explicit namespace %t, through link %t)", u.src, u.src.ExplicitNamespace, u.src.ThroughLink)
		pending, err := finder.Pending(u.src, u.obj)
		d.note(what, fmt.Sprintf("error %v", err))
		for _, p := range pending {
			d.noteChoice(p.Claim, what+" pending", fmt.Sprintf("%d %s", p.Verdict.Action, p.Verdict.Reason))
			if p.Verdict.HoldsSource() {
				d.gives(accessProtection, p.Claim.Namespace, u.src.Namespace, fmt.Sprintf("%s: %s holds %s", what, key(p.Claim), u.src), p.Claim)
			}
		}
	}
}

// sourceUses are the ways a claim can use src, each guarded by its own
// finalizer or sharing one.
func sourceUses(src datasource.Source) []datasource.Source {
	explicit, linked := src, src
	explicit.ExplicitNamespace, linked.ThroughLink = true, true
	if src.Type() == datasource.Snapshot {
		return []datasource.Source{src, explicit, linked}
	}
	return []datasource.Source{src, explicit}
}

// linkStatus notes the conditions the sidecar writes on a link, gathered
// as its controller gathers them.
func (d decisions) linkStatus(l *snapv1alpha1.VolumeSnapshotLink, snapshots snapshotStore) {
	in := linkstatus.Input{Link: l}
	target := claimsource.LinkTarget(l)
	in.Snapshot, in.SnapshotUnreadable = snapshots.GetSnapshot(target.Namespace, target.Name)
	if target.Namespace != l.Namespace {
		in.Grant = d.Check(referencegrant.LinkReference(l.Namespace, target.Namespace, target.Name))
	}
	var conditions []string
	for _, c := range linkstatus.Conditions(in) {
		conditions = append(conditions, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		if c.Type == snapv1alpha1.ConditionAllowed && c.Status == metav1.ConditionTrue {
			d.gives(accessLink, l.Namespace, target.Namespace, fmt.Sprintf("link %s may use %s", key(l), target), nil)
		}
	}
	d.note("link status "+key(l), strings.Join(conditions, "; "))
}

// decideGuard asks the snapshot webhook's DELETE guard, through its HTTP
// handler, about the deletion of every snapshot as the API server stores
// it, metadata included.
func (d decisions) decideGuard(t *testing.T, w metaWorld) {
	claimIndex, _ := sourceusetest.Caches(t, cached(t, snapshotwebhook.GuardedClaim, slices.Concat(w.restores, w.sources)))
	_, volumes := sourceusetest.Caches(t, nil)
	links := linkcachetest.Links(cached(t, cachetrim.Meta, w.links))
	guard := &snapshotwebhook.DeleteGuard{Finder: sourceuse.Finder{Claims: claimIndex, Volumes: volumes, VolumeName: volumeName,
		Policy: claimsource.Policy{CrossNamespace: w.gate, Grants: d}}}
	if w.snapshotLinks {
		guard.Finder.Links, guard.Finder.Policy.SnapshotLinks, guard.Finder.Policy.Links = links, true, links
	}
	handler := &snapshotwebhook.Handler{Admitter: &snapshotwebhook.Admitter{DeleteGuard: guard}}
	for _, s := range w.snapshots {
		allowed, message := deleteSnapshot(t, handler, s)
		d.note("webhook DELETE "+key(s), fmt.Sprintf("allowed %t: %s", allowed, message))
		if !allowed {
			d.gives(accessWebhook, "", s.Namespace, "keeps "+key(s), nil) // only for claims of other namespaces
		}
	}
}

// deleteSnapshot sends the admission review of the deletion of s and
// returns the answer.
func deleteSnapshot(t *testing.T, handler http.Handler, s *snapv1.VolumeSnapshot) (allowed bool, message string) {
	old, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "delete-" + s.UID, Operation: admissionv1.Delete, Namespace: s.Namespace, Name: s.Name,
			Kind:      metav1.GroupVersionKind{Group: snapshotGroup, Version: "v1", Kind: snapshotKind},
			Resource:  metav1.GroupVersionResource{Group: snapshotGroup, Version: "v1", Resource: "volumesnapshots"},
			OldObject: runtime.RawExtension{Raw: old}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The handler logs every denial; the failures say what matters.
	ctx := klog.NewContext(t.Context(), logr.Discard())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/volumesnapshot", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("the webhook answered %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	if review.Response.Result != nil {
		message = review.Response.Result.Message
	}
	return review.Response.Allowed, message
}

// decideValidator decides as the volume-data-source-validator, over its
// claim cache.
func (d decisions) decideValidator(t *testing.T, w metaWorld) {
	links := linkcachetest.Links(cached(t, cachetrim.Meta, w.links))
	policy := claimsource.Policy{CrossNamespace: w.gate, Grants: d, SnapshotLinks: w.snapshotLinks, Links: links}
	for _, c := range cached(t, cachetrim.ClaimSource, w.restores) {
		in := validator.Input{Claim: c}
		in.Source, in.Verdict, in.Invalid = policy.Admit(in.Claim)
		out := validator.Decide(in)
		d.note("validator "+key(c), fmt.Sprintf("%s %s: %s", out.Action, out.Reason, out.Message))
		if out.Action == validator.Quiet {
			to := in.Verdict.Uses.Namespace
			if in.Verdict.Uses.Type() == datasource.None {
				to = c.Namespace
			}
			d.gives(accessValidator, c.Namespace, to, "finds the source of "+key(c)+" fine", c)
		}
	}
}

// cached returns copies of objs as transform leaves them in a cache.
func cached[T runtime.Object](t *testing.T, transform cache.TransformFunc, objs []T) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		got, err := transform(o.DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = got.(T)
	}
	return out
}

// volumeName names a claim's PV as the sidecar does.
func volumeName(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

func key(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// snapshotStore is a snapshot cache over fixed objects.
type snapshotStore struct {
	snapshots []*snapv1.VolumeSnapshot
	contents  []*snapv1.VolumeSnapshotContent
}

func (s snapshotStore) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	i := slices.IndexFunc(s.snapshots, func(o *snapv1.VolumeSnapshot) bool { return o.Namespace == namespace && o.Name == name })
	if i < 0 {
		return nil, nil
	}
	return s.snapshots[i], nil
}

func (s snapshotStore) GetContent(name string) (*snapv1.VolumeSnapshotContent, error) {
	i := slices.IndexFunc(s.contents, func(o *snapv1.VolumeSnapshotContent) bool { return o.Name == name })
	if i < 0 {
		return nil, nil
	}
	return s.contents[i], nil
}
