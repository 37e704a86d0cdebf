package sidecar

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// The tests of this file hold a restore or clone across namespaces in the
// driver while the source's owner deletes the source, and let a sidecar
// that shares the source finalizers do what it does: the sidecar of
// another driver with the CrossNamespaceSourceProvisioning gate off, or
// upstream's provisioner. The source must stay until the attempt ends.

// protection returns the source-protection finalizers among finalizers.
func protection(finalizers []string) []string {
	var out []string
	for _, f := range finalizers {
		if slices.Contains(datasource.Finalizers, f) {
			out = append(out, f)
		}
	}
	return out
}

// deletion is the merge patch that requests an object's deletion as the
// API server records it while a finalizer holds it, leaving it finalizers.
func deletion(t *testing.T, finalizers []string) []byte {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"deletionTimestamp": metav1.Now(), "finalizers": finalizers}})
	if err != nil {
		t.Fatal(err)
	}
	return patch
}

func (e *env) patchSnapshot(namespace, name string, patch []byte) {
	e.t.Helper()
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots(namespace).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// TestCrossNamespaceRestoreStaysProtectedNextToASidecarWithTheGateOff: the
// issue's scenario. Driver A's sidecar has the gate on and restores Alice's
// prod/foo-backup into Bob's test/foo-testing (granted); driver B's, in the
// same cluster, has it off. Alice deletes the snapshot mid-restore. B must
// not judge A's claim with its own gate ("never provisioned") and take the
// protection off: the snapshot stays until A's restore has its volume.
func TestCrossNamespaceRestoreStaysProtectedNextToASidecarWithTheGateOff(t *testing.T) {
	// A's source protection has no worker, so that B's one worker is the
	// only one that releases anything, and protectionSeen shows what it did.
	e := startEnv(t, knownSnapshots("prod/foo-backup"), func(c *envConfig) { c.protectionWorkers = 0 })
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.await(entered, "A's CreateVolume from prod/foo-backup")

	// B starts now, so that its caches list the grant and the claim: what
	// is tested is its judgment, not how far its watches lag behind A's.
	b := csitest.Start(t, csitest.WithName("b.csitest.example.com"))
	e.runSidecar(envConfig{crossNamespace: false, timeout: 5 * time.Second, backoff: time.Hour, workers: 1, protectionWorkers: 1},
		b, prometheus.NewRegistry())
	e.protectionWorkers = 1 // B's, for protectionSeen
	e.protectionSeen()      // B has decided on the protected snapshot, listed

	e.patchSnapshot("prod", "foo-backup", deletion(t, e.snapshotFinalizers("prod", "foo-backup")))
	e.protectionSeen() // B has decided on the snapshot being deleted
	if f := e.snapshotFinalizers("prod", "foo-backup"); len(protection(f)) == 0 {
		t.Fatalf("snapshot finalizers during A's CreateVolume = %v: B, with the gate off, released A's restore", f)
	}

	close(release)
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
	e.waitFor("the snapshot to be released once the restore has its volume", func() bool {
		return len(protection(e.snapshotFinalizers("prod", "foo-backup"))) == 0
	})
}

// upstreamReleases removes upstream's shared finalizers from an object, as
// upstream's provisioner does: its cloning-protection controller from a
// claim no clone in its own namespace names, its snapshot protection from
// a snapshot after any restore from it ends.
func upstreamReleases(finalizers []string) []string {
	return slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool {
		return f == datasource.SnapshotFinalizer || f == datasource.CloneFinalizer
	})
}

// TestCrossNamespaceUsesStayProtectedWhenUpstreamReleasesItsFinalizers:
// upstream's provisioner looks for clones only in the source's namespace
// and takes its snapshot finalizer off when a restore of its own ends; it
// knows neither of our restores and clones naming another namespace. They
// are protected by finalizers of their own, which it leaves alone.
func TestCrossNamespaceUsesStayProtectedWhenUpstreamReleasesItsFinalizers(t *testing.T) {
	for _, tt := range []struct {
		name string
		// source creates the source and its grant, claim the claim using it.
		source func(e *env)
		claim  func(e *env) *v1.PersistentVolumeClaim
		// finalizers reads the source's; patch writes to it.
		finalizers func(e *env) []string
		patch      func(e *env, patch []byte)
	}{
		{"restore", func(e *env) {
			e.createSnapshot("prod", "snap", true)
			e.createGrant("prod", "bar", "test", "snap")
		}, func(e *env) *v1.PersistentVolumeClaim {
			return e.createClaim("test", "restore", fromSnapshot("prod", "snap"))
		},
			func(e *env) []string { return e.snapshotFinalizers("prod", "snap") },
			func(e *env, patch []byte) { e.patchSnapshot("prod", "snap", patch) }},
		{"clone", func(e *env) {
			e.boundClaim("prod", "data")
			e.createClaimGrant("prod", "bar", "test", "data")
		}, func(e *env) *v1.PersistentVolumeClaim {
			return e.createClaim("test", "copy", fromClaim("prod", "data"))
		},
			func(e *env) []string { return e.claimFinalizers("prod", "data") },
			func(e *env, patch []byte) {
				if _, err := e.kube.CoreV1().PersistentVolumeClaims("prod").Patch(e.ctx, "data", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					e.t.Fatal(err)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, knownSnapshots("prod/snap"), oneProtectionWorker())
			tt.source(e)
			entered, release := make(chan struct{}), make(chan struct{})
			e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
			claim := tt.claim(e)
			e.await(entered, "CreateVolume")

			tt.patch(e, deletion(t, upstreamReleases(tt.finalizers(e))))
			e.protectionSeen()
			if f := tt.finalizers(e); len(protection(f)) == 0 {
				t.Fatalf("source finalizers during CreateVolume = %v: upstream's release left the %s unprotected", f, tt.name)
			}
			close(release)
			e.waitForPV(claim)
			e.waitFor("the source to be released", func() bool { return len(protection(tt.finalizers(e))) == 0 })
		})
	}
}
