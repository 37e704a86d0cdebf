package property

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
)

// defaultSeed makes the property test the same on every run; -seed (or
// PROPERTY_SEED) explores other worlds, and a failure prints the seed that
// reproduces it.
const defaultSeed = 3294

var (
	seedFlag   = flag.Uint64("seed", 0, "seed of the authorization property test (0: $PROPERTY_SEED, else the default)")
	worldsFlag = flag.Int("worlds", 20000, "number of worlds the authorization property test generates")
)

func seed(t *testing.T) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("PROPERTY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PROPERTY_SEED=%q: %v", s, err)
		}
		return v
	}
	return defaultSeed
}

// The reference model. It is written from KEP-3294 ("Implementation", CSI
// external provisioner; "Example flow"; test plan) and the docs
// ("How a cross-namespace restore works", "Guarantees"), not from the code.

const (
	snapshotGroup = "snapshot.storage.k8s.io"
	snapshotKind  = "VolumeSnapshot"
)

// grantSpec is a ReferenceGrant as the model reads it.
type grantSpec struct {
	namespace, name string
	version         string // v1 or v1beta1: the model does not care
	terminating     bool
	from            []gatewayv1.ReferenceGrantFrom
	to              []gatewayv1.ReferenceGrantTo
}

// world is one generated case: a claim naming a snapshot, the grants of the
// cluster and the feature gate.
type world struct {
	claimNamespace string
	// legacy names the snapshot in spec.dataSource instead of
	// spec.dataSourceRef (no namespace possible).
	legacy    bool
	group     *string
	kind      string
	namespace *string // spec.dataSourceRef.namespace
	name      string
	gate      bool
	grants    []grantSpec
}

// modelAllows is KEP-3294's authorization rule: may the claim be restored
// from the VolumeSnapshot it names?
func modelAllows(w world) bool {
	// Only a VolumeSnapshot is restored. The group is the API group alone
	// (docs/cross-namespace-restores.md: "The group is snapshot.storage.k8s.io, not
	// snapshot.storage.k8s.io/v1"); kinds and groups match exactly, as every
	// Kubernetes reference does.
	if w.group == nil || *w.group != snapshotGroup || w.kind != snapshotKind {
		return false
	}
	ns := ""
	if !w.legacy && w.namespace != nil {
		ns = *w.namespace
	}
	// KEP: "If namespace isn't specified: Provision a volume from the
	// snapshot".
	if ns == "" {
		return true
	}
	// KEP: "If CrossNamespaceSourceProvisioning feature gate isn't enabled:
	// Do the existing provisioner behavior", which knows no namespace
	// (docs/provisioner.md, Flags: such a claim is not provisioned).
	if !w.gate {
		return false
	}
	// KEP: allowed "by any ReferenceGrant" in the snapshot's namespace. A
	// namespace named explicitly needs one even when it is the claim's own
	// (KEP test plan, case 4; the docs' table), so no shortcut for ns ==
	// claimNamespace.
	for _, g := range w.grants {
		// docs/guarantees.md: "A grant with a deletionTimestamp allows
		// nothing."
		if g.namespace != ns || g.terminating {
			continue
		}
		if modelFrom(g.from, w.claimNamespace) && modelTo(g.to, w.name) {
			return true
		}
	}
	return false
}

func modelFrom(from []gatewayv1.ReferenceGrantFrom, claimNamespace string) bool {
	for _, f := range from {
		if f.Group == "" && f.Kind == "PersistentVolumeClaim" && string(f.Namespace) == claimNamespace {
			return true
		}
	}
	return false
}

func modelTo(to []gatewayv1.ReferenceGrantTo, name string) bool {
	for _, t := range to {
		if t.Group == snapshotGroup && t.Kind == snapshotKind && (t.Name == nil || *t.Name == "" || string(*t.Name) == name) {
			return true
		}
	}
	return false
}

// The code under test: the claim-level decision provisioning makes,
// claimsource.Policy.Admit, over the grants converted as the grant cache
// converts them and decided by referencegrant.Decide.

type grantSet []referencegrant.Grant

func (g grantSet) Check(ref referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decide(g, ref)
}

func (w world) claim() *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: w.claimNamespace}}
	if w.legacy {
		c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: w.group, Kind: w.kind, Name: w.name}
	} else {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: w.group, Kind: w.kind, Name: w.name, Namespace: w.namespace}
	}
	return c
}

func (g grantSpec) grant() referencegrant.Grant {
	rg := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.namespace, Name: g.name},
		Spec:       gatewayv1.ReferenceGrantSpec{From: g.from, To: g.to},
	}
	if g.terminating {
		now := metav1.Now()
		rg.DeletionTimestamp = &now
	}
	return convertGrant(rg, g.version)
}

// convertGrant converts a ReferenceGrant served as version (v1 or v1beta1)
// as the grant cache converts it.
func convertGrant(rg *gatewayv1.ReferenceGrant, version string) referencegrant.Grant {
	if version == "v1beta1" {
		return referencegrant.FromV1beta1((*gatewayv1beta1.ReferenceGrant)(rg))
	}
	return referencegrant.FromV1(rg)
}

// ourAllows is whether the project restores the claim from the snapshot,
// and what it decided; wrongUse is set when it restores another object than
// the snapshot the claim names.
func ourAllows(w world) (allows bool, detail, wrongUse string) {
	grants := make(grantSet, 0, len(w.grants))
	for _, g := range w.grants {
		grants = append(grants, g.grant())
	}
	policy := claimsource.Policy{CrossNamespace: w.gate, Grants: grants}
	src, verdict, err := policy.Admit(w.claim())
	if err != nil {
		return false, "error: " + err.Error(), ""
	}
	got := verdict.Action == claimsource.Provision && src.Type() == datasource.Snapshot
	if got {
		want := datasource.Source{APIGroup: snapshotGroup, Kind: snapshotKind, Namespace: w.claimNamespace, Name: w.name}
		if !w.legacy && w.namespace != nil && *w.namespace != "" {
			want.Namespace = *w.namespace
		}
		if verdict.Uses.Object() != want { // the object, however the claim spelled its namespace
			wrongUse = fmt.Sprintf("provisions from %+v, want %+v", verdict.Uses, want)
		}
	}
	return got, fmt.Sprintf("action %d, %s: %s", verdict.Action, verdict.Reason, verdict.Message), wrongUse
}

// Generation: mostly the right spellings, often a near miss.

var (
	namespaces     = []string{"test", "prod", "dev"}
	nearNamespaces = []string{"Test", "test ", "tes", "prod-", "pro", "", "default"}
	snapshotNames  = []string{"foo-backup", "bar"}
	nearNames      = []string{"foo-backup2", "Foo-backup", "foo", "foo-backup.", "bar "}
	nearGroups     = []string{"snapshot.storage.k8s.io/v1", "Snapshot.storage.k8s.io", "snapshot.storage.k8s.io.", "snapshot.storage.k8s", "storage.k8s.io", ""}
	nearKinds      = []string{"volumesnapshot", "VolumeSnapshots", "Volumesnapshot", "VolumeSnapshotContent", "VolumeSnapshotLink", ""}
	nearFromKinds  = []string{"PersistentVolumeClaims", "persistentvolumeclaim", "PVC", "VolumeSnapshot"}
	nearFromGroups = []string{"core", "v1", "snapshot.storage.k8s.io"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// maybe returns right with probability 3/4, else a near miss.
func maybe[T any](r *rand.Rand, right T, near []T) T {
	if r.IntN(4) > 0 {
		return right
	}
	return pick(r, near)
}

func newWorld(r *rand.Rand) world {
	w := world{
		claimNamespace: pick(r, namespaces),
		legacy:         r.IntN(10) == 0,
		kind:           maybe(r, snapshotKind, nearKinds),
		name:           pick(r, snapshotNames),
		gate:           r.IntN(8) > 0,
	}
	if r.IntN(12) > 0 {
		g := maybe(r, snapshotGroup, nearGroups)
		w.group = &g
	}
	switch r.IntN(6) {
	case 0: // no namespace
	case 1:
		w.namespace = ptr("")
	case 2:
		w.namespace = ptr(w.claimNamespace)
	default:
		w.namespace = ptr(maybe(r, pick(r, namespaces), nearNamespaces))
	}
	target := w.claimNamespace
	if w.namespace != nil && *w.namespace != "" {
		target = *w.namespace
	}
	for i := range r.IntN(5) {
		w.grants = append(w.grants, newGrant(r, i, w, target))
	}
	return w
}

func newGrant(r *rand.Rand, i int, w world, target string) grantSpec {
	g := grantSpec{
		namespace:   maybe(r, target, append(nearNamespaces, namespaces...)),
		name:        "grant-" + strconv.Itoa(i),
		version:     pick(r, []string{"v1", "v1beta1"}),
		terminating: r.IntN(8) == 0,
	}
	for range 1 + r.IntN(2) {
		g.from = append(g.from, gatewayv1.ReferenceGrantFrom{
			Group:     gatewayv1.Group(maybe(r, "", nearFromGroups)),
			Kind:      gatewayv1.Kind(maybe(r, "PersistentVolumeClaim", nearFromKinds)),
			Namespace: gatewayv1.Namespace(maybe(r, w.claimNamespace, append(nearNamespaces, namespaces...))),
		})
	}
	for range 1 + r.IntN(2) {
		to := gatewayv1.ReferenceGrantTo{
			Group: gatewayv1.Group(maybe(r, snapshotGroup, nearGroups)),
			Kind:  gatewayv1.Kind(maybe(r, snapshotKind, nearKinds)),
		}
		switch r.IntN(4) {
		case 0: // absent: every snapshot
		case 1:
			to.Name = ptr(gatewayv1.ObjectName("")) // empty: every snapshot
		default:
			to.Name = ptr(gatewayv1.ObjectName(maybe(r, w.name, append(nearNames, snapshotNames...))))
		}
		g.to = append(g.to, to)
	}
	return g
}

func (w world) String() string {
	var b strings.Builder
	field := "dataSourceRef"
	if w.legacy {
		field = "dataSource"
	}
	fmt.Fprintf(&b, "claim %s/restore, gate %t, %s {apiGroup: %s, kind: %q, namespace: %s, name: %q}",
		w.claimNamespace, w.gate, field, quoted(w.group), w.kind, quoted(w.namespace), w.name)
	for _, g := range w.grants {
		fmt.Fprintf(&b, "\n  grant %s %q/%q terminating=%t from=[", g.version, g.namespace, g.name, g.terminating)
		for _, f := range g.from {
			fmt.Fprintf(&b, " {group: %q, kind: %q, namespace: %q}", f.Group, f.Kind, f.Namespace)
		}
		b.WriteString(" ] to=[")
		for _, t := range g.to {
			name := "<absent>"
			if t.Name != nil {
				name = strconv.Quote(string(*t.Name))
			}
			fmt.Fprintf(&b, " {group: %q, kind: %q, name: %s}", t.Group, t.Kind, name)
		}
		b.WriteString(" ]")
	}
	return b.String()
}

func quoted(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return strconv.Quote(*s)
}

func ptr[T any](v T) *T { return &v }

// TestAuthorizationMatchesTheKEP generates worlds and checks that the
// project restores a claim from a VolumeSnapshot exactly when the reference
// model allows it. Each world has its own generator, derived from the seed
// and its index, so a failing world is reproduced by the seed alone.
func TestAuthorizationMatchesTheKEP(t *testing.T) {
	s := seed(t)
	allowed, granted, failures := 0, 0, 0
	for i := range *worldsFlag {
		w := newWorld(rand.New(rand.NewPCG(s, uint64(i))))
		want := modelAllows(w)
		got, detail, wrongUse := ourAllows(w)
		if want {
			allowed++
			if !w.legacy && w.namespace != nil && *w.namespace != "" {
				granted++
			}
		}
		if got != want || wrongUse != "" {
			failures++
			t.Errorf("world %d of seed %d (go test ./test/property -run %s -seed %d): project allows %t, model allows %t (%s)%s\n%s",
				i, s, t.Name(), s, got, want, detail, wrongUse, w)
			if failures >= 5 {
				t.Fatalf("stopping after %d failures (seed %d)", failures, s)
			}
		}
	}
	t.Logf("seed %d: %d worlds, %d allowed by the model (%d of them by a grant)", s, *worldsFlag, allowed, granted)
	// The generator must reach both answers, and grants that allow, often
	// enough to mean something.
	if granted < *worldsFlag/20 || allowed > *worldsFlag*19/20 {
		t.Errorf("seed %d: %d of %d worlds allowed; the generator is too one-sided", s, allowed, *worldsFlag)
	}
}
