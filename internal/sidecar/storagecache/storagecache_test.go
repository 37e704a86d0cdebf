package storagecache

import (
	"context"
	"errors"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

var storageV1 = discoverytest.Resources("storage.k8s.io/v1", "volumeattributesclasses", "volumeattachments")

func config(disc *discoverytest.Discovery, objs ...runtime.Object) Config {
	return Config{Client: kubefake.NewClientset(objs...), Discovery: disc, PollInterval: 10 * time.Millisecond}
}

func run(t *testing.T, r func(context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// eventually waits until cond holds, failing the test after 30 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

func TestAttributesClasses(t *testing.T) {
	gold := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: "csi.example.com",
		Parameters: map[string]string{"iops": "3000"}}
	disc := discoverytest.New()
	classes := NewAttributesClasses(config(disc, gold))
	if _, err := classes.Get("gold"); err == nil {
		t.Fatal("Get() before Run succeeded")
	}
	run(t, classes.Run)

	eventually(t, "discovery says the API is not served", func() bool {
		_, err := classes.Get("gold")
		return errors.Is(err, optionalapi.ErrNotServed)
	})
	disc.Serve(storageV1)
	eventually(t, "the class is read once the API is served", func() bool {
		got, err := classes.Get("gold")
		return err == nil && got.Parameters["iops"] == "3000"
	})
	_, err := classes.Get("silver")
	if !apierrors.IsNotFound(err) || err.Error() != `volumeattributesclasses.storage.k8s.io "silver" not found` {
		t.Errorf("Get() of a missing class = %v, want the API server's NotFound", err)
	}
}

func TestAttachmentsOfVolume(t *testing.T) {
	va := func(name, pv string) *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: storagev1.VolumeAttachmentSpec{NodeName: "node-" + name, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(pv)}}}
	}
	inline := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "inline"}}
	attachments := NewAttachments(config(discoverytest.New(storageV1), va("a", "pv-1"), va("b", "pv-2"), inline))
	_, err := attachments.OfVolume("pv-1")
	if !errors.Is(err, optionalapi.ErrNotSynced) {
		t.Errorf("OfVolume() before the cache synced = %v, want it not synced", err)
	}
	run(t, attachments.Run)
	eventually(t, "the cache syncs", func() bool {
		_, err := attachments.OfVolume("pv-1")
		return err == nil
	})
	got, _ := attachments.OfVolume("pv-1")
	if len(got) != 1 || got[0].Name != "a" {
		t.Errorf("OfVolume(pv-1) = %v, want the attachment a", got)
	}
	if got, _ := attachments.OfVolume("pv-3"); len(got) != 0 {
		t.Errorf("OfVolume(pv-3) = %v, want none", got)
	}
}
