//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// TestE2ESnapshotWebhookWithoutCEL proves every row of KEP-1900's two
// tables through a real kube-apiserver, on a control plane of its own whose
// snapshot CRDs have no CEL rules: the clusters whose CRDs predate
// external-snapshotter v8, which the webhook exists for. With CEL present
// (TestE2ESnapshotWebhook) kube-apiserver answers these rows itself before
// it calls the webhook. Each denial must be the webhook's, with its
// message; and an object persisted invalid before the webhook was
// registered can still be relabeled, lose its finalizer and be deleted.
func TestE2ESnapshotWebhookWithoutCEL(t *testing.T) {
	ownWorld(t, "nocel", localenv.Config{ControlPlaneOnly: true, SnapshotCRDsWithoutCEL: true})
	ctx := ctxFor(t)
	ns := namespace(t, "nocel")
	snaps := world.Snaps.SnapshotV1().VolumeSnapshots(ns)
	contents := world.Snaps.SnapshotV1().VolumeSnapshotContents()
	// Persisted before the webhook exists, invalid under its rules: a
	// snapshot with both sources, a content with both handles.
	persisted := snapshotOf(ns, "persisted", withClaim("data"), withContent("content"), withFinalizer("example.com/hold"))
	if _, err := snaps.Create(ctx, persisted, metav1.CreateOptions{}); err != nil {
		t.Fatalf("without CEL a snapshot with two sources is stored: %v", err)
	}
	persistedContent := contentOf(ns, ns+"-persisted", withHandles("vol-1", "snap-1"))
	persistedContent.Finalizers = []string{"example.com/hold"}
	if _, err := contents.Create(ctx, persistedContent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ca, certs := webhookCerts(t)
	wh, err := world.StartSnapshotWebhook(ctx, "snapshot-webhook-nocel", certs.CertFile(), certs.KeyFile(), "--v=4")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Stop(5 * time.Second) })
	registerWebhook(t, ctx, ns, wh, ca.PEM)

	t.Run("VolumeSnapshotCreate", func(t *testing.T) {
		_, err := snaps.Create(ctx, snapshotOf(ns, "both", withClaim("data"), withContent("content")), metav1.CreateOptions{})
		expectDenied(t, err, "spec.source: Forbidden: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set, not both")
		_, err = snaps.Create(ctx, snapshotOf(ns, "neither"), metav1.CreateOptions{})
		expectDenied(t, err, "spec.source: Required value: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set")
		_, err = snaps.Create(ctx, snapshotOf(ns, "empty-class", withClaim("data"), withClass("")), metav1.CreateOptions{})
		expectDenied(t, err, `spec.volumeSnapshotClassName: Invalid value: "": must not be the empty string`)
	})
	t.Run("VolumeSnapshotUpdate", func(t *testing.T) {
		if _, err := snaps.Create(ctx, snapshotOf(ns, "valid", withClaim("data"), withClass("gold")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := patchSnapshot(ctx, ns, "valid", `{"spec":{"source":{"persistentVolumeClaimName":"other"}}}`)
		expectDenied(t, err, "spec.source.persistentVolumeClaimName: Invalid value", `field is immutable (was "data")`)
		err = patchSnapshot(ctx, ns, "valid", `{"spec":{"volumeSnapshotClassName":""}}`)
		expectDenied(t, err, "spec.volumeSnapshotClassName: Invalid value") // old valid, new invalid: strict
		if err := patchSnapshot(ctx, ns, "valid", `{"spec":{"volumeSnapshotClassName":"silver"}}`); err != nil {
			t.Errorf("changing the class name of a snapshot: %v", err)
		}
	})
	t.Run("VolumeSnapshotContentCreate", func(t *testing.T) {
		_, err := contents.Create(ctx, contentOf(ns, ns+"-both", withHandles("vol-1", "snap-1")), metav1.CreateOptions{})
		expectDenied(t, err, "spec.source: Forbidden: exactly one of volumeHandle and snapshotHandle must be set, not both")
		_, err = contents.Create(ctx, contentOf(ns, ns+"-neither", withHandles("", "")), metav1.CreateOptions{})
		expectDenied(t, err, "spec.source: Required value: exactly one of volumeHandle and snapshotHandle must be set")
		unbound := contentOf(ns, ns+"-unbound", withHandles("", "snap-1"))
		unbound.Spec.VolumeSnapshotRef = v1.ObjectReference{}
		_, err = contents.Create(ctx, unbound, metav1.CreateOptions{})
		expectDenied(t, err, "spec.volumeSnapshotRef.name: Required value", "spec.volumeSnapshotRef.namespace: Required value")
	})
	t.Run("VolumeSnapshotContentUpdate", func(t *testing.T) {
		name := ns + "-bound"
		bound := contentOf(ns, name, withHandles("", "snap-1"))
		bound.Spec.VolumeSnapshotRef.UID = "uid-1"
		block := v1.PersistentVolumeBlock
		bound.Spec.SourceVolumeMode = &block
		if _, err := contents.Create(ctx, bound, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = contents.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		err := patchContent(ctx, name, `{"spec":{"source":{"snapshotHandle":"snap-2"}}}`)
		expectDenied(t, err, "spec.source.snapshotHandle: Invalid value", `field is immutable (was "snap-1")`)
		err = patchContent(ctx, name, `{"spec":{"volumeSnapshotRef":{"name":"other"}}}`)
		expectDenied(t, err, "spec.volumeSnapshotRef: Invalid value", "field is immutable once bound (uid uid-1 of "+ns+"/snap)")
		err = patchContent(ctx, name, `{"spec":{"sourceVolumeMode":"Filesystem"}}`)
		expectDenied(t, err, "spec.sourceVolumeMode: Invalid value", `field is immutable with --prevent-volume-mode-conversion (was "Block")`)
	})
	t.Run("RatchetingLetsPersistedInvalidObjectsGo", func(t *testing.T) {
		// Old invalid, new invalid: a label, the finalizers; then delete.
		if err := patchSnapshot(ctx, ns, "persisted", `{"metadata":{"labels":{"changed":"yes"}}}`); err != nil {
			t.Errorf("label change of an invalid snapshot: %v", err)
		}
		if err := patchSnapshot(ctx, ns, "persisted", `{"metadata":{"finalizers":null}}`); err != nil {
			t.Errorf("finalizer removal from an invalid snapshot: %v", err)
		}
		if err := snaps.Delete(ctx, "persisted", metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting an invalid snapshot: %v", err)
		}
		// Old invalid still keeps its source: the immutable rows hold.
		err := patchContent(ctx, persistedContent.Name, `{"spec":{"source":{"volumeHandle":null}}}`)
		expectDenied(t, err, "spec.source.volumeHandle: Invalid value")
		if err := patchContent(ctx, persistedContent.Name, `{"metadata":{"finalizers":null}}`); err != nil {
			t.Errorf("finalizer removal from an invalid content: %v", err)
		}
		if err := contents.Delete(ctx, persistedContent.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting an invalid content: %v", err)
		}
		waitFor(t, "the invalid snapshot and content to be gone", func(ctx context.Context) bool {
			_, errSnap := snaps.Get(ctx, "persisted", metav1.GetOptions{})
			_, errContent := contents.Get(ctx, persistedContent.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(errSnap) && apierrors.IsNotFound(errContent)
		})
	})
}

// snapshotOf is a VolumeSnapshot of TestE2ESnapshotWebhookWithoutCEL,
// labeled for its webhook, with the options applied.
func snapshotOf(ns, name string, opts ...func(*snapv1.VolumeSnapshot)) *snapv1.VolumeSnapshot {
	s := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{webhookLabel: ns}}}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

func withClaim(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.PersistentVolumeClaimName = &name }
}

func withContent(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.VolumeSnapshotContentName = &name }
}

func withClass(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.VolumeSnapshotClassName = &name }
}

func withFinalizer(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Finalizers = append(s.Finalizers, name) }
}

// contentOf is a VolumeSnapshotContent bound by name to ns/snap, labeled
// for the webhook, with the options applied.
func contentOf(ns, name string, opts ...func(*snapv1.VolumeSnapshotContent)) *snapv1.VolumeSnapshotContent {
	c := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{webhookLabel: ns}},
		Spec: snapv1.VolumeSnapshotContentSpec{Driver: "nocel.example.com", DeletionPolicy: snapv1.VolumeSnapshotContentRetain,
			VolumeSnapshotRef: v1.ObjectReference{Namespace: ns, Name: "snap"}}}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// withHandles sets the content's source handles; an empty one is unset.
func withHandles(volume, snapshot string) func(*snapv1.VolumeSnapshotContent) {
	return func(c *snapv1.VolumeSnapshotContent) {
		if volume != "" {
			c.Spec.Source.VolumeHandle = &volume
		}
		if snapshot != "" {
			c.Spec.Source.SnapshotHandle = &snapshot
		}
	}
}

func patchSnapshot(ctx context.Context, ns, name, patch string) error {
	_, err := world.Snaps.SnapshotV1().VolumeSnapshots(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
