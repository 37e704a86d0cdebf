package provisioner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// The StorageClass parameters as upstream reads them: deprecated spellings,
// the default secret, and the secrets of deletion.

// credentials is the Secret kube-system/creds with one key.
func credentials() *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kube-system"}, Data: map[string][]byte{"password": []byte("s3cret")}}
}

func classWith(params ...string) *storagev1.StorageClass {
	var opts []classOption
	for i := 0; i+1 < len(params); i += 2 {
		opts = append(opts, param(params[i], params[i+1]))
	}
	return newClass(opts...)
}

type volumeOption func(*v1.PersistentVolume)

// releasedVolume is the PV of test/data in class "fast"; options change it.
func releasedVolume(opts ...volumeOption) *v1.PersistentVolume {
	pv := provisionedVolume()
	pv.Spec.StorageClassName = "fast"
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "test", Name: "data", UID: claimUID}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

func withAnnotations(kv ...string) volumeOption {
	return func(pv *v1.PersistentVolume) {
		for i := 0; i+1 < len(kv); i += 2 {
			metav1.SetMetaDataAnnotation(&pv.ObjectMeta, kv[i], kv[i+1])
		}
	}
}

func TestClassParameters(t *testing.T) {
	prov := classparams.ProvisionerSecret
	runFramework(t, []frameworkCase{
		{
			name: "the deprecated provisioner secret parameters are honored",
			objects: []runtime.Object{classWith(prov.DeprecatedNameKey, "creds", prov.DeprecatedNamespaceKey, "kube-system"),
				ours(), credentials()},
			steps: []step{provision("test/data", created)},
			want:  []string{create + " with secret password", provisioned},
		},
		{
			name:    "the deprecated csi.storage.k8s.io/secret-name stands in for the provisioner secret",
			objects: []runtime.Object{classWith(classparams.DefaultSecret.NameKey, "creds", classparams.DefaultSecret.NamespaceKey, "kube-system"), ours(), credentials()},
			steps:   []step{provision("test/data", created)},
			want:    []string{create + " with secret password", provisioned},
		},
		{
			name:    "a class with both fstype keys is refused before anything is called",
			objects: []runtime.Object{classWith("fsType", "xfs", classparams.FSTypeKey, "ext4"), ours()},
			steps:   []step{provision("test/data")},
			want:    []string{`provision test/data: NoChange, error: fstype specified in parameters with both "fstype" and "csi.storage.k8s.io/fstype" keys`},
		},
		{
			name: "a claim with a selector is not provisioned, as upstream",
			objects: objects(ours(func(c *v1.PersistentVolumeClaim) {
				c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
			})),
			steps: []step{provision("test/data")},
			want:  []string{"provision test/data: NoChange, error: claim Selector is not supported"},
		},
		{
			name:    "a provisioner secret that cannot be read stops provisioning",
			objects: []runtime.Object{classWith(prov.NameKey, "creds", prov.NamespaceKey, "kube-system"), ours()},
			steps:   []step{provision("test/data")},
			want:    []string{`provision test/data: NoChange, error: error getting secret creds in namespace kube-system: secrets "creds" not found`},
		},
	})
}

func TestDeletionSecrets(t *testing.T) {
	prov := classparams.ProvisionerSecret
	namingCreds := classWith(prov.NameKey, "creds", prov.NamespaceKey, "kube-system")
	runFramework(t, []frameworkCase{
		{
			name:    "the secret named in the PV's annotations is sent",
			objects: []runtime.Object{releasedVolume(withAnnotations(annDeletionSecretName, "creds", annDeletionSecretNamespace, "kube-system")), credentials()},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName + " with secret password", "delete " + pvName + ": done"},
		},
		{
			name: "empty annotations mean no secret, even if the class names one now",
			objects: []runtime.Object{namingCreds, credentials(),
				releasedVolume(withAnnotations(annDeletionSecretName, "", annDeletionSecretNamespace, ""))},
			steps: []step{deleteVolume(pvName, deleted)},
			want:  []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
		{
			name:    "without the annotations, the class's secret is resolved for the PV's claim",
			objects: []runtime.Object{classWith(prov.NameKey, "${pvc.name}-creds", prov.NamespaceKey, "${pvc.namespace}"), releasedVolume(), dataCreds()},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName + " with secret password", "delete " + pvName + ": done"},
		},
		{
			name:    "a secret that cannot be read does not stop the deletion, as upstream",
			objects: []runtime.Object{releasedVolume(withAnnotations(annDeletionSecretName, "creds", annDeletionSecretNamespace, "kube-system"))},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
		{
			name:    "a class template that needs the claim's annotations cannot be resolved at deletion",
			objects: []runtime.Object{classWith(prov.NameKey, "${pvc.annotations['team']}", prov.NamespaceKey, "kube-system"), releasedVolume()},
			steps:   []step{deleteVolume(pvName)},
			want: []string{"delete " + pvName + `: error: failed to get secretreference for volume ` + pvName +
				`: error resolving value "${pvc.annotations['team']}": invalid tokens: ["pvc.annotations['team']"]`},
		},
	})
}

// dataCreds is the Secret test/data-creds.
func dataCreds() *v1.Secret {
	s := credentials()
	s.Name, s.Namespace = "data-creds", "test"
	return s
}

// The fsType a class asks for, in any of upstream's spellings, reaches the
// request and the PV.
func TestFSTypeReachesRequestAndVolume(t *testing.T) {
	tests := []struct {
		name  string
		class *storagev1.StorageClass
		want  string
	}{
		{name: "the deprecated fsType", class: classWith("fsType", "xfs"), want: "xfs"},
		{name: "the prefixed key", class: classWith(classparams.FSTypeKey, "ext3"), want: "ext3"},
		{name: "neither: --default-fstype", class: newClass(), want: "ext4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, frameworkCase{objects: []runtime.Object{tt.class, ours()}})
			w.prov.opts.DefaultFSType = "ext4"
			w.answers = []answer{created}
			pv, state, err := w.prov.Provision(w.ctx, controller.ProvisionOptions{PVC: w.claim("test/data"), StorageClass: tt.class, PVName: pvName})
			if err != nil || state != controller.ProvisioningFinished {
				t.Fatalf("Provision() = %v, %v", state, err)
			}
			if pv.Spec.CSI.FSType != tt.want {
				t.Errorf("PV fsType = %q, want %q", pv.Spec.CSI.FSType, tt.want)
			}
		})
	}
}
