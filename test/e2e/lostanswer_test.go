//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// TestE2ELostAnswerOfAClaimThatNamesAVolume: issue 21's first defect on the
// real control plane. A cross-namespace restore's CreateVolume creates the
// volume, but the answer is lost (DeadlineExceeded) and every retry fails
// (Unavailable), so the attempt is parked. The claim's owner then sets
// spec.volumeName to a volume that does not exist, which makes the
// controller library stop handing the claim to the provisioner, and
// deletes the claim. The sidecar must still get the volume back and delete
// it: the driver ends up holding the source volume only, and the snapshot
// loses its protection.
func TestE2ELostAnswerOfAClaimThatNamesAVolume(t *testing.T) {
	ctx := ctxFor(t)
	faults := filepath.Join(t.TempDir(), "faults.json")
	setFaults(t, faults)
	stack, err := world.StartStack(ctx, "lost-answer.csi.example.com", []string{"--faults-file=" + faults})
	if err != nil {
		t.Fatal(err)
	}
	startSidecarWithEnv(t, stack, "lost-answer", nil, "--retry-interval-start=200ms", "--retry-interval-max=2s")
	class := storageClass(t, "lost-answer", stack.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, stack, prod, class, "snap", "data")
	grant(t, prod, "allow", test, "snap")

	setFaults(t, faults,
		localdriver.FaultRule{Method: "CreateVolume", Code: "DeadlineExceeded", AfterCall: true, Count: 1},
		localdriver.FaultRule{Method: "CreateVolume", Code: "Unavailable"})
	createPVC(t, test, "restore", class, restoring(prod, "snap"))
	waitFor(t, "the driver to create the restore whose answer is lost", func(context.Context) bool { return driverVolumes(t, stack) == 2 })

	claim, err := world.Kube.CoreV1().PersistentVolumeClaims(test).Get(ctx, "restore", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Spec.VolumeName = "no-such-volume"
	if _, err := world.Kube.CoreV1().PersistentVolumeClaims(test).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	setFaults(t, faults)
	if err := world.Kube.CoreV1().PersistentVolumeClaims(test).Delete(ctx, "restore", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the driver to delete the volume nobody will ever use", func(context.Context) bool { return driverVolumes(t, stack) == 1 })
	waitFor(t, "the snapshot to lose its protection", func(ctx context.Context) bool {
		snap, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return err == nil && !slices.ContainsFunc(snap.Finalizers, isSourceProtection)
	})
}

// setFaults makes the local driver answer by rules from its next call on.
func setFaults(t *testing.T, path string, rules ...localdriver.FaultRule) {
	t.Helper()
	if err := localdriver.WriteFaults(path, localdriver.Faults{Rules: rules}); err != nil {
		t.Fatal(err)
	}
}

// driverVolumes counts the volumes the stack's driver holds.
func driverVolumes(t *testing.T, stack *localenv.Stack) int {
	t.Helper()
	volumes, err := filepath.Glob(filepath.Join(stack.State, "volumes", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(volumes)
}

// isSourceProtection reports whether a finalizer is one of the
// provisioner's source protections.
func isSourceProtection(finalizer string) bool {
	return strings.HasPrefix(finalizer, "provisioner.storage.kubernetes.io/")
}
