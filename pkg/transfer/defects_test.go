package transfer

// Tests of the fixes of issue 23's defects 7, 10, 14 and 16.

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/transfer/plan"
)

// boundClaimNamed is boundClaim with the claim named name.
func boundClaimNamed(name string) []runtime.Object {
	objs := boundClaim()
	objs[0].(*v1.PersistentVolumeClaim).Name = name
	objs[1].(*v1.PersistentVolume).Spec.ClaimRef.Name = name
	return objs
}

// TestClaimOfAnEphemeralVolumeOfARunningPodWaits (defect 7): a pod uses
// the claim <pod>-<volume> of its generic ephemeral volume without naming
// it; the transfer waits for it as for a pod that names its claim.
func TestClaimOfAnEphemeralVolumeOfARunningPodWaits(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"}, Status: v1.PodStatus{Phase: v1.PodRunning},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("csi")}}}}}}}}
	h := newHarness(t, append(boundClaimNamed("app-0-scratch"), pod), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "app-0-scratch", "")
	h.waitFor("the transfer to wait or end", func() bool {
		reason := h.transferredReason()
		return reason == plan.ReasonSourceInUse || reason == plan.ReasonCompleted || h.request() == nil
	})
	if reason := h.transferredReason(); reason != plan.ReasonSourceInUse {
		t.Errorf("Transferred reason = %q, want %s", reason, plan.ReasonSourceInUse)
	}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "app-0-scratch", metav1.GetOptions{}); err != nil {
		t.Fatalf("The claim in use was deleted: %v", err)
	}
}

func TestPodsAreIndexedByTheClaimsTheyUse(t *testing.T) {
	tests := map[string]struct {
		volume v1.VolumeSource
		want   []string
	}{
		"a claim named":                    {v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}, []string{"prod/data"}},
		"the claim of an ephemeral volume": {v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}, []string{"prod/app-0-scratch"}},
		"no claim":                         {v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"},
				Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "scratch", VolumeSource: tc.volume}}}}
			got, err := podClaimIndex(pod)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("podClaimIndex = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestTargetClaimWithoutClassAsksForNone (defect 10): a recorded spec
// without storageClassName would get the target namespace's default class
// at admission, a class its volume does not have, and never bind; "" asks
// for a volume without class, as nil did in the source namespace.
func TestTargetClaimWithoutClassAsksForNone(t *testing.T) {
	tests := map[string]struct {
		recorded *string
		want     string
	}{
		"no class is asked for as none": {nil, ""},
		"none stays none":               {ptr.To(""), ""},
		"a class is kept":               {ptr.To("csi"), "csi"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := recordedRequest()
			r.Status.Record.ClaimSpec.StorageClassName = tc.recorded
			c := targetClaim(r)
			if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != tc.want {
				t.Errorf("storageClassName = %v, want %q", c.Spec.StorageClassName, tc.want)
			}
			if r.Status.Record.ClaimSpec.StorageClassName != tc.recorded {
				t.Error("building the claim changed the record")
			}
		})
	}
}
