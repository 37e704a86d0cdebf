//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// eventually bounds waits for things the control plane does asynchronously.
// It is generous: it bounds a failure, never the speed of a success.
const eventually = 2 * time.Minute

const snapshotGroup = "snapshot.storage.k8s.io"

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace whose name the API server generates from
// prefix, and deletes it after the test. A generated name never collides
// with an earlier test's namespace that is still terminating.
func namespace(t *testing.T, prefix string) string {
	t.Helper()
	return createNamespace(t, metav1.ObjectMeta{GenerateName: prefix + "-"})
}

func exactNamespace(t *testing.T, name string) string {
	t.Helper()
	return createNamespace(t, metav1.ObjectMeta{Name: name})
}

func createNamespace(t *testing.T, meta metav1.ObjectMeta) string {
	t.Helper()
	ctx := context.Background()
	ns, err := world.Kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: meta}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = world.Kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}) })
	return ns.Name
}

// storageClass creates an Immediate-binding class of driver with Delete
// reclaim policy, named uniquely from prefix.
func storageClass(t *testing.T, prefix, driver string) string {
	t.Helper()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}, Provisioner: driver}
	class, err := world.Kube.StorageV1().StorageClasses().Create(context.Background(), class, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.Kube.StorageV1().StorageClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	return class.Name
}

// snapshotClass makes sure a VolumeSnapshotClass for driver exists.
func snapshotClass(t *testing.T, driver string) string {
	t.Helper()
	name := driver + "-snapclass"
	class := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Driver: driver, DeletionPolicy: snapv1.VolumeSnapshotContentDelete}
	_, err := world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(context.Background(), class, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

type pvcOption func(*v1.PersistentVolumeClaim)

// restoring makes the claim restore snapshot name; namespace "" leaves
// dataSourceRef.namespace unset.
func restoring(namespace, name string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) {
		group := snapshotGroup
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: name}
		if namespace != "" {
			c.Spec.DataSourceRef.Namespace = &namespace
		}
	}
}

func cloning(name string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: name}
	}
}

func populatedBy(group, kind, name string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: &group, Kind: kind, Name: name}
	}
}

func createPVC(t *testing.T, namespace, name, class string, opts ...pvcOption) *v1.PersistentVolumeClaim {
	t.Helper()
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Mi")}},
		},
	}
	for _, o := range opts {
		o(claim)
	}
	created, err := world.Kube.CoreV1().PersistentVolumeClaims(namespace).Create(context.Background(), claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// waitBound waits until the claim is bound and returns its PV.
func waitBound(t *testing.T, namespace, name string) *v1.PersistentVolume {
	t.Helper()
	ctx := ctxFor(t)
	var pv *v1.PersistentVolume
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		claim, err := world.Kube.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || claim.Status.Phase != v1.ClaimBound {
			return false, nil
		}
		pv, err = world.Kube.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("PVC %s/%s not bound: %v\n%s", namespace, name, err, describeEvents(namespace, name))
	}
	return pv
}

// staysPending asserts the claim is still pending and has no volume.
func staysPending(t *testing.T, namespace, name string) {
	t.Helper()
	claim, err := world.Kube.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.Phase != v1.ClaimPending || claim.Spec.VolumeName != "" {
		t.Fatalf("PVC %s/%s is %s bound to %q, want pending", namespace, name, claim.Status.Phase, claim.Spec.VolumeName)
	}
}

// waitEvent waits for an event on the claim with reason whose message
// contains part, and returns the message.
func waitEvent(t *testing.T, namespace, name, reason, part string) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		events, err := world.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, nil
		}
		for _, ev := range events.Items {
			if ev.Reason == reason && strings.Contains(ev.Message, part) {
				msg = ev.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event containing %q on %s/%s\n%s", reason, part, namespace, name, describeEvents(namespace, name))
	}
	return msg
}

func describeEvents(namespace, name string) string {
	events, err := world.Kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, ev := range events.Items {
		fmt.Fprintf(&b, "  %s %s: %s\n", ev.Type, ev.Reason, ev.Message)
	}
	return b.String()
}

// volumeDir is where the local driver keeps the data of a PV.
func volumeDir(s *localenv.Stack, pv *v1.PersistentVolume) string {
	return s.VolumeDir(pv.Spec.CSI.VolumeHandle)
}

func writeData(t *testing.T, s *localenv.Stack, pv *v1.PersistentVolume, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(volumeDir(s, pv), "data.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readData(t *testing.T, s *localenv.Stack, pv *v1.PersistentVolume) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(volumeDir(s, pv), "data.txt"))
	if err != nil {
		t.Fatalf("reading the restored data: %v", err)
	}
	return string(b)
}

// sourceWithSnapshot creates a PVC with content in namespace and a ready
// VolumeSnapshot of it; it returns the snapshot's name.
func sourceWithSnapshot(t *testing.T, s *localenv.Stack, namespace, class, snapshot, content string) {
	t.Helper()
	createPVC(t, namespace, snapshot+"-source", class)
	pv := waitBound(t, namespace, snapshot+"-source")
	writeData(t, s, pv, content)
	takeSnapshot(t, s, namespace, snapshot, snapshot+"-source")
}

// takeSnapshot creates a VolumeSnapshot of a claim and waits until ready.
func takeSnapshot(t *testing.T, s *localenv.Stack, namespace, name, claim string) {
	t.Helper()
	class := snapshotClass(t, s.Name)
	snap := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim},
			VolumeSnapshotClassName: &class},
	}
	if _, err := world.Snaps.SnapshotV1().VolumeSnapshots(namespace).Create(context.Background(), snap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && s.Status != nil && s.Status.ReadyToUse != nil && *s.Status.ReadyToUse, nil
	})
	if err != nil {
		t.Fatalf("VolumeSnapshot %s/%s not ready: %v", namespace, name, err)
	}
}

// grant creates a v1 ReferenceGrant in namespace allowing PVCs of
// fromNamespace to use snapshot ("" = every snapshot there).
func grant(t *testing.T, namespace, name, fromNamespace, snapshot string) {
	t.Helper()
	ensureGrantCRD(t)
	to := gatewayv1.ReferenceGrantTo{Group: snapshotGroup, Kind: "VolumeSnapshot"}
	if snapshot != "" {
		n := gatewayv1.ObjectName(snapshot)
		to.Name = &n
	}
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: gatewayv1.Namespace(fromNamespace)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		},
	}
	if _, err := world.Gateway.GatewayV1().ReferenceGrants(namespace).Create(context.Background(), g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func revoke(t *testing.T, namespace, name string) {
	t.Helper()
	if err := world.Gateway.GatewayV1().ReferenceGrants(namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ensureGrantCRD installs the ReferenceGrant CRD if it is not there yet.
func ensureGrantCRD(t *testing.T) {
	t.Helper()
	if err := world.InstallCRDs(ctxFor(t), "gateway.networking.k8s.io_referencegrants.yaml"); err != nil {
		t.Fatal(err)
	}
}

// metric scrapes a counter with the given storage_class label from a
// sidecar; 0 when absent.
func metric(t *testing.T, sc *localenv.Sidecar, name, class string) float64 {
	t.Helper()
	return scrapeValue(t, sc.HTTPAddr, name+`{storage_class="`+class+`"}`)
}

// scrapeValue returns the value of one series (name and labels, as the
// text exposition writes them) from the /metrics of the HTTP endpoint at
// addr; 0 when absent.
func scrapeValue(t *testing.T, addr, series string) float64 {
	t.Helper()
	v, err := scrapeSeries(addr, series)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// scrapeSeries is scrapeValue's scrape, for a caller that expects the
// endpoint to go away.
func scrapeSeries(addr, series string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // local test endpoint
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	want := series + " "
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		if line := scanner.Text(); strings.HasPrefix(line, want) {
			return strconv.ParseFloat(strings.TrimPrefix(line, want), 64)
		}
	}
	return 0, scanner.Err()
}
