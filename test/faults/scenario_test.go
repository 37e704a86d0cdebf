//go:build faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// eventually bounds a wait for the control plane; it bounds a failure,
// never the speed of a success.
const eventually = 2 * time.Minute

const snapshotGroup = "snapshot.storage.k8s.io"

// kind is what a claim of a burst asks for.
type kind string

const (
	plain    kind = "plain"    // no data source, in dst
	restore  kind = "restore"  // src's snapshot, in src
	xrestore kind = "xrestore" // src's snapshot from dst, which a grant allows
	xdenied  kind = "xdenied"  // src's snapshot from other, which no grant allows
	clone    kind = "clone"    // src's source claim, in src
)

// burstKinds is the mix of a burst, in the order claims are created.
var burstKinds = []kind{plain, restore, xrestore, xdenied, clone}

// claim is a claim of a burst and what the scenario expects of it.
type claim struct {
	kind     kind
	ns, name string
	uid      string
	// created is taken before the create call.
	created time.Time
	// deleted: the scenario deleted the claim; it must leave nothing.
	deleted bool
	// refusedBecause, if set, says the claim must stay unprovisioned with
	// a ProvisioningFailed event containing it (or one of its
	// "|"-separated alternatives).
	refusedBecause string
}

func (c *claim) String() string { return fmt.Sprintf("%s %s/%s", c.kind, c.ns, c.name) }

// volumeName is the name CreateVolume gets for the claim (the sidecar's
// default --volume-name-prefix and UUID length).
func (c *claim) volumeName() string { return "pvc-" + c.uid }

// scenario is one fault scenario: its stack, its class, and three
// namespaces: src holds the source claim "source" and its snapshot "snap",
// dst may restore snap (grant "allow-dst" in src), other may not.
type scenario struct {
	t                 *testing.T
	id                string
	st                *stack
	class             string
	src, dst, other   string
	snapData, current string // the snapshot's data, and the source's now

	mu     sync.Mutex
	claims []*claim
	next   int
}

// scenarioOptions change a scenario's setup.
type scenarioOptions struct {
	noGrant bool     // create no grant for dst
	retain  bool     // the snapshot class retains the driver's snapshots
	sidecar []string // extra sidecar flags
}

// newScenario starts a stack and sets up the namespaces, the class, the
// source with data and its ready snapshot, and the grant.
func newScenario(t *testing.T, id string, opts scenarioOptions) *scenario {
	t.Helper()
	sc := &scenario{t: t, id: id, st: startStack(t, id, opts.sidecar...),
		snapData: "snapshot data of " + id, current: "source data of " + id + " after the snapshot"}
	suffix := fmt.Sprintf("%04d", rand.IntN(10000))
	sc.src, sc.dst, sc.other = id+"-src-"+suffix, id+"-dst-"+suffix, id+"-other-"+suffix
	ctx := context.Background()
	for _, ns := range []string{sc.src, sc.dst, sc.other} {
		must(t)(world.Kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	}
	sc.class = id + "-" + suffix
	must(t)(world.Kube.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: sc.class}, Provisioner: sc.st.name}, metav1.CreateOptions{}))
	policy := snapv1.VolumeSnapshotContentDelete
	if opts.retain {
		policy = snapv1.VolumeSnapshotContentRetain
	}
	must(t)(world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(ctx, &snapv1.VolumeSnapshotClass{
		ObjectMeta: metav1.ObjectMeta{Name: sc.class}, Driver: sc.st.name, DeletionPolicy: policy}, metav1.CreateOptions{}))

	source := sc.createClaim(t, sc.src, "source", nil)
	pv := sc.waitBound(t, source)
	sc.writeData(t, pv, sc.snapData)
	claimName := "source"
	must(t)(world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Create(ctx, &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: sc.src},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claimName},
			VolumeSnapshotClassName: &sc.class},
	}, metav1.CreateOptions{}))
	waitFor(t, "the snapshot to be ready", eventually, func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Get(ctx, "snap", metav1.GetOptions{})
		return err == nil && s.Status != nil && s.Status.ReadyToUse != nil && *s.Status.ReadyToUse
	})
	sc.writeData(t, pv, sc.current)
	if !opts.noGrant {
		sc.grant(t, "allow-dst")
	}
	return sc
}

// must fails the test when the call passed to the function it returns
// failed: must(t)(client.Create(...)).
func must(t *testing.T) func(any, error) {
	t.Helper()
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// retry runs f until it succeeds or eventually passes: the API server may
// be restarting.
func retry(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		last = f(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last error: %v)", what, err, last)
	}
}

// waitFor polls cond every 100 ms until it holds, failing after bound.
func waitFor(t *testing.T, what string, bound time.Duration, cond func(context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, bound, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s", bound, what)
	}
}

// grant creates a v1 ReferenceGrant in src allowing claims of dst to use
// the snapshot "snap".
func (sc *scenario) grant(t *testing.T, name string) {
	t.Helper()
	snap := gatewayv1.ObjectName("snap")
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sc.src},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: gatewayv1.Namespace(sc.dst)}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: snapshotGroup, Kind: "VolumeSnapshot", Name: &snap}},
		},
	}
	retry(t, "creating grant "+name, func(ctx context.Context) error {
		_, err := world.Gateway.GatewayV1().ReferenceGrants(sc.src).Create(ctx, g, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// createClaim creates a 10Mi claim; ref, if set, is its dataSourceRef.
func (sc *scenario) createClaim(t *testing.T, ns, name string, ref *v1.TypedObjectReference) *claim {
	t.Helper()
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &sc.class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Mi")}},
			DataSourceRef:    ref,
		},
	}
	c := &claim{ns: ns, name: name, created: time.Now()}
	retry(t, "creating claim "+ns+"/"+name, func(ctx context.Context) error {
		created, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// An earlier try went through before the API server went away.
			created, err = world.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		}
		if err == nil {
			c.uid = string(created.UID)
		}
		return err
	})
	return c
}

// burst creates n claims, cycling through burstKinds, and records them.
func (sc *scenario) burst(t *testing.T, n int) []*claim {
	t.Helper()
	return sc.burstOf(t, burstKinds, n)
}

// burstOf creates n claims, cycling through kinds, and records them.
func (sc *scenario) burstOf(t *testing.T, kinds []kind, n int) []*claim {
	t.Helper()
	var out []*claim
	for range n {
		sc.mu.Lock()
		i := sc.next
		sc.next++
		sc.mu.Unlock()
		k := kinds[i%len(kinds)]
		name := fmt.Sprintf("%s-%03d", k, i)
		snapshot := func(ns string) *v1.TypedObjectReference {
			group := snapshotGroup
			ref := &v1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "snap"}
			if ns != "" {
				ref.Namespace = &ns
			}
			return ref
		}
		var c *claim
		switch k {
		case plain:
			c = sc.createClaim(t, sc.dst, name, nil)
		case restore:
			c = sc.createClaim(t, sc.src, name, snapshot(""))
		case xrestore:
			c = sc.createClaim(t, sc.dst, name, snapshot(sc.src))
		case xdenied:
			c = sc.createClaim(t, sc.other, name, snapshot(sc.src))
			c.refusedBecause = "no ReferenceGrant"
		case clone:
			c = sc.createClaim(t, sc.src, name, &v1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "source"})
		}
		c.kind = k
		sc.mu.Lock()
		sc.claims = append(sc.claims, c)
		sc.mu.Unlock()
		out = append(out, c)
	}
	return out
}

// deleteClaim deletes a claim of the burst; it must leave no volume.
func (sc *scenario) deleteClaim(t *testing.T, c *claim) {
	t.Helper()
	retry(t, "deleting "+c.String(), func(ctx context.Context) error {
		err := world.Kube.CoreV1().PersistentVolumeClaims(c.ns).Delete(ctx, c.name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	sc.mu.Lock()
	c.deleted = true
	sc.mu.Unlock()
}

// bound counts the burst's claims that have a volume.
func (sc *scenario) bound(ctx context.Context) int {
	n := 0
	for _, ns := range []string{sc.src, sc.dst, sc.other} {
		list, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0
		}
		for _, c := range list.Items {
			if c.Spec.VolumeName != "" && c.Name != "source" {
				n++
			}
		}
	}
	return n
}

func (sc *scenario) waitBound(t *testing.T, c *claim) *v1.PersistentVolume {
	t.Helper()
	var pv *v1.PersistentVolume
	waitFor(t, c.String()+" to be bound", eventually, func(ctx context.Context) bool {
		pvc, err := world.Kube.CoreV1().PersistentVolumeClaims(c.ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != v1.ClaimBound {
			return false
		}
		pv, err = world.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		return err == nil
	})
	return pv
}

func (sc *scenario) writeData(t *testing.T, pv *v1.PersistentVolume, data string) {
	t.Helper()
	path := filepath.Join(sc.st.state, "volumes", pv.Spec.CSI.VolumeHandle, "data.txt")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
