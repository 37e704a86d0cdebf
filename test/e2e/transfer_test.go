//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	generated "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// TestE2ETransfer runs the storage-transfer-controller binary on the shared
// control plane, as the ServiceAccount of deploy/transfer, with the real
// snapshot-controller, csi-snapshotter, PV binder and local driver: seed
// 002's two test plans with the data checked, the refusals, the CRD's CEL
// rules, and the controller killed at every step of a transfer.
func TestE2ETransfer(t *testing.T) {
	ctx := ctxFor(t)
	tc, err := world.StartTransferController(ctx, "transfer", "--retention=2s", "--worker-threads=2", "--v=4")
	if err != nil {
		t.Fatal(err)
	}
	api := transferClient(t)
	class := storageClass(t, "xfer", world.Local.Name)
	t.Run("SnapshotTestPlan", func(t *testing.T) { testTransferSnapshot(t, api, class, nil) })
	t.Run("ClaimTestPlan", func(t *testing.T) { testTransferClaim(t, api, class, nil) })
	t.Run("Refusals", func(t *testing.T) { testTransferRefusals(t, api, class) })
	t.Run("CELRules", func(t *testing.T) { testTransferCEL(t, api) })
	t.Run("ClaimRefusedByAQuota", func(t *testing.T) { testTransferRefusedByQuota(t, api, class) })
	t.Run("TokensInSecrets", func(t *testing.T) { testTransferTokensInSecrets(t, api, class) })
	// The crash tests need a controller whose every API write waits for
	// its client's rate limiter (2 per second), so that the test sees the
	// record of each step and kills the controller before the step's
	// change.
	tc.Kill()
	slow, err := world.StartTransferController(ctx, "transfer-slow", "--retention=2s", "--kube-api-qps=2", "--kube-api-burst=1", "--v=4")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("SnapshotKilledAtEveryStep", func(t *testing.T) { testTransferSnapshot(t, api, class, slow) })
	t.Run("ClaimKilledAtEveryStep", func(t *testing.T) { testTransferClaim(t, api, class, slow) })
	t.Run("RequestDeletedMidTransfer", func(t *testing.T) { testTransferRolledBack(t, api, class, slow) })
	slow.Kill()
	fast, err := world.StartTransferController(ctx, "transfer-fast", "--retention=2s", "--kube-api-qps=200", "--kube-api-burst=400", "--worker-threads=10", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ConcurrentSnapshotTransfers", func(t *testing.T) { testConcurrentTransfers(t, api, class, fast, 50) })
}

// The steps of a snapshot and of a claim transfer whose record the crash
// tests see (docs/transfer.md).
var (
	snapshotSteps = []string{"Begin", "LockSource", "RetainSourceContent", "DeleteSource", "CreateTargetContent",
		"CreateTargetSnapshot", "DeleteSourceContent", "RestoreDeletionPolicy"}
	claimSteps = []string{"Begin", "LockSource", "RetainVolume", "CreateTargetClaim", "DeleteSource", "ReserveVolume",
		"RestoreReclaimPolicy", "ReleaseSource"}
)

func transferClient(t *testing.T) generated.Interface {
	t.Helper()
	config, err := world.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	api, err := generated.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// backendHas reports whether the local driver holds the snapshot or
// volume of handle ("snapshots" or "volumes").
func backendHas(s *localenv.Stack, kind, handle string) bool {
	_, err := os.Stat(filepath.Join(s.State, kind, handle+".json"))
	return err == nil
}

// offer creates the request name in src for kind/source, to be accepted as
// "accept" and named "bar" in the target, and returns the token the
// controller set.
func offer(t *testing.T, api generated.Interface, src, name, kind, source string) string {
	t.Helper()
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: src},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: kind, Name: source},
			AcceptName: "accept", TargetName: "bar"},
	}
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(context.Background(), r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var token string
	waitFor(t, "the controller to set the token of "+src+"/"+name, func(ctx context.Context) bool {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, name, metav1.GetOptions{})
		token = r.Spec.Token
		return err == nil && token != ""
	})
	return token
}

// accept creates the accept "accept" in dst for request src/request.
func accept(t *testing.T, api generated.Interface, dst, src, request, token string) {
	t.Helper()
	a := &transferv1alpha1.StorageTransferAccept{
		ObjectMeta: metav1.ObjectMeta{Name: "accept", Namespace: dst},
		Spec:       transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: src, RequestName: request, RequestToken: token},
	}
	if _, err := api.TransferV1alpha1().StorageTransferAccepts(dst).Create(context.Background(), a, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitTransferGone waits until the request and the accept are deleted
// (seed 002's "confirm deletion of StorageTransfer* resources"). With tc,
// it kills the controller (SIGKILL) and starts it again each time the
// request's write-ahead record names a step not killed at before, and
// returns those steps.
func waitTransferGone(t *testing.T, api generated.Interface, src, dst string, tc *localenv.TransferController) []string {
	t.Helper()
	var killed []string
	start, completed := time.Now(), time.Time{}
	err := wait.PollUntilContextTimeout(ctxFor(t), 20*time.Millisecond, 3*eventually, true, func(ctx context.Context) (bool, error) {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		if err == nil && completed.IsZero() && r.Status.Phase == transferv1alpha1.PhaseCompleted {
			completed = time.Now()
		}
		if apierrors.IsNotFound(err) {
			_, err := api.TransferV1alpha1().StorageTransferAccepts(dst).Get(ctx, "accept", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		}
		if err != nil || tc == nil || r.Status.Record == nil || slices.Contains(killed, r.Status.Record.Step) {
			return false, nil
		}
		killed = append(killed, r.Status.Record.Step)
		tc.Kill()
		if err := tc.Restart(ctx); err != nil {
			return false, err
		}
		return false, nil
	})
	if err != nil {
		r, _ := api.TransferV1alpha1().StorageTransferRequests(src).Get(context.Background(), "move", metav1.GetOptions{})
		t.Fatalf("the transfer did not complete (killed at %v): %v\nrequest status: %+v\n%s", killed, err, r.Status, describeEvents(src, "move"))
	}
	if tc != nil {
		t.Logf("killed the controller at %v", killed)
	} else if !completed.IsZero() {
		// The accept was created just before this wait began.
		t.Logf("accept to Completed: %v", completed.Sub(start).Round(time.Millisecond))
	}
	return killed
}

// testTransferSnapshot is seed 002's VolumeSnapshot test plan: a claim
// with data, a snapshot of it, the transfer, a new claim from the
// transferred snapshot in the target namespace has the data, the
// StorageTransfer objects are gone; and the backend snapshot was never
// copied nor deleted, until the target snapshot is deleted.
func testTransferSnapshot(t *testing.T, api generated.Interface, class string, tc *localenv.TransferController) {
	s := world.Local
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	writeData(t, s, waitBound(t, src, "data"), "seed 002 snapshot "+src)
	takeSnapshot(t, s, src, "snap", "data")
	handle := snapshotHandleOf(t, src, "snap")
	source, err := world.Snaps.SnapshotV1().VolumeSnapshots(src).Get(context.Background(), "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldContent := *source.Status.BoundVolumeSnapshotContentName

	token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "snap")
	accept(t, api, dst, src, "move", token)
	killed := waitTransferGone(t, api, src, dst, tc)
	if tc != nil && !slices.Equal(killed, snapshotSteps) {
		t.Errorf("killed at %v, want at every step %v", killed, snapshotSteps)
	}

	if _, err := world.Snaps.SnapshotV1().VolumeSnapshots(src).Get(context.Background(), "snap", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the source snapshot is still there: %v", err)
	}
	// Nothing is left pointing at the deleted source.
	if _, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(context.Background(), oldContent, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the source's content %s is still there: %v", oldContent, err)
	}
	target, err := world.Snaps.SnapshotV1().VolumeSnapshots(dst).Get(context.Background(), "bar", metav1.GetOptions{})
	if err != nil || target.Status == nil || target.Status.ReadyToUse == nil || !*target.Status.ReadyToUse {
		t.Fatalf("target snapshot %s/bar = %+v, %v; want ready", dst, target, err)
	}
	content, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(context.Background(), *target.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
	if err != nil || content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete ||
		content.Spec.Source.SnapshotHandle == nil || *content.Spec.Source.SnapshotHandle != handle {
		t.Errorf("target content %+v, %v: want backend snapshot %s (not a copy) under the original deletionPolicy Delete", content, err, handle)
	}
	if !backendHas(s, "snapshots", handle) {
		t.Errorf("the backend snapshot %s was deleted by the transfer", handle)
	}
	createPVC(t, dst, "restored", class, restoring("", "bar"))
	if got, want := readData(t, s, waitBound(t, dst, "restored")), "seed 002 snapshot "+src; got != want {
		t.Errorf("restored data %q, want %q", got, want)
	}
	waitEvent(t, dst, "accept", "TransferRetired", "completed")

	if err := world.Snaps.SnapshotV1().VolumeSnapshots(dst).Delete(context.Background(), "bar", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backend snapshot to be deleted with the target snapshot", func(context.Context) bool {
		return !backendHas(s, "snapshots", handle)
	})
}

// testTransferClaim is seed 002's PVC test plan: a claim with data, bound,
// transferred; the target claim's volume has the data (it is the same
// volume), the StorageTransfer objects are gone, the reclaim policy is the
// original again and no volume was created or deleted.
func testTransferClaim(t *testing.T, api generated.Interface, class string, tc *localenv.TransferController) {
	s := world.Local
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	pv := waitBound(t, src, "data")
	writeData(t, s, pv, "seed 002 claim "+src)

	token := offer(t, api, src, "move", transferv1alpha1.KindPersistentVolumeClaim, "data")
	accept(t, api, dst, src, "move", token)
	killed := waitTransferGone(t, api, src, dst, tc)
	if tc != nil && !slices.Equal(killed, claimSteps) {
		t.Errorf("killed at %v, want at every step %v", killed, claimSteps)
	}

	if _, err := world.Kube.CoreV1().PersistentVolumeClaims(src).Get(context.Background(), "data", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the source claim is still there: %v", err)
	}
	moved := waitBound(t, dst, "bar")
	if moved.Name != pv.Name || moved.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("target claim bound to %s (%s), want %s with the original Delete policy", moved.Name, moved.Spec.PersistentVolumeReclaimPolicy, pv.Name)
	}
	if got, want := readData(t, s, moved), "seed 002 claim "+src; got != want {
		t.Errorf("data %q, want %q", got, want)
	}
	if !backendHas(s, "volumes", moved.Spec.CSI.VolumeHandle) {
		t.Errorf("the volume %s is gone from the driver", moved.Spec.CSI.VolumeHandle)
	}
}

// testTransferRefusedByQuota: a ResourceQuota of the target namespace
// refuses the target claim (kube-apiserver's quota admission). The source
// is not deleted: the transfer waits, saying why (issue 23 defect 2), and
// goes on, data and all, once the quota admits the claim.
func testTransferRefusedByQuota(t *testing.T, api generated.Interface, class string) {
	s := world.Local
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	quota := &v1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-claims", Namespace: dst},
		Spec: v1.ResourceQuotaSpec{Hard: v1.ResourceList{v1.ResourcePersistentVolumeClaims: resource.MustParse("0")}}}
	created, err := world.Kube.CoreV1().ResourceQuotas(dst).Create(context.Background(), quota, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Quota admission enforces status.hard, which kube-controller-manager's
	// resourcequota controller writes; the test cluster does not run it
	// (nothing else needs it), so the test writes what it would.
	created.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{v1.ResourcePersistentVolumeClaims: resource.MustParse("0")}}
	if _, err := world.Kube.CoreV1().ResourceQuotas(dst).UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPVC(t, src, "data", class)
	pv := waitBound(t, src, "data")
	writeData(t, s, pv, "refused by a quota "+src)

	token := offer(t, api, src, "move", transferv1alpha1.KindPersistentVolumeClaim, "data")
	accept(t, api, dst, src, "move", token)
	waitRequestReason(t, api, src, "move", plan.ReasonTargetRefused, "forbidden")
	source, err := world.Kube.CoreV1().PersistentVolumeClaims(src).Get(context.Background(), "data", metav1.GetOptions{})
	if err != nil || source.DeletionTimestamp != nil {
		t.Fatalf("the source claim is %+v, %v; want it intact while the target namespace refuses the claim", source, err)
	}

	if err := world.Kube.CoreV1().ResourceQuotas(dst).Delete(context.Background(), "no-claims", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller tries again within 30 s; a label on the request makes
	// it try now.
	waitFor(t, "a label on the request", func(ctx context.Context) bool {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		if err != nil {
			return false
		}
		r.Labels = map[string]string{"quota": "lifted"}
		_, err = api.TransferV1alpha1().StorageTransferRequests(src).Update(ctx, r, metav1.UpdateOptions{})
		return err == nil // a conflict with the controller's write: again
	})
	waitTransferGone(t, api, src, dst, nil)
	moved := waitBound(t, dst, "bar")
	if got, want := readData(t, s, moved), "refused by a quota "+src; got != want {
		t.Errorf("data %q, want %q", got, want)
	}
}

// testTransferTokensInSecrets (issue 23 defect 11): the request and the
// accept keep the token in Secrets of their namespaces. Until the source
// namespace binds the controller's token Secrets role, the request is told
// TokenSecretForbidden; once both namespaces bind it, the claim is
// transferred with its data, and the request's spec never holds the token.
func testTransferTokensInSecrets(t *testing.T, api generated.Interface, class string) {
	ctx := context.Background()
	s := world.Local
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	pv := waitBound(t, src, "data")
	writeData(t, s, pv, "token in a secret "+src)
	token := rand.Text() // 26 base32 characters: 130 bits, base64url too
	for _, ns := range []string{src, dst} {
		secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "transfer-token", Namespace: ns},
			Type: transferv1alpha1.TokenSecretType, StringData: map[string]string{transferv1alpha1.TokenSecretKey: token}}
		if _, err := world.Kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ref := &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}
	r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: src},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
			AcceptName: "accept", TargetName: "bar", TokenSecretRef: ref}}
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request to be told "+match.ReasonTokenSecretForbidden, func(ctx context.Context) bool {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		return err == nil && conditionReason(r.Status.Conditions, transferv1alpha1.ConditionMatched) == match.ReasonTokenSecretForbidden
	})
	for _, ns := range []string{src, dst} {
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "storage-transfer-token-secrets", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: localenv.TransferServiceAccount, Namespace: "default"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "storage-transfer-controller-token-secrets"}}
		if _, err := world.Kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept", Namespace: dst},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: src, RequestName: "move", RequestTokenSecretRef: ref}}
	// The accept's creation wakes the request.
	if _, err := api.TransferV1alpha1().StorageTransferAccepts(dst).Create(ctx, a, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTransferGone(t, api, src, dst, nil)
	moved := waitBound(t, dst, "bar")
	if got, want := readData(t, s, moved), "token in a secret "+src; got != want {
		t.Errorf("data %q, want %q", got, want)
	}
}

// snapshotHandleOf is the backend snapshot of a ready VolumeSnapshot.
func snapshotHandleOf(t *testing.T, namespace, name string) string {
	t.Helper()
	ctx := context.Background()
	snap, err := world.Snaps.SnapshotV1().VolumeSnapshots(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	content, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *snap.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
	if err != nil || content.Status == nil || content.Status.SnapshotHandle == nil {
		t.Fatalf("content of %s/%s: %+v, %v", namespace, name, content, err)
	}
	return *content.Status.SnapshotHandle
}

// testTransferRefusals: each refusal is a condition with a clear message,
// and nothing is changed.
func testTransferRefusals(t *testing.T, api generated.Interface, class string) {
	s := world.Local
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	waitBound(t, src, "data")
	takeSnapshot(t, s, src, "snap", "data")

	t.Run("TokenMismatch", func(t *testing.T) {
		offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "snap")
		accept(t, api, dst, src, "move", "bm90LXRoZS10b2tlbi1hdC1hbGw")
		// Told as if the request did not exist: without the token, the
		// target learns nothing of the source namespace.
		waitAcceptReason(t, api, dst, "accept", match.ReasonRequestNotFound)
		waitEvent(t, dst, "accept", match.ReasonRequestNotFound, "has this token")
		snap, _ := world.Snaps.SnapshotV1().VolumeSnapshots(src).Get(context.Background(), "snap", metav1.GetOptions{})
		if _, locked := snap.Annotations[plan.LockAnnotation]; locked {
			t.Error("a refused transfer locked the source")
		}
		deleteTransfer(t, api, src, "move", dst, "accept")
	})
	t.Run("AcceptNamesAnotherNamespace", func(t *testing.T) {
		token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "snap")
		accept(t, api, dst, dst, "move", token) // the request is in src, not dst
		waitAcceptReason(t, api, dst, "accept", match.ReasonRequestNotFound)
		deleteTransfer(t, api, src, "move", dst, "accept")
	})
	t.Run("SourceNotFound", func(t *testing.T) {
		token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "nothing")
		accept(t, api, dst, src, "move", token)
		waitRequestReason(t, api, src, "move", plan.ReasonSourceNotFound, `VolumeSnapshot `+src+`/nothing not found`)
		deleteTransfer(t, api, src, "move", dst, "accept")
	})
	t.Run("TargetNameTaken", func(t *testing.T) {
		missing := "missing" // a snapshot of no claim never becomes ready: it only takes the name
		taken := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: dst},
			Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &missing}}}
		if _, err := world.Snaps.SnapshotV1().VolumeSnapshots(dst).Create(context.Background(), taken, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "snap")
		accept(t, api, dst, src, "move", token)
		waitRequestReason(t, api, src, "move", plan.ReasonTargetNameTaken, "already exists")
		deleteTransfer(t, api, src, "move", dst, "accept")
	})
	t.Run("ClaimUsedByAPod", func(t *testing.T) {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: src}, Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			Volumes:    []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		if _, err := world.Kube.CoreV1().Pods(src).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		token := offer(t, api, src, "move", transferv1alpha1.KindPersistentVolumeClaim, "data")
		accept(t, api, dst, src, "move", token)
		waitRequestReason(t, api, src, "move", plan.ReasonSourceInUse, "used by pod app")
		claim, err := world.Kube.CoreV1().PersistentVolumeClaims(src).Get(context.Background(), "data", metav1.GetOptions{})
		if err != nil || claim.DeletionTimestamp != nil {
			t.Errorf("the claim in use was deleted: %+v, %v", claim, err)
		}
		if err := world.Kube.CoreV1().Pods(src).Delete(context.Background(), "app", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		waitTransferGone(t, api, src, dst, nil)
		waitBound(t, dst, "bar")
	})
}

// testTransferCEL: the spec of a request is immutable except the token,
// which can be set once; an accept's spec is immutable.
func testTransferCEL(t *testing.T, api generated.Interface) {
	ctx := context.Background()
	src := namespace(t, "xfer-cel")
	token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "none")
	for what, change := range map[string]func(*transferv1alpha1.StorageTransferRequest){
		"token changed":       func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.Token = "YW5vdGhlci10b2tlbi0xMjM0NTY" },
		"token removed":       func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.Token = "" },
		"target name changed": func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.TargetName = "other" },
		"secrets added": func(r *transferv1alpha1.StorageTransferRequest) {
			r.Spec.Secrets = []transferv1alpha1.TransferSecret{{Name: "s", Namespace: src, Type: "t"}}
		},
		"token secret added": func(r *transferv1alpha1.StorageTransferRequest) {
			r.Spec.TokenSecretRef = &transferv1alpha1.TokenSecretReference{Name: "s"}
		},
	} {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Update(ctx, r, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("%s: err = %v, want Invalid", what, err)
		}
	}
	short := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "weak", Namespace: src},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindVolumeSnapshot, Name: "x"},
			AcceptName: "a", TargetName: "b", Token: "short"}}
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(ctx, short, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a 5-character token: err = %v, want Invalid", err)
	}
	both := short.DeepCopy()
	both.Name, both.Spec.Token, both.Spec.TokenSecretRef = "both", token, &transferv1alpha1.TokenSecretReference{Name: "s"}
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(ctx, both, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a token and a token Secret: err = %v, want Invalid", err)
	}
	inSecret := both.DeepCopy()
	inSecret.Name, inSecret.Spec.Token = "in-secret", ""
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(ctx, inSecret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a token Secret: %v", err)
	}
	inSecret, _ = api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "in-secret", metav1.GetOptions{})
	inSecret.Spec.TokenSecretRef = &transferv1alpha1.TokenSecretReference{Name: "other"}
	if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Update(ctx, inSecret, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("token Secret changed: err = %v, want Invalid", err)
	}
	for what, spec := range map[string]transferv1alpha1.StorageTransferAcceptSpec{
		"neither token nor Secret": {SourceNamespace: src, RequestName: "move"},
		"both token and Secret":    {SourceNamespace: src, RequestName: "move", RequestToken: token, RequestTokenSecretRef: &transferv1alpha1.TokenSecretReference{Name: "s"}},
	} {
		a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: src}, Spec: spec}
		if _, err := api.TransferV1alpha1().StorageTransferAccepts(src).Create(ctx, a, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("an accept with %s: err = %v, want Invalid", what, err)
		}
	}
	accept(t, api, src, src, "move", token)
	a, _ := api.TransferV1alpha1().StorageTransferAccepts(src).Get(ctx, "accept", metav1.GetOptions{})
	a.Spec.RequestName = "other"
	if _, err := api.TransferV1alpha1().StorageTransferAccepts(src).Update(ctx, a, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("accept spec changed: err = %v, want Invalid", err)
	}
}

func deleteTransfer(t *testing.T, api generated.Interface, src, request, dst, acceptName string) {
	t.Helper()
	ctx := context.Background()
	_ = api.TransferV1alpha1().StorageTransferAccepts(dst).Delete(ctx, acceptName, metav1.DeleteOptions{})
	_ = api.TransferV1alpha1().StorageTransferRequests(src).Delete(ctx, request, metav1.DeleteOptions{})
	waitFor(t, "the request to be deleted", func(ctx context.Context) bool {
		_, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, request, metav1.GetOptions{})
		_, errA := api.TransferV1alpha1().StorageTransferAccepts(dst).Get(ctx, acceptName, metav1.GetOptions{})
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(errA)
	})
}

func waitAcceptReason(t *testing.T, api generated.Interface, ns, name, reason string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("accept %s/%s to be told %s", ns, name, reason), func(ctx context.Context) bool {
		a, err := api.TransferV1alpha1().StorageTransferAccepts(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && conditionReason(a.Status.Conditions, transferv1alpha1.ConditionMatched) == reason
	})
}

func waitRequestReason(t *testing.T, api generated.Interface, ns, name, reason, part string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("request %s/%s to be told %s", ns, name, reason), func(ctx context.Context) bool {
		r, err := api.TransferV1alpha1().StorageTransferRequests(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range r.Status.Conditions {
			if c.Type == transferv1alpha1.ConditionTransferred && c.Reason == reason && strings.Contains(c.Message, part) {
				return true
			}
		}
		return false
	})
}

func conditionReason(conditions []metav1.Condition, typ string) string {
	for _, c := range conditions {
		if c.Type == typ {
			return c.Reason
		}
	}
	return ""
}

// testTransferRolledBack deletes the request of a snapshot transfer once
// it has created the target content and snapshot, before its point of no
// return: the transfer is undone on the real API (target objects deleted,
// the source content's deletionPolicy restored, the lock removed), the
// request goes, and the backend snapshot stays.
func testTransferRolledBack(t *testing.T, api generated.Interface, class string, tc *localenv.TransferController) {
	failedBefore := scrapeValue(t, tc.HTTPAddr, `storage_transfer_transfers_total{kind="VolumeSnapshot",phase="Failed"}`)
	s := world.Local
	ctx := context.Background()
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	waitBound(t, src, "data")
	takeSnapshot(t, s, src, "snap", "data")
	handle := snapshotHandleOf(t, src, "snap")
	token := offer(t, api, src, "move", transferv1alpha1.KindVolumeSnapshot, "snap")
	accept(t, api, dst, src, "move", token)
	// The last step before the point of no return (the target content
	// and snapshot are made after it): the slow controller writes its
	// record a moment before it takes it.
	waitFor(t, "the transfer to retain the source content", func(ctx context.Context) bool {
		r, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		return err == nil && r.Status.Record != nil && r.Status.Record.Step == "RetainSourceContent"
	})
	if err := api.TransferV1alpha1().StorageTransferRequests(src).Delete(ctx, "move", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, dst, "accept", plan.ReasonRequestDeleted, "rolled back")
	waitFor(t, "the request to go once rolled back", func(ctx context.Context) bool {
		_, err := api.TransferV1alpha1().StorageTransferRequests(src).Get(ctx, "move", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitFor(t, "the target snapshot to be deleted", func(ctx context.Context) bool {
		_, err := world.Snaps.SnapshotV1().VolumeSnapshots(dst).Get(ctx, "bar", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	snap, err := world.Snaps.SnapshotV1().VolumeSnapshots(src).Get(ctx, "snap", metav1.GetOptions{})
	if err != nil || snap.Annotations[plan.LockAnnotation] != "" || snap.DeletionTimestamp != nil {
		t.Fatalf("source snapshot %+v, %v: want it there, unlocked", snap, err)
	}
	content, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *snap.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
	if err != nil || content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
		t.Errorf("source content %+v, %v: want its deletionPolicy Delete again", content, err)
	}
	contents, _ := world.Snaps.SnapshotV1().VolumeSnapshotContents().List(ctx, metav1.ListOptions{})
	for _, c := range contents.Items {
		if c.Annotations[plan.RequestAnnotation] != "" && c.Spec.VolumeSnapshotRef.Namespace == dst {
			t.Errorf("content %s of the rolled back transfer is left", c.Name)
		}
	}
	if !backendHas(s, "snapshots", handle) {
		t.Errorf("the rollback deleted the backend snapshot %s", handle)
	}
	if n := scrapeValue(t, tc.HTTPAddr, `storage_transfer_transfers_total{kind="VolumeSnapshot",phase="Failed"}`); n != failedBefore+1 {
		t.Errorf("storage_transfer_transfers_total of failed snapshot transfers = %v, want %v", n, failedBefore+1)
	}
}

// testConcurrentTransfers transfers n snapshots at once, each from its own
// request to its own accept: every one completes with its own backend
// snapshot, and the time from the accept's creation to Completed is
// logged (issue 15's speed figure; no timing is checked).
func testConcurrentTransfers(t *testing.T, api generated.Interface, class string, tc *localenv.TransferController, n int) {
	s := world.Local
	ctx := context.Background()
	src, dst := namespace(t, "xfer-src"), namespace(t, "xfer-dst")
	createPVC(t, src, "data", class)
	waitBound(t, src, "data")
	claim, snapClass := "data", snapshotClass(t, s.Name)
	for i := range n {
		snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("snap-%02d", i), Namespace: src},
			Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim}, VolumeSnapshotClassName: &snapClass}}
		if _, err := world.Snaps.SnapshotV1().VolumeSnapshots(src).Create(ctx, snap, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every snapshot to be ready", func(ctx context.Context) bool {
		list, err := world.Snaps.SnapshotV1().VolumeSnapshots(src).List(ctx, metav1.ListOptions{})
		ready := 0
		for _, snap := range list.Items {
			if snap.Status != nil && snap.Status.ReadyToUse != nil && *snap.Status.ReadyToUse {
				ready++
			}
		}
		return err == nil && ready == n
	})
	handles := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("snap-%02d", i)
		handles[name] = snapshotHandleOf(t, src, name)
	}
	tokens := map[string]string{}
	for i := range n {
		r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("move-%02d", i), Namespace: src},
			Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindVolumeSnapshot, Name: fmt.Sprintf("snap-%02d", i)},
				AcceptName: fmt.Sprintf("accept-%02d", i), TargetName: fmt.Sprintf("bar-%02d", i)}}
		if _, err := api.TransferV1alpha1().StorageTransferRequests(src).Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every token", func(ctx context.Context) bool {
		list, err := api.TransferV1alpha1().StorageTransferRequests(src).List(ctx, metav1.ListOptions{})
		for _, r := range list.Items {
			tokens[r.Name] = r.Spec.Token
		}
		return err == nil && len(list.Items) == n && !slices.Contains(slices.Collect(maps.Values(tokens)), "")
	})
	created := map[string]time.Time{}
	for i := range n {
		a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("accept-%02d", i), Namespace: dst},
			Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: src, RequestName: fmt.Sprintf("move-%02d", i), RequestToken: tokens[fmt.Sprintf("move-%02d", i)]}}
		created[a.Spec.RequestName] = time.Now()
		if _, err := api.TransferV1alpha1().StorageTransferAccepts(dst).Create(ctx, a, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Completed requests are retired 2 s later; a poll of the requests
	// can miss that window on a loaded machine, their Completed events
	// stay.
	var latencies []time.Duration
	err := wait.PollUntilContextTimeout(ctxFor(t), time.Second, 3*eventually, true, func(ctx context.Context) (bool, error) {
		events, err := world.Kube.CoreV1().Events(src).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + plan.ReasonCompleted})
		if err != nil {
			return false, nil
		}
		latencies = latencies[:0]
		for _, ev := range events.Items {
			if start, ok := created[ev.InvolvedObject.Name]; ok {
				latencies = append(latencies, ev.FirstTimestamp.Sub(start))
			}
		}
		return len(latencies) == n, nil
	})
	if err != nil {
		t.Fatalf("%d of %d transfers completed: %v", len(latencies), n, err)
	}
	left, _ := api.TransferV1alpha1().StorageTransferRequests(src).List(ctx, metav1.ListOptions{})
	for _, r := range left.Items {
		if r.Status.Phase == transferv1alpha1.PhaseFailed {
			t.Errorf("%s failed: %+v", r.Name, r.Status.Conditions)
		}
	}
	for i := range n {
		target, err := world.Snaps.SnapshotV1().VolumeSnapshots(dst).Get(ctx, fmt.Sprintf("bar-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		content, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *target.Spec.Source.VolumeSnapshotContentName, metav1.GetOptions{})
		if err != nil || *content.Spec.Source.SnapshotHandle != handles[fmt.Sprintf("snap-%02d", i)] {
			t.Errorf("bar-%02d names %v, want the backend snapshot of snap-%02d", i, content, i)
		}
	}
	slices.Sort(latencies)
	// Event timestamps have a resolution of one second.
	t.Logf("%d concurrent snapshot transfers, accept to Completed: p50 %v, p99 %v, max %v", n,
		latencies[len(latencies)/2], latencies[len(latencies)*99/100], latencies[len(latencies)-1])
	if got := scrapeValue(t, tc.HTTPAddr, `storage_transfer_transfers_total{kind="VolumeSnapshot",phase="Completed"}`); got != float64(n) {
		t.Errorf("storage_transfer_transfers_total = %v, want %d", got, n)
	}
}
