//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	gatewayGroup = "gateway.networking.k8s.io"
	// grantCRD is the ReferenceGrant CRD that ensureGrantCRD installs.
	grantCRD = "referencegrants." + gatewayGroup
	// sidecarClusterRole is the ClusterRole of deploy/rbac.yaml that the
	// sidecars' ServiceAccount is bound to.
	sidecarClusterRole = "external-provisioner-runner"
)

// testGrantWatchLost: a sidecar whose ReferenceGrant watch ended and cannot
// be re-established stops trusting its last copy of the grants. The
// sidecar's ServiceAccount loses the permission to read grants and the API
// server stops serving gateway.networking.k8s.io/v1, which ends every open
// v1 watch; the grant is then deleted. A new claim naming the grant's
// snapshot is refused as "cannot check" rather than provisioned from the
// stale cache. Once the permission and the version are back, the sidecar
// relists, refuses the claim for want of a grant, and provisions it as soon
// as a grant exists again.
func testGrantWatchLost(t *testing.T) {
	ensureGrantCRD(t)
	ctx := ctxFor(t)
	class := storageClass(t, "watch-lost", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "snap", "watched data")
	grant(t, prod, "allow", test, "snap")
	createPVC(t, test, "first", class, restoring(prod, "snap"))
	waitBound(t, test, "first") // the grant cache works

	restore := cutGrantWatch(t)
	// v1 is not served any more; v1beta1 is the same objects.
	if err := world.Gateway.GatewayV1beta1().ReferenceGrants(prod).Delete(ctx, "allow", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createPVC(t, test, "second", class, restoring(prod, "snap"))
	msg := waitRefusal(t, test, "second", `cannot check whether PersistentVolumeClaims in namespace "`+test+`"`)
	if !strings.HasPrefix(msg, "cannot check whether PersistentVolumeClaims in namespace") {
		t.Errorf("the refusal does not start with the grant checker's \"unavailable\" message: %q", msg)
	}
	staysPending(t, test, "second")

	restore()
	waitRefusal(t, test, "second", `no ReferenceGrant in namespace "`+prod+`"`)
	staysPending(t, test, "second")
	grant(t, prod, "allow-again", test, "snap")
	if got := readData(t, world.Local, waitBound(t, test, "second")); got != "watched data" {
		t.Errorf("restored data = %q", got)
	}
}

// cutGrantWatch ends every sidecar's ReferenceGrant watch in a way the real
// API server enforces, and keeps it from being re-established:
//
//   - the rule for referencegrants is removed from the sidecars' ClusterRole,
//     so a relist or a new watch is Forbidden (RBAC is checked per request,
//     so this alone leaves an open watch running);
//   - gateway.networking.k8s.io/v1 of the ReferenceGrant CRD gets
//     served: false (v1beta1 is the storage version, so this is legal). The
//     API server then rebuilds the CRD's storage and ends the watches open on
//     it; requests for v1 are NotFound from then on.
//
// It waits until the API server has no v1 ReferenceGrant watch open. It
// returns a function that restores exactly what it changed; that function
// also runs at cleanup, so a failing case does not leak the change.
func cutGrantWatch(t *testing.T) (restore func()) {
	t.Helper()
	ctx := ctxFor(t)
	if n, err := openWatches(ctx, gatewayGroup, "v1", "referencegrants"); err != nil || n == 0 {
		t.Fatalf("want a v1 ReferenceGrant watch open before cutting it: %d open (err %v)", n, err)
	}

	giveBack := takeRule(t, gatewayGroup, "referencegrants")
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		giveBack()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := setServed(ctx, grantCRD, "v1", true); err != nil {
			t.Errorf("serving %s v1 again: %v", grantCRD, err)
			return
		}
		// The API server switches the CRD's handlers asynchronously; later
		// steps and cases use v1 at once.
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := world.Gateway.GatewayV1().ReferenceGrants("").List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		})
		if err != nil {
			t.Errorf("%s v1 not served again: %v", grantCRD, err)
		}
	}
	t.Cleanup(restore)

	if err := setServed(ctx, grantCRD, "v1", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the API server to end the v1 ReferenceGrant watches", func(ctx context.Context) bool {
		n, err := openWatches(ctx, gatewayGroup, "v1", "referencegrants")
		return err == nil && n == 0
	})
	return restore
}

// takeRule takes the rule for resource of group out of the sidecars'
// ClusterRole. It returns the function that puts the rules back as they
// were; that function also runs at cleanup, and only once.
func takeRule(t *testing.T, group, resource string) (giveBack func()) {
	t.Helper()
	ctx := ctxFor(t)
	role, err := world.Kube.RbacV1().ClusterRoles().Get(ctx, sidecarClusterRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	original := role.DeepCopy().Rules
	rules := slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource)
	})
	if len(rules) == len(original) {
		t.Fatalf("ClusterRole %s has no rule for %s", sidecarClusterRole, resource)
	}
	var once sync.Once
	giveBack = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := setRules(ctx, original); err != nil {
				t.Errorf("restoring ClusterRole %s: %v", sidecarClusterRole, err)
			}
		})
	}
	t.Cleanup(giveBack)
	if err := setRules(ctx, rules); err != nil {
		t.Fatal(err)
	}
	return giveBack
}

// setRules replaces the rules of the sidecars' ClusterRole.
func setRules(ctx context.Context, rules []rbacv1.PolicyRule) error {
	roles := world.Kube.RbacV1().ClusterRoles()
	role, err := roles.Get(ctx, sidecarClusterRole, metav1.GetOptions{})
	if err != nil {
		return err
	}
	role.Rules = rules
	_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
	return err
}

// setServed sets spec.versions[].served of one version of a CRD, with a
// JSON patch that first tests the version's name. It does nothing if the
// version already has that value.
func setServed(ctx context.Context, crd, version string, served bool) error {
	rc := world.Kube.Discovery().RESTClient()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd
	raw, err := rc.Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return err
	}
	var obj struct {
		Spec struct {
			Versions []crdVersion `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	i := slices.IndexFunc(obj.Spec.Versions, func(v crdVersion) bool { return v.Name == version })
	switch {
	case i < 0:
		return fmt.Errorf("CRD %s has no version %s", crd, version)
	case obj.Spec.Versions[i].Served == served:
		return nil
	}
	at := "/spec/versions/" + strconv.Itoa(i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": at + "/name", "value": version},
		{"op": "replace", "path": at + "/served", "value": served},
	})
	if err != nil {
		return err
	}
	_, err = rc.Patch(types.JSONPatchType).AbsPath(path).Body(patch).DoRaw(ctx)
	return err
}

// crdVersion is the part of a CRD's spec.versions[] that setServed reads.
type crdVersion struct {
	Name   string `json:"name"`
	Served bool   `json:"served"`
}

// openWatches is the number of watches on group/version/resource that the
// API server holds open, from its apiserver_longrunning_requests gauge.
func openWatches(ctx context.Context, group, version, resource string) (int, error) {
	raw, err := world.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	labels := []string{`group="` + group + `"`, `version="` + version + `"`, `resource="` + resource + `"`, `verb="WATCH"`}
	n := 0
	scanner := bufio.NewScanner(strings.NewReader(string(raw)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") {
			continue
		}
		if slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(line, l) }) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			return 0, err
		}
		n += int(v)
	}
	return n, scanner.Err()
}

// waitRefusal waits for a ProvisioningFailed event on the claim whose
// message contains part and returns the message; it fails at once if the
// claim gets a volume meanwhile.
func waitRefusal(t *testing.T, namespace, name, part string) string {
	t.Helper()
	var msg, volume string
	waitFor(t, fmt.Sprintf("a ProvisioningFailed event containing %q on %s/%s", part, namespace, name), func(ctx context.Context) bool {
		claim, err := world.Kube.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && claim.Spec.VolumeName != "" {
			volume = claim.Spec.VolumeName
			return true
		}
		events, err := world.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false
		}
		for _, ev := range events.Items {
			if ev.Reason == "ProvisioningFailed" && strings.Contains(ev.Message, part) {
				msg = ev.Message
				return true
			}
		}
		return false
	})
	if volume != "" {
		t.Fatalf("PVC %s/%s was provisioned (bound to %s); want it refused with %q\n%s",
			namespace, name, volume, part, describeEvents(namespace, name))
	}
	return msg
}

// testRestartWithPendingRestore: the sidecar is killed while it restores a
// snapshot across namespaces that is already being deleted, and started
// again. The restarted sidecar keeps the snapshot's finalizer while the claim
// waits for its volume, including before its caches have synced: the claim
// binds with the data, only then does the snapshot go, and the driver holds
// no volume nobody owns.
func testRestartWithPendingRestore(t *testing.T) {
	ctx := ctxFor(t)
	// Killing the sidecar cancels the driver's restore (the local driver
	// gives up when its caller goes), and the replacement restores again:
	// the delay keeps that restore pending well after the restart, and
	// --timeout outlasts it.
	stack, err := world.StartStack(ctx, "restart.csi.example.com", []string{"--restore-delay=40s"})
	if err != nil {
		t.Fatal(err)
	}
	sidecarArgs := []string{"--timeout=90s"}
	first, err := world.StartSidecar(ctx, stack, "first", sidecarArgs...)
	if err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "restart", stack.Name)
	retainSnapshots(t, stack.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, stack, prod, class, "snap", "pending data")
	grant(t, prod, "allow", test, "snap")
	createPVC(t, test, "restore", class, restoring(prod, "snap"))

	deleteProtectedSnapshot(t, ctx, prod)
	first.Kill()
	if _, err := world.StartSidecar(ctx, stack, "restarted", sidecarArgs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s and started its replacement", first.Name)

	// The snapshot must outlive the claim's wait for a volume. The snapshot
	// is read before the volumes: if it is gone and the claim still has no
	// volume afterwards, it went while the claim needed it.
	var snapshotGone bool
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		_, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		gone := apierrors.IsNotFound(err)
		has, err := hasVolume(ctx, test, "restore")
		if err != nil || has {
			return has, nil
		}
		snapshotGone = gone
		return gone, nil
	})
	switch {
	case snapshotGone:
		t.Fatalf("the snapshot was deleted while %s/restore still waited for its volume\n%s", test, describeEvents(test, "restore"))
	case err != nil:
		t.Fatalf("no volume for %s/restore: %v\n%s", test, err, describeEvents(test, "restore"))
	}

	restoredThenSnapshotGone(t, stack, prod, test, "pending data")
}

// retainSnapshots creates the VolumeSnapshotClass that takeSnapshot uses for
// driver (see snapshotClass) with deletion policy Retain, so deleting a
// VolumeSnapshot keeps the snapshot on the driver. The snapshot-controller
// deletes a Delete-policy snapshot's content without waiting for the
// provisioner's finalizer (it only waits for restores within the snapshot's
// own namespace), and only a restore running in the driver holds the
// driver's snapshot back. A case that kills the sidecar mid-restore cancels
// that restore, and the driver's snapshot could then go before the
// replacement sidecar restores again, whatever the sidecar does with the
// finalizer. The class and the contents of its snapshots are deleted after
// the test.
func retainSnapshots(t *testing.T, driver string) {
	t.Helper()
	name := driver + "-snapclass"
	class := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Driver: driver,
		DeletionPolicy: snapv1.VolumeSnapshotContentRetain}
	if _, err := world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		contents, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, c := range contents.Items {
				if c.Spec.VolumeSnapshotClassName != nil && *c.Spec.VolumeSnapshotClassName == name {
					_ = world.Snaps.SnapshotV1().VolumeSnapshotContents().Delete(ctx, c.Name, metav1.DeleteOptions{})
				}
			}
		}
		_ = world.Snaps.SnapshotV1().VolumeSnapshotClasses().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// hasVolume reports whether a PV was created for the claim, bound yet or
// not: the provisioner releases a source once the claim's PV exists.
func hasVolume(ctx context.Context, namespace, name string) (bool, error) {
	pvs, err := world.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(pvs.Items, func(pv v1.PersistentVolume) bool {
		ref := pv.Spec.ClaimRef
		return ref != nil && ref.Namespace == namespace && ref.Name == name
	}), nil
}
