package sidecar

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func TestAdditionalProvisionerNames(t *testing.T) {
	tests := []struct {
		name   string
		driver string
		want   []string
	}{
		{name: "the AWS EBS driver serves the in-tree aws-ebs plugin's classes", driver: "ebs.csi.aws.com", want: []string{"kubernetes.io/aws-ebs"}},
		{name: "the GCE PD driver serves the in-tree gce-pd plugin's classes", driver: "pd.csi.storage.gke.io", want: []string{"kubernetes.io/gce-pd"}},
		{name: "a driver that replaces no in-tree plugin serves only its own name", driver: "csi.example.com"},
		{name: "an in-tree plugin's own name is not a migrated CSI driver", driver: "kubernetes.io/aws-ebs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := additionalProvisionerNames(tt.driver); !slices.Equal(got, tt.want) {
				t.Errorf("additionalProvisionerNames(%q) = %v, want %v", tt.driver, got, tt.want)
			}
		})
	}
}

// The controller library, given migrationOption for ebs.csi.aws.com, hands
// the provisioner the claim of a kubernetes.io/aws-ebs class and a released
// PV the in-tree plugin provisioned; without the option it refuses the
// class ("Unknown provisioner requested in claim's StorageClass").
func TestMigrationOptionServesTheInTreePlugin(t *testing.T) {
	const ebs, inTree = "ebs.csi.aws.com", "kubernetes.io/aws-ebs"
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp2"}, Provisioner: inTree}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "apps", UID: "claim-uid",
			Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": ebs, "pv.kubernetes.io/migrated-to": ebs}},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gp2"), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	released := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-old", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": inTree}},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: "gp2",
			PersistentVolumeSource: v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-old"}}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased},
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kube := kubefake.NewClientset([]runtime.Object{class, claim, released}...)
	stub := &recordingProvisioner{}
	pc := controller.NewProvisionController(ctx, kube, ebs, stub, controller.LeaderElection(false),
		controller.ResyncPeriod(time.Hour), migrationOption(ctx, ebs))
	go pc.Run(ctx)

	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		provisioned, deleted := stub.calls()
		return slices.Contains(provisioned, "apps/data") && slices.Contains(deleted, "pvc-old"), nil
	})
	if err != nil {
		provisioned, deleted := stub.calls()
		t.Fatalf("provisioned %v and deleted %v, want apps/data and pvc-old", provisioned, deleted)
	}
}

// recordingProvisioner records what the library asks of it and succeeds.
type recordingProvisioner struct {
	mu                   sync.Mutex
	provisioned, deleted []string
}

func (r *recordingProvisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.provisioned = append(r.provisioned, opts.PVC.Namespace+"/"+opts.PVC.Name)
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: opts.PVName}}, controller.ProvisioningFinished, nil
}

func (r *recordingProvisioner) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleted = append(r.deleted, pv.Name)
	return nil
}

func (r *recordingProvisioner) calls() (provisioned, deleted []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.provisioned), slices.Clone(r.deleted)
}
