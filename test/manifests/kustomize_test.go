package manifests

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kustomizations are the kustomize directories under deploy/ (relative to
// it) and the objects each renders. The top level installs everything the
// project ships; populator/ is left out of it because its VolumePopulator cannot be created in the same apply as its CRD,
// and examples/ has no kustomization. overlays/ha installs what the top
// level does, changed for high availability. webhook/ is left out of the
// top level because it needs a certificate first; overlays/webhook-guard
// installs it with its optional DELETE guard, overlays/webhook-cert-manager
// with its certificate from cert-manager.
var kustomizations = map[string][]string{
	".":                      slices.Concat(crdObjects, sidecarObjects, validatorObjects, transferObjects),
	"crds":                   crdObjects,
	"csi-provisioner":        sidecarObjects,
	"validator":              validatorObjects,
	"transfer":               transferObjects,
	"populator":              populatorObjects,
	"webhook":                webhookObjects,
	"overlays/ha":            slices.Concat(crdObjects, sidecarObjects, validatorObjects, transferObjects, haObjects),
	"overlays/webhook-guard": slices.Concat(webhookObjects, webhookGuardObjects),
	certManagerOverlay:       slices.Concat(webhookObjects, certManagerObjects),
	"overlays/monitoring":    slices.Concat(monitoringObjects, generated["overlays/monitoring"]),
}

// generated are the objects a kustomization generates rather than holds in
// a file of its own: the dashboard's ConfigMap, from its JSON file.
var generated = map[string][]string{
	"overlays/monitoring": {"ConfigMap default/xns-csi-dashboard"},
}

// overlays are the kustomizations of kustomizations that patch the objects
// of their bases: those render unlike their files on purpose (overlay_test.go
// checks what the patches make of them), and an overlay's directory holds
// only the objects it adds.
var overlays = []string{"overlays/ha", "overlays/webhook-guard", certManagerOverlay}

func isOverlay(dir string) bool {
	return slices.Contains(overlays, dir)
}

// kustomize renders the kustomization in dir with `kubectl kustomize`, the
// kustomize that `kubectl apply -k` uses, and decodes its output strictly.
func kustomize(t *testing.T, dir string) []manifest {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("Rendering the kustomizations needs kubectl on PATH, as the e2e suite does: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), kubectl, "kustomize", dir).Output()
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
		t.Fatalf("kubectl kustomize %s: %v: %s", dir, err, exitErr.Stderr)
	}
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	manifests, decodeErrs, err := decodeDocuments("kubectl kustomize "+dir, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range decodeErrs {
		t.Error(err)
	}
	return manifests
}

func TestEveryKustomizationIsListed(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(deployDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isKustomization(path) {
			return err
		}
		rel, err := filepath.Rel(deployDir, filepath.Dir(path))
		found[filepath.ToSlash(rel)] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range found {
		if _, ok := kustomizations[dir]; !ok {
			t.Errorf("%s has a kustomization that is not in kustomizations: add it, with the objects it renders", shown(dir))
		}
	}
	for dir := range kustomizations {
		if !found[dir] {
			t.Errorf("%s has no kustomization.yaml", shown(dir))
		}
	}
}

func TestKustomizationsRenderTheirObjects(t *testing.T) {
	files := map[string]manifest{}
	for _, m := range loadManifests(t) {
		files[m.key()] = m
	}
	for dir, want := range kustomizations {
		t.Run(dir, func(t *testing.T) {
			var got []string
			for _, m := range kustomize(t, filepath.Join(deployDir, dir)) {
				got = append(got, m.key())
				file, ok := files[m.key()]
				if !ok || (isOverlay(dir) && !strings.HasPrefix(file.source, dir+"/")) {
					continue
				}
				// kustomize adds no transformer here (an overlay's patches
				// change only its bases' objects): what it installs is
				// what the files say, and what the other tests check.
				if !apiequality.Semantic.DeepEqual(file.obj, m.obj) {
					t.Errorf("%s renders %s unlike %s", shown(dir), m.key(), file.source)
				}
			}
			if !sameElements(got, want) {
				t.Errorf("kubectl kustomize %s renders\n  %s\nwant\n  %s", shown(dir), strings.Join(sorted(got), "\n  "), strings.Join(sorted(want), "\n  "))
			}
		})
	}
}

// TestComponentsShipEveryFileTheyHold fails when a manifest is added to a
// component directory (or under it) without its kustomization listing it.
// A component renders exactly the files it holds; an overlay renders its
// bases' objects as well.
func TestComponentsShipEveryFileTheyHold(t *testing.T) {
	for dir := range kustomizations {
		if dir == "." {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			inFiles, decodeErrs, err := readManifests(filepath.Join(deployDir, dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range decodeErrs {
				t.Error(err)
			}
			var want, got []string
			for _, m := range inFiles {
				want = append(want, m.key())
			}
			want = append(want, generated[dir]...)
			for _, m := range kustomize(t, filepath.Join(deployDir, dir)) {
				got = append(got, m.key())
			}
			if isOverlay(dir) {
				for _, key := range want {
					if !slices.Contains(got, key) {
						t.Errorf("%s holds %s, which its kustomization does not render", shown(dir), key)
					}
				}
				return
			}
			if !sameElements(got, want) {
				t.Errorf("%s holds\n  %s\nbut its kustomization renders\n  %s", shown(dir), strings.Join(sorted(want), "\n  "), strings.Join(sorted(got), "\n  "))
			}
		})
	}
}

// TestNamespaceOverlayMovesTheSidecar renders overlays of deploy/ and of
// deploy/overlays/ha that set a namespace, as the comments of
// deploy/csi-provisioner tell users to: the sidecar's namespaced objects
// and the bindings' subjects move, the cluster-scoped objects stay
// cluster-scoped.
func TestNamespaceOverlayMovesTheSidecar(t *testing.T) {
	for _, dir := range []string{".", "overlays/ha"} {
		t.Run(dir, func(t *testing.T) {
			for _, m := range kustomizeOverlay(t, dir, "namespace: csi-system\n") {
				ns := m.objectMeta().GetNamespace()
				switch o := m.obj.(type) {
				case *rbacv1.ClusterRole, *unstructured.Unstructured: // the ClusterRole and the CRDs
					if ns != "" {
						t.Errorf("%s got namespace %s, want none (cluster-scoped)", m.key(), ns)
					}
				case *rbacv1.ClusterRoleBinding:
					checkSubjectsIn(t, m.key(), o.Subjects, "csi-system")
				case *rbacv1.RoleBinding:
					checkSubjectsIn(t, m.key(), o.Subjects, "csi-system")
					if ns != "csi-system" {
						t.Errorf("%s is in %q, want csi-system", m.key(), ns)
					}
				default:
					if ns != "csi-system" {
						t.Errorf("%s is in %q, want csi-system", m.key(), ns)
					}
				}
			}
		})
	}
}

// kustomizeOverlay renders a kustomization in a temporary directory with
// deploy/<dir> as its base and the fields extra (YAML), as a user's overlay
// of it would be.
func kustomizeOverlay(t *testing.T, dir, extra string) []manifest {
	t.Helper()
	overlay := t.TempDir()
	abs, err := filepath.Abs(filepath.Join(deployDir, dir))
	if err != nil {
		t.Fatal(err)
	}
	// kustomize refuses absolute paths to a base.
	base, err := filepath.Rel(overlay, abs)
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + filepath.ToSlash(base) + "\n" + extra
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	return kustomize(t, overlay)
}

func checkSubjectsIn(t *testing.T, binding string, subjects []rbacv1.Subject, namespace string) {
	t.Helper()
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace != namespace {
			t.Errorf("%s binds ServiceAccount %s/%s, want it in %s", binding, s.Namespace, s.Name, namespace)
		}
	}
}

// shown names dir, relative to deploy/, in messages.
func shown(dir string) string {
	return filepath.ToSlash(filepath.Join("deploy", dir))
}

// sameElements tells whether a and b hold the same strings, in any order.
func sameElements(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
