package sidecar

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Adversarial review of 11a03d4 (in-use marks only with --node-deployment)
// from the side of the tenant who owns a source: the annotations with
// datasource.InUseAnnotationPrefix are on the owner's object, which the
// owner may edit at will.

// markPatch is the owner's merge patch of one annotation (nil value:
// removed) and, when label is set, of a label.
func markPatch(t *testing.T, key string, value any, label string) []byte {
	t.Helper()
	meta := map[string]any{"annotations": map[string]any{key: value}}
	if label != "" {
		meta["labels"] = map[string]any{"touched": label}
	}
	p, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAForgedInUseMarkHoldsOnlyItsOwnersSnapshot: Alice owns
// prod/snap and forges an in-use mark on it that never expires ("forever"
// cannot be read as a time) while Bob's granted restore from it runs, then
// requests its deletion. The central sidecar (no --node-deployment) writes
// no mark of its own; it honors the forged one, so the snapshot stays after
// Bob's restore is done: that pins only Alice's own object, as a finalizer
// she could add herself would, and nothing of Bob's. However often Alice
// touches the snapshot meanwhile, the sidecar writes nothing to it. Once
// she replaces the mark with an expired one, the sidecar drops it (one
// write) and releases the snapshot; touching it again costs no write.
func TestAForgedInUseMarkHoldsOnlyItsOwnersSnapshot(t *testing.T) {
	var markWrites, sidecarWrites atomic.Int32
	e := startEnv(t, knownSnapshots("prod/snap"), oneProtectionWorker(), beforeStart(func(e *env) {
		e.snaps.PrependReactor("*", "volumesnapshots", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() != "prod" {
				return false, nil, nil
			}
			switch p := a.(type) {
			case clienttesting.PatchAction:
				body := string(p.GetPatch())
				if strings.Contains(body, `"touched"`) || strings.Contains(body, "deletionTimestamp") {
					return false, nil, nil // Alice's own
				}
				sidecarWrites.Add(1)
				if strings.Contains(body, datasource.InUseAnnotationPrefix) {
					markWrites.Add(1)
				}
			case clienttesting.UpdateAction:
				sidecarWrites.Add(1)
			}
			return false, nil, nil
		})
	}))
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	e.createSnapshot("prod", "snap", true)
	e.createGrant("prod", "bar", "test", "snap")
	claim := e.createClaim("test", "restore", fromSnapshot("prod", "snap"))
	e.await(entered, "Bob's CreateVolume from prod/snap")
	if n := markWrites.Load(); n != 0 {
		t.Errorf("the central sidecar wrote %d in-use marks on prod/snap", n)
	}

	forged := datasource.InUseAnnotationPrefix + "h-forged"
	e.patchSnapshot("prod", "snap", markPatch(t, forged, "forever", "forge"))
	e.patchSnapshot("prod", "snap", deletion(t, e.snapshotFinalizers("prod", "snap")))
	close(release)
	e.waitForPV(claim)
	e.protectionSeen()
	if f := protection(e.snapshotFinalizers("prod", "snap")); len(f) == 0 {
		t.Fatalf("the forged mark did not hold prod/snap: finalizers %v", f)
	}

	before := sidecarWrites.Load()
	for i := range 30 {
		e.patchSnapshot("prod", "snap", markPatch(t, forged, "forever", fmt.Sprint(i)))
	}
	e.protectionSeen()
	if n := sidecarWrites.Load() - before; n != 0 {
		t.Errorf("Alice's 30 touches of her snapshot made the sidecar write %d times", n)
	}

	expired := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	e.patchSnapshot("prod", "snap", markPatch(t, forged, expired, "expired"))
	e.waitFor("prod/snap released once the forged mark has expired", func() bool {
		return len(protection(e.snapshotFinalizers("prod", "snap"))) == 0
	})
	if n := markWrites.Load(); n != 1 {
		t.Errorf("in-use mark writes = %d, want 1 (the expired forged mark dropped)", n)
	}
	before = sidecarWrites.Load()
	for i := range 30 {
		e.patchSnapshot("prod", "snap", markPatch(t, forged, expired, fmt.Sprint("again-", i)))
	}
	e.protectionSeen()
	if n := sidecarWrites.Load() - before; n != 0 {
		t.Errorf("Alice's 30 expired marks on her released snapshot made the sidecar write %d times", n)
	}
}
