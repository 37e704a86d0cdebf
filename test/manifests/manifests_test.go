package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// deployDir is the directory under test, relative to this package.
const deployDir = "../../deploy"

// knownKinds maps every kind the manifests may contain to a constructor of
// its typed Go struct. A document of any other kind fails the tests: add
// the kind here, with the struct its API server or CRD uses.
var knownKinds = map[schema.GroupVersionKind]func() any{
	v1.SchemeGroupVersion.WithKind("Namespace"):             func() any { return &v1.Namespace{} },
	v1.SchemeGroupVersion.WithKind("ServiceAccount"):        func() any { return &v1.ServiceAccount{} },
	v1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): func() any { return &v1.PersistentVolumeClaim{} },
	v1.SchemeGroupVersion.WithKind("Service"):               func() any { return &v1.Service{} },
	appsv1.SchemeGroupVersion.WithKind("Deployment"):        func() any { return &appsv1.Deployment{} },
	admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration"): func() any {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{}
	},
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"):  func() any { return &policyv1.PodDisruptionBudget{} },
	networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"):    func() any { return &networkingv1.NetworkPolicy{} },
	rbacv1.SchemeGroupVersion.WithKind("ClusterRole"):            func() any { return &rbacv1.ClusterRole{} },
	rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"):     func() any { return &rbacv1.ClusterRoleBinding{} },
	rbacv1.SchemeGroupVersion.WithKind("Role"):                   func() any { return &rbacv1.Role{} },
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"):            func() any { return &rbacv1.RoleBinding{} },
	storagev1.SchemeGroupVersion.WithKind("StorageClass"):        func() any { return &storagev1.StorageClass{} },
	storagev1.SchemeGroupVersion.WithKind("CSIDriver"):           func() any { return &storagev1.CSIDriver{} },
	gatewayv1.SchemeGroupVersion.WithKind("ReferenceGrant"):      func() any { return &gatewayv1.ReferenceGrant{} },
	gatewayv1beta1.SchemeGroupVersion.WithKind("ReferenceGrant"): func() any { return &gatewayv1beta1.ReferenceGrant{} },
	snapv1.SchemeGroupVersion.WithKind("VolumeSnapshot"):         func() any { return &snapv1.VolumeSnapshot{} },
	snapv1.SchemeGroupVersion.WithKind("VolumeSnapshotClass"):    func() any { return &snapv1.VolumeSnapshotClass{} },
	snapv1.SchemeGroupVersion.WithKind("VolumeSnapshotContent"):  func() any { return &snapv1.VolumeSnapshotContent{} },
	snapv1alpha1.SchemeGroupVersion.WithKind(snapv1alpha1.Kind):  func() any { return &snapv1alpha1.VolumeSnapshotLink{} },
	transferv1alpha1.SchemeGroupVersion.WithKind("StorageTransferRequest"): func() any {
		return &transferv1alpha1.StorageTransferRequest{}
	},
	transferv1alpha1.SchemeGroupVersion.WithKind("StorageTransferAccept"): func() any {
		return &transferv1alpha1.StorageTransferAccept{}
	},
	populatorKind: func() any { return &popv1beta1.VolumePopulator{} },
	v1.SchemeGroupVersion.WithKind("ConfigMap"):            func() any { return &v1.ConfigMap{} },
	monitoringv1.SchemeGroupVersion.WithKind("PodMonitor"): func() any { return &monitoringv1.PodMonitor{} },
	monitoringv1.SchemeGroupVersion.WithKind("PrometheusRule"): func() any {
		return &monitoringv1.PrometheusRule{}
	},

	// The CRDs of deploy/crds, which controller-gen writes from pkg/apis
	// and crd_test.go checks, decode into unstructured objects, without
	// the strict field check: this module does not build with their Go
	// type.
	crdKind: func() any { return &unstructured.Unstructured{} },
}

// crdKind is the kind of knownKinds decoded into unstructured objects;
// populatorKind that of deploy/populator's VolumePopulator.
var (
	crdKind       = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	populatorKind = popv1beta1.SchemeGroupVersion.WithKind(popv1beta1.Kind)
)

// manifest is one decoded YAML document of a file under deploy/.
type manifest struct {
	// source is "<file relative to deploy/>#<document index>".
	source string
	gvk    schema.GroupVersionKind
	// obj is a pointer to the typed struct knownKinds gives for gvk.
	obj any
}

// objectMeta returns the metadata of m's object.
func (m manifest) objectMeta() metav1.Object {
	return m.obj.(metav1.Object)
}

// key names m's object as "<Kind> [<namespace>/]<name>".
func (m manifest) key() string {
	return objectKey(m.gvk.Kind, m.objectMeta().GetNamespace(), m.objectMeta().GetName())
}

// readManifests decodes every YAML document under dir but kustomize's
// kustomization files (kustomize_test.go renders those). It returns the
// documents that decode strictly and an error for each that does not; the
// error is fatal when dir cannot be read or holds no document.
func readManifests(dir string) ([]manifest, []error, error) {
	var manifests []manifest
	var decodeErrs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isYAML(path) || isKustomization(path) {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		decoded, errs, err := decodeDocuments(filepath.ToSlash(rel), data)
		if err != nil {
			return err
		}
		manifests = append(manifests, decoded...)
		decodeErrs = append(decodeErrs, errs...)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(manifests)+len(decodeErrs) == 0 {
		return nil, nil, fmt.Errorf("no YAML documents under %s", dir)
	}
	return manifests, decodeErrs, nil
}

// loadManifests returns the documents under deploy/ that decode strictly.
// Those that do not are reported once, by
// TestEveryManifestDecodesStrictlyAndValidates, not by every caller.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	manifests, _, err := readManifests(deployDir)
	if err != nil {
		t.Fatal(err)
	}
	return manifests
}

func isYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// isKustomization tells whether path is a kustomization file, which
// configures kustomize and is no Kubernetes object.
func isKustomization(path string) bool {
	return slices.Contains(kustomizationFiles, filepath.Base(path))
}

// kustomizationFiles are the names kustomize reads a kustomization from.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// decodeDocuments decodes the YAML documents of data, which come from
// source (a file, or a kustomize output). It returns the documents that
// decode strictly and an error for each that does not; the error is fatal
// when data cannot be split into documents.
func decodeDocuments(source string, data []byte) ([]manifest, []error, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	var manifests []manifest
	var decodeErrs []error
	for i, doc := range docs {
		docSource := fmt.Sprintf("%s#%d", source, i)
		gvk, obj, err := decodeStrict(doc)
		switch {
		case errors.Is(err, errEmptyDocument):
		case err != nil:
			decodeErrs = append(decodeErrs, fmt.Errorf("%s: %w", docSource, err))
		default:
			manifests = append(manifests, manifest{source: docSource, gvk: gvk, obj: obj})
		}
	}
	return manifests, decodeErrs, nil
}

// splitDocuments splits data into its "---"-separated YAML documents.
func splitDocuments(data []byte) ([][]byte, error) {
	reader := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// errEmptyDocument is decodeStrict's error for a document holding only
// comments or nothing, which kubectl skips too.
var errEmptyDocument = errors.New("empty document")

// decodeStrict decodes one YAML document into the typed struct of its kind
// the way kube-apiserver's strict field validation does: YAML with
// duplicate keys is refused, field names match case-sensitively, and a
// field the struct does not have is an error, not silently dropped.
func decodeStrict(doc []byte) (schema.GroupVersionKind, any, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("converting YAML to JSON: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return schema.GroupVersionKind{}, nil, errEmptyDocument
	}
	var typeMeta metav1.TypeMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &typeMeta); err != nil {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	gvk := typeMeta.GroupVersionKind()
	newObj, ok := knownKinds[gvk]
	if !ok {
		return gvk, nil, fmt.Errorf("unknown kind %q in apiVersion %q: add it to knownKinds with its typed struct", gvk.Kind, typeMeta.APIVersion)
	}
	obj := newObj()
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		return gvk, nil, fmt.Errorf("decoding %s: %w", gvk.Kind, err)
	}
	if len(strictErrs) > 0 {
		return gvk, nil, fmt.Errorf("decoding %s strictly: %w", gvk.Kind, errors.Join(strictErrs...))
	}
	return gvk, obj, nil
}

func TestEveryManifestDecodesStrictlyAndValidates(t *testing.T) {
	manifests, decodeErrs, err := readManifests(deployDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range decodeErrs {
		t.Error(err)
	}
	for _, m := range manifests {
		for _, err := range validate(m.obj) {
			t.Errorf("%s: %s %s: %v", m.source, m.gvk.Kind, m.objectMeta().GetName(), err)
		}
	}
}

// validate runs the checks the typed structs cannot express and that the
// API server or CRD would run on obj (the project's own rules, from pkg/).
func validate(obj any) field.ErrorList {
	switch o := obj.(type) {
	case *gatewayv1.ReferenceGrant:
		return referencegrant.ValidateSpec(o.Spec)
	case *gatewayv1beta1.ReferenceGrant:
		return referencegrant.ValidateSpec(gatewayv1.ReferenceGrantSpec(o.Spec))
	case *v1.PersistentVolumeClaim:
		return datasource.ValidateClaimSources(o.Spec)
	}
	return nil
}

// The objects deploy/ documents, by the part of it they are in (see
// kustomize_test.go for which kustomization installs which).
var (
	// crdObjects are in deploy/crds.
	crdObjects = []string{
		"CustomResourceDefinition volumesnapshotlinks.snapshot.storage.k8s.io",
		"CustomResourceDefinition volumepopulators.populator.storage.k8s.io",
		"CustomResourceDefinition storagetransferrequests.transfer.xns-csi.io",
		"CustomResourceDefinition storagetransferaccepts.transfer.xns-csi.io",
	}
	// sidecarObjects are in deploy/csi-provisioner.
	sidecarObjects = []string{
		"ServiceAccount default/csi-provisioner",
		"ClusterRole external-provisioner-runner",
		"ClusterRoleBinding csi-provisioner-role",
		"Role default/external-provisioner-cfg",
		"RoleBinding default/csi-provisioner-role-cfg",
		"Role default/external-provisioner-capacity",
		"RoleBinding default/csi-provisioner-role-capacity",
		"Deployment default/csi-provisioner",
	}
	// transferObjects are in deploy/transfer.
	transferObjects = []string{
		"ServiceAccount default/storage-transfer-controller",
		"ClusterRole storage-transfer-controller",
		"ClusterRoleBinding storage-transfer-controller",
		"Role default/storage-transfer-controller-leader-election",
		"RoleBinding default/storage-transfer-controller-leader-election",
		"Deployment default/storage-transfer-controller",
		"ClusterRole storage-transfer-controller-token-secrets",
		"ClusterRole storage-transfer-edit",
	}
	// validatorObjects are in deploy/validator.
	validatorObjects = []string{
		"ServiceAccount default/volume-data-source-validator",
		"ClusterRole volume-data-source-validator",
		"ClusterRoleBinding volume-data-source-validator",
		"Role default/volume-data-source-validator-leader-election",
		"RoleBinding default/volume-data-source-validator-leader-election",
		"Deployment default/volume-data-source-validator",
	}
	// haObjects are in deploy/overlays/ha, which patches the sidecar's
	// Deployment too.
	haObjects = []string{
		"PodDisruptionBudget default/csi-provisioner",
	}
	// webhookObjects are in deploy/webhook.
	webhookObjects = []string{
		"ServiceAccount default/snapshot-validation-webhook",
		"ClusterRole snapshot-validation-webhook",
		"ClusterRoleBinding snapshot-validation-webhook",
		"Deployment default/snapshot-validation-webhook",
		"PodDisruptionBudget default/snapshot-validation-webhook",
		"Service default/snapshot-validation-webhook",
		"ValidatingWebhookConfiguration validation-webhook.snapshot.storage.k8s.io",
		"NetworkPolicy default/snapshot-validation-webhook",
	}
	// populatorObjects are in deploy/populator.
	populatorObjects = []string{
		"VolumePopulator volumesnapshotlink",
	}
	// monitoringObjects are in deploy/overlays/monitoring.
	monitoringObjects = []string{
		"PodMonitor default/csi-provisioner",
		"PodMonitor default/volume-data-source-validator",
		"PodMonitor default/snapshot-validation-webhook",
		"PodMonitor default/storage-transfer-controller",
		"PrometheusRule default/xns-csi",
	}
	// exampleObjects are in deploy/examples.
	exampleObjects = []string{
		"StorageClass csi-example",
		"Namespace prod",
		"Namespace test",
		"ReferenceGrant prod/bar",
		"PersistentVolumeClaim test/foo-testing",
		"PersistentVolumeClaim prod/foo",
		"VolumeSnapshot prod/foo-backup",
		"VolumeSnapshotClass csi-example-snapclass",
		"ReferenceGrant prod/bar-links",
		"VolumeSnapshotLink test/foo-link",
		"PersistentVolumeClaim test/foo-testing-via-link",
		"StorageTransferRequest prod/foo-to-test",
		"StorageTransferAccept test/from-prod",
	}
)

func TestDeployHasTheDocumentedObjects(t *testing.T) {
	have := map[string]bool{}
	for _, m := range loadManifests(t) {
		have[m.key()] = true
	}
	for _, want := range slices.Concat(crdObjects, sidecarObjects, validatorObjects, haObjects, webhookObjects, populatorObjects, exampleObjects, transferObjects, monitoringObjects) {
		if !have[want] {
			t.Errorf("deploy/ has no %s", want)
		}
	}
}

func objectKey(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

func TestDecodeStrict(t *testing.T) {
	tests := map[string]struct {
		doc     string
		wantErr string // substring; empty means success
	}{
		"a known kind with known fields decodes": {
			doc: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n",
		},
		"a document with only comments is empty": {
			doc:     "# nothing here\n",
			wantErr: errEmptyDocument.Error(),
		},
		"an unknown kind is refused": {
			doc:     "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
			wantErr: `unknown kind "Widget"`,
		},
		"a known kind in an unknown version is refused": {
			doc:     "apiVersion: gateway.networking.k8s.io/v1alpha2\nkind: ReferenceGrant\nmetadata:\n  name: bar\n",
			wantErr: `unknown kind "ReferenceGrant"`,
		},
		"the KEP's dataSourceRef2 is an unknown field": {
			doc:     "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\nspec:\n  dataSourceRef2:\n    kind: VolumeSnapshot\n    name: s\n",
			wantErr: `unknown field "spec.dataSourceRef2"`,
		},
		"a field name in the wrong case is an unknown field": {
			doc:     "apiVersion: v1\nkind: Namespace\nmetadata:\n  Name: prod\n",
			wantErr: `unknown field "metadata.Name"`,
		},
		"a duplicate key is refused": {
			doc:     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n  name: test\n",
			wantErr: "already set in map",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := decodeStrict([]byte(tc.doc))
			checkErr(t, err, tc.wantErr)
		})
	}
}

// checkErr fails t unless err contains wantErr, or is nil when wantErr is
// empty.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("Got error %v, want none", err)
	case wantErr != "" && err == nil:
		t.Errorf("Got no error, want one containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("Got error %v, want one containing %q", err, wantErr)
	}
}
