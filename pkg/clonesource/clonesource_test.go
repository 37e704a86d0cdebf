package clonesource

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

const driver = "csi.example.com"

func ptr[T any](v T) *T { return &v }

func boundSource() (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	src := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "ns"},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-src", StorageClassName: ptr("fast")},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-src"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-1"}},
		},
	}
	return src, pv
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*v1.PersistentVolumeClaim, *v1.PersistentVolume, *v1.PersistentVolumeClaim)
		noSource  bool
		noVolume  bool
		class     string
		requested int64
		want      Reason
	}{
		{name: "a bound claim of this driver and class can be cloned", want: Usable},
		{name: "a missing source is reported", noSource: true, want: NotFound},
		{name: "a source being deleted is refused", want: BeingDeleted,
			mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
				s.DeletionTimestamp = &metav1.Time{}
			}},
		{name: "a protected source being deleted still serves a clone that was there first", want: Usable,
			mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
				s.DeletionTimestamp, s.Finalizers = &metav1.Time{Time: time.Unix(100, 0)}, []string{datasource.CloneFinalizer}
				c.CreationTimestamp = metav1.Unix(99, 0)
			}},
		{name: "a protected source being deleted refuses a clone created after the deletion request", want: BeingDeleted,
			mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
				s.DeletionTimestamp, s.Finalizers = &metav1.Time{Time: time.Unix(100, 0)}, []string{datasource.CloneFinalizer}
				c.CreationTimestamp = metav1.Unix(101, 0)
			}},
		{name: "an unbound source waits", want: NotBound,
			mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
				s.Status.Phase = v1.ClaimPending
			}},
		{name: "a source whose volume is not in the cache waits", noVolume: true, want: NotBound},
		{name: "a volume of another driver is refused", want: OtherDriver,
			mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
				pv.Spec.CSI.Driver = "x"
			}},
		{name: "a source of another class is refused", class: "slow", want: ClassMismatch},
		{name: "a volume mode change is refused", want: VolumeModeChanged,
			mutate: func(_ *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
				c.Spec.VolumeMode = ptr(v1.PersistentVolumeBlock)
			}},
		{name: "a request smaller than the source is refused", requested: 1 << 20, want: TooSmall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, pv := boundSource()
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "clone", Namespace: "ns"}}
			if tt.mutate != nil {
				tt.mutate(src, pv, claim)
			}
			if tt.noSource {
				src = nil
			}
			if tt.noVolume {
				pv = nil
			}
			class, requested := tt.class, tt.requested
			if class == "" {
				class = "fast"
			}
			if requested == 0 {
				requested = 1 << 30
			}
			got := Check(Input{Namespace: "ns", Name: "src", Source: src, Volume: pv, Claim: claim, ClassName: class,
				DriverName: driver, RequestedBytes: requested})
			if got.Reason != tt.want {
				t.Fatalf("Check() = %s (%s), want %s", got.Reason, got.Message, tt.want)
			}
			if tt.want == Usable && got.Handle != "vol-1" {
				t.Errorf("Handle = %q, want vol-1", got.Handle)
			}
			if tt.want != Usable && got.Message == "" {
				t.Error("a refusal must carry a message")
			}
		})
	}
}
