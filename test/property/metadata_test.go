package property

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
)

// The metadata property (issue 21). In a peer project an annotation that
// tenants could set bypassed its cross-namespace clone authorization
// (CVE-2026-133879). Here: no annotation or label a tenant sets on the
// objects it controls (claims, VolumeSnapshots, VolumeSnapshotLinks,
// ReferenceGrants) widens what a cross-namespace decision allows. The
// decisions are provisioning's (claimsource.Policy Admit and Decide), the
// ReferenceGrant checks they ask, source protection's (sourceuse: which
// pending claims hold a source), the snapshot webhook's DELETE guard, the
// volume-data-source-validator's and the VolumeSnapshotLink status.
//
// Namespaces are the fourth kind of object a tenant may label, but no
// component reads them: no code outside tests lists, gets or watches a
// Namespace, and no RBAC role in deploy/ grants namespaces (kept so by
// TestNoComponentReadsNamespaces). Grants name namespaces by name only.
// VolumeSnapshotContents and PersistentVolumes are cluster-scoped, written
// by the cluster's admins and controllers, not tenants; their annotations
// (allow-volume-mode-change, provisioned-by) are not generated.
//
// Two properties are checked, world by world, against the same world
// without the metadata:
//
//   - No widening: every access a decision gives with the metadata (a
//     claim provisioned from a source, a claim holding a source, a
//     snapshot deletion denied, a link Allowed, a claim's source found
//     fine) it also gives without, and every grant check answers as it
//     does over the grants without metadata. The one exception is bounded
//     by a grant, see tenantChoices.
//   - No change: every decision is the same, except the provisioning and
//     source-protection decisions of a claim that carries one of
//     tenantChoices.

// Annotations Kubernetes puts on claims and volumes for provisioners.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	annMigratedTo             = "pv.kubernetes.io/migrated-to"
)

// tenantChoices are the annotations a tenant legitimately uses to choose
// how its own claim is served; they may change the decisions about the
// claim carrying them:
//
//   - the provisioner annotations record which provisioner serves the
//     claim. Naming another driver opts the claim out of this one: the
//     sidecar's cache keeps only what source protection reads of it, so
//     provisioning may refuse it. Source protection may judge it as its
//     own provisioner would, with the cross-namespace gate on, so that a
//     sidecar with the gate off does not release another driver's
//     restore: such a claim may hold a source it would not hold as this
//     driver's, but only what the same claim holds with the gate on, that
//     is only with a grant from the source's namespace. This is the one
//     widening accepted. The webhook's DELETE guard holds a snapshot only
//     for claims handed to a provisioner, and holds what source protection
//     holds for them: a claim its owner hands over by hand may keep a
//     snapshot, again only with a grant (which the snapshot's owner can
//     revoke; the denial says so).
//   - the beta storage-class annotation is the claim's class, as
//     spec.storageClassName (the controller library reads it first). A
//     clone must use its source's class: choosing it may turn a refusal
//     into a clone, but the claim could name the class in its spec as
//     well, and the use must have been admitted (a grant, if across
//     namespaces) without it.
var tenantChoices = []string{annStorageProvisioner, annBetaStorageProvisioner, v1.BetaStorageClassAnnotation}

// annotationKeys are the annotations Kubernetes, the upstream
// external-provisioner and external-snapshotter, and this project give a
// meaning, and a few that look as if they might.
var annotationKeys = slices.Concat(tenantChoices, datasource.AllowVolumeModeChangeAnnotations, []string{
	annProvisionedBy, annMigratedTo,
	"volume.kubernetes.io/selected-node",
	"volume.kubernetes.io/storage-resizer",
	"volume.kubernetes.io/provisioner-deletion-secret-name",
	"volume.kubernetes.io/provisioner-deletion-secret-namespace",
	"volume.kubernetes.io/controller-modify-secret-name",
	"volume.kubernetes.io/controller-modify-secret-namespace",
	"pv.kubernetes.io/bind-completed",
	"pv.kubernetes.io/bound-by-controller",
	"storage.kubernetes.io/csiProvisionerIdentity",
	"kubectl.kubernetes.io/last-applied-configuration",
	"csi.storage.k8s.io/provisioner-secret-name",
	"csi.storage.k8s.io/provisioner-secret-namespace",
	"csi.storage.k8s.io/fstype",
	"snapshot.storage.kubernetes.io/deletion-secret-name",
	"snapshot.storage.kubernetes.io/deletion-secret-namespace",
	"snapshot.storage.kubernetes.io/volumesnapshot-being-deleted",
	"snapshot.storage.kubernetes.io/volumesnapshot-being-created",
	"snapshot.storage.kubernetes.io/is-default-class",
	"groupsnapshot.storage.kubernetes.io/is-default-class",
	datasource.SnapshotFinalizer, datasource.CloneFinalizer, datasource.LinkSnapshotFinalizer,
	datasource.CrossNamespaceSnapshotFinalizer, datasource.CrossNamespaceCloneFinalizer,
	datasource.InUseAnnotationPrefix + "h-0123456789abcdef0123", datasource.InUseAnnotationPrefix + "overflow",
	"snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection",
	"snapshot.storage.kubernetes.io/volumesnapshot-bound-protection",
	"external-provisioner.volume.kubernetes.io/finalizer",
	plan.LockAnnotation, plan.RequestAnnotation, plan.Finalizer,
	"referencegrant.xns-csi.io/target",
	"gateway.networking.k8s.io/referencegrant",
	"snapshot.storage.k8s.io/allow-cross-namespace",
	"snapshot.storage.kubernetes.io/source-namespace",
	"xns-csi.io/granted",
})

// labelKeys are the labels with a meaning on these objects or on
// namespaces, and some that look as if they might.
var labelKeys = []string{
	v1.LabelMetadataName, v1.LabelHostname, v1.LabelTopologyZone,
	"app.kubernetes.io/managed-by", "app.kubernetes.io/name",
	"csi.storage.k8s.io/drivername", "csi.storage.k8s.io/managed-by",
	"snapshot.storage.kubernetes.io/managed-by",
	"groupsnapshot.storage.k8s.io/volumeGroupSnapshotName",
	"pod-security.kubernetes.io/enforce",
	"gateway.networking.k8s.io/referencegrant",
	"xns-csi.io/granted",
}

// metadataValues are values that mean something to some key or name
// something in the worlds.
var metadataValues = []string{
	"true", "True", "false", "", "1", "yes", "*", "all",
	driverName, "other.example.com", "kubernetes.io/aws-ebs",
	"test", "prod", "dev", snapshotNames[0], sourceClaimName, "link-0", "grant-0", "restore-0",
	"prod/" + snapshotNames[0], "snap-prod", storageClass, "slow", "node-1",
	snapshotGroup, snapshotKind, datasource.ClaimKind, datasource.LinkKind,
}

// tenantMetadata is the annotations and labels a tenant sets on object:
// each meaningful key with probability 1/6 (the tenantChoices 1/20, so
// that most claims are checked for no change at all), and up to two random
// keys. A third of the values are "true", a third meaningful values, a
// third random.
func tenantMetadata(r *rand.Rand, object string) []decoration {
	var out []decoration
	value := func() string {
		switch r.IntN(3) {
		case 0:
			return "true"
		case 1:
			return pick(r, metadataValues)
		}
		return randomString(r)
	}
	for _, label := range []bool{false, true} {
		keys := annotationKeys
		if label {
			keys = labelKeys
		}
		for _, k := range keys {
			if slices.Contains(tenantChoices, k) && r.IntN(20) > 0 || r.IntN(6) > 0 {
				continue
			}
			out = append(out, decoration{object: object, label: label, key: k, value: value()})
		}
	}
	for range r.IntN(3) {
		k := fmt.Sprintf("k%d.example.com/%s", r.IntN(100), randomString(r))
		out = append(out, decoration{object: object, label: r.IntN(2) == 0, key: k, value: value()})
	}
	return out
}

func randomString(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-./_ ÄT"
	b := make([]rune, r.IntN(12))
	for i := range b {
		b[i] = []rune(letters)[r.IntN(len([]rune(letters)))]
	}
	return string(b)
}

var metadataWorldsFlag = flag.Int("metadata-worlds", 500, "number of worlds the metadata property test generates")

// decorationsPerWorld is how many decorated copies of each world are
// compared with it.
const decorationsPerWorld = 4

// TestTenantMetadataWidensNoAccess generates worlds, decorates copies of
// each with tenant metadata, and checks that the decorated copies widen no
// access and change no decision (see tenantChoices).
func TestTenantMetadataWidensNoAccess(t *testing.T) {
	s := seed(t)
	failures, crossing := 0, map[string]int{}
	for i := range *metadataWorldsFlag {
		// Another stream than the authorization test's worlds.
		r := rand.New(rand.NewPCG(s, uint64(i)<<8|1))
		w := newMetaWorld(r)
		base := decideAll(t, w)
		gateOn := sync.OnceValue(func() decisions {
			on := w
			on.gate = true
			return decideAll(t, on)
		})
		for k, n := range base.crossing {
			crossing[k] += n
		}
		for range decorationsPerWorld {
			decorations := w.decorations(r)
			problems := func(decorations []decoration) []string {
				decorated := w.with(decorations)
				return compare(base, decideAll(t, decorated), decorated, decorations, gateOn)
			}
			if len(problems(decorations)) == 0 {
				continue
			}
			decorations = shrink(decorations, func(ds []decoration) bool { return len(problems(ds)) > 0 })
			failures++
			t.Errorf("world %d of seed %d (go test ./test/property -run %s -seed %d):\n%s\nwith %s:\n%s",
				i, s, t.Name(), s, w, strings.Join(stringsOf(decorations), "\n  "), strings.Join(problems(decorations), "\n"))
			if failures >= 3 {
				t.Fatalf("stopping after %d failures (seed %d)", failures, s)
			}
			break // one failure per world
		}
	}
	t.Logf("seed %d: %d worlds; accesses across namespaces in them: %v", s, *metadataWorldsFlag, crossing)
	// Metadata can only be seen to widen nothing where the worlds give
	// access across namespaces often, and refuse it often.
	for _, kind := range accessKinds {
		if crossing[kind] < *metadataWorldsFlag/50 {
			t.Errorf("seed %d: only %d accesses of kind %q across namespaces; the generator is too one-sided", s, crossing[kind], kind)
		}
	}
}

// shrink drops decorations one by one as long as the rest still fail, so
// that a failure names the metadata that matters.
func shrink(decorations []decoration, fails func([]decoration) bool) []decoration {
	for i := 0; i < len(decorations); {
		if rest := slices.Delete(slices.Clone(decorations), i, i+1); fails(rest) {
			decorations = rest
		} else {
			i++
		}
	}
	return decorations
}

// compare returns how got, the decisions of decorated (a world with
// decorations), differ from base, those of the world without them, beyond
// what the decorations may change. gateOn returns the decisions of the
// world without them and with the feature gate on.
func compare(base, got decisions, decorated metaWorld, decorations []decoration, gateOn func() decisions) []string {
	chose, optedOut := map[string]bool{}, map[string]bool{}
	for _, d := range decorations {
		if c, ok := strings.CutPrefix(d.object, "PersistentVolumeClaim "); ok && !d.label && slices.Contains(tenantChoices, d.key) {
			chose[c] = true
		}
	}
	for _, c := range decorated.restores {
		if chose[key(c)] && provisionerOf(c) != driverName {
			optedOut[key(c)] = true
		}
	}
	// The snapshots that source protection holds, in the decorated world,
	// for a claim whose owner chose its provisioner: the DELETE guard
	// holds what source protection holds (a grant decides), and a claim
	// its owner hands to a provisioner by hand is one that provisioner
	// works on, as if the PV controller had handed it.
	heldByChoice := map[string]bool{}
	for access, gainer := range got.reach {
		if _, held, ok := strings.Cut(access, " holds "+snapshotKind+" "); ok && chose[gainer] && strings.HasPrefix(access, accessProtection+": ") {
			heldByChoice[held] = true
		}
	}
	var problems []string
	for _, access := range sortedKeys(got.reach) {
		if _, ok := base.reach[access]; ok {
			continue
		}
		if held, ok := strings.CutPrefix(access, accessWebhook+": keeps "); ok && heldByChoice[held] {
			continue
		}
		// Source protection may judge the claims of other provisioners as
		// if the gate were on (see tenantChoices): a grant still decides.
		if strings.HasPrefix(access, accessProtection+": ") && optedOut[got.reach[access]] {
			if _, ok := gateOn().reach[access]; ok {
				continue
			}
		}
		problems = append(problems, "  WIDENS: "+access)
	}
	for _, ref := range slices.SortedFunc(maps.Keys(got.answers), compareReferences) {
		if with, without := got.answers[ref], base.grants.Check(ref); with != without {
			if with.Allowed {
				problems = append(problems, fmt.Sprintf("  WIDENS: grant check %+v", ref))
			}
			problems = append(problems, fmt.Sprintf("  changes grant check %+v:\n    without: %+v\n    with:    %+v", ref, without, with))
		}
	}
	exempt := map[string]bool{}
	for held := range heldByChoice {
		exempt["webhook DELETE "+held] = true
	}
	for c := range chose {
		for _, what := range slices.Concat(base.choices[c], got.choices[c]) {
			exempt[what] = true
		}
	}
	for _, what := range sortedKeys(base.facts, got.facts) {
		b, inBase := base.facts[what]
		g, inGot := got.facts[what]
		if (b != g || inBase != inGot) && !exempt[what] {
			problems = append(problems, fmt.Sprintf("  changes %s:\n    without: %s\n    with:    %s", what, orUndecided(b, inBase), orUndecided(g, inGot)))
		}
	}
	return problems
}

// provisionerOf is the provisioner a claim is handed to, as the PV
// controller and the controller library read it.
func provisionerOf(c *v1.PersistentVolumeClaim) string {
	if name, ok := c.Annotations[annStorageProvisioner]; ok {
		return name
	}
	return c.Annotations[annBetaStorageProvisioner]
}

func orUndecided(decided string, ok bool) string {
	if !ok {
		return "(not decided)"
	}
	return decided
}

func compareReferences(a, b referencegrant.Reference) int {
	return strings.Compare(fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b))
}

func sortedKeys[V any](ms ...map[string]V) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func stringsOf[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}
