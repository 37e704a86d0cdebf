package sidecar

import (
	"context"
	"sync"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// TestLinkRestoreStaysProtectedNextToASidecarWithoutLinks: the sidecar of
// another driver, without --cross-namespace-snapshot (or the upstream
// csi-provisioner), shares the snapshot finalizer of direct restores and
// releases it from every snapshot no claim names. It cannot see claims
// that restore through links; their protection is a finalizer it does not
// touch, so it stays for the whole CreateVolume.
func TestLinkRestoreStaysProtectedNextToASidecarWithoutLinks(t *testing.T) {
	// This sidecar's source protection has no worker, so that the other
	// sidecar's one worker is the only one that releases anything, and the
	// barrier below shows what it did.
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"), func(c *envConfig) { c.protectionWorkers = 0 })
	other := csitest.Start(t, csitest.WithName("other.csitest.example.com"))
	e.runSidecar(envConfig{crossNamespace: true, timeout: 5 * time.Second, backoff: time.Hour, workers: 1, protectionWorkers: 1},
		other, prometheus.NewRegistry())
	e.protectionWorkers = 1 // the other sidecar's, for protectionSeen

	inCreate, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.driver.SetCreateVolumeHook(func(context.Context, *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		once.Do(func() { close(inCreate) })
		<-proceed
		return nil, nil, false
	})
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.await(inCreate, "CreateVolume of the claim restoring through the link")

	e.protectionSeen() // the other sidecar has decided on the protected snapshot
	if f := e.snapshotFinalizers("prod", "foo-backup"); !hasString(f, datasource.LinkSnapshotFinalizer) {
		t.Errorf("snapshot finalizers during CreateVolume = %v, want %s: a sidecar that does not follow links released the restore's protection",
			f, datasource.LinkSnapshotFinalizer)
	}
	close(proceed)
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
}
