package manifests

import (
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// validatorName is the name of the validator's Deployment, container,
// ServiceAccount and ClusterRole.
const validatorName = "volume-data-source-validator"

// validatorDirs are the kustomizations that install the validator.
var validatorDirs = []string{".", "validator", "overlays/ha"}

// validatorPermissions is exactly what the validator's ClusterRole grants:
// list and watch of what its informers read (never get: it reads caches
// only), and events.
var validatorPermissions = []permission{
	{"", "persistentvolumeclaims", []string{"list", "watch"}},
	{"", "events", []string{"create", "patch"}},
	{"populator.storage.k8s.io", "volumepopulators", []string{"list", "watch"}},
	{"gateway.networking.k8s.io", "referencegrants", []string{"list", "watch"}},
	{"snapshot.storage.k8s.io", "volumesnapshotlinks", []string{"list", "watch"}},
}

// validatorLeasePermissions is exactly what its leader-election Role
// grants: csi-lib-utils' Lease lock gets, creates and updates the Lease.
var validatorLeasePermissions = []permission{
	{"coordination.k8s.io", "leases", []string{"get", "create", "update"}},
}

func TestValidatorRolesGrantExactlyWhatItUses(t *testing.T) {
	for _, c := range []struct {
		kind, name  string
		permissions []permission
	}{
		{"ClusterRole", validatorName, validatorPermissions},
		{"Role", validatorName + "-leader-election", validatorLeasePermissions},
	} {
		checkGrantsExactly(t, c.kind, c.name, c.permissions, "validator")
	}
}

func TestValidatorBindingsGrantItsServiceAccount(t *testing.T) {
	d := validatorDeployment(t, loadManifests(t))
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: d.Namespace, Name: d.Spec.Template.Spec.ServiceAccountName}
	bound := map[string]bool{}
	for _, m := range loadManifests(t) {
		switch o := m.obj.(type) {
		case *rbacv1.ClusterRoleBinding:
			if slices.Contains(o.Subjects, sa) {
				bound["ClusterRole "+o.RoleRef.Name] = true
			}
		case *rbacv1.RoleBinding:
			if o.Namespace == d.Namespace && slices.Contains(o.Subjects, sa) {
				bound["Role "+o.RoleRef.Name] = true
			}
		}
	}
	for _, want := range []string{"ClusterRole " + validatorName, "Role " + validatorName + "-leader-election"} {
		if !bound[want] {
			t.Errorf("%s is not bound to ServiceAccount %s/%s", want, sa.Namespace, sa.Name)
		}
	}
}

// TestValidatorDeployment checks the validator's Deployment as every
// kustomization renders it: two replicas under leader election, the image
// of the sidecar (pinned) with the validator's binary, its probes and its
// memory request.
func TestValidatorDeployment(t *testing.T) {
	for _, dir := range validatorDirs {
		t.Run(dir, func(t *testing.T) {
			d := validatorDeployment(t, kustomize(t, filepath.Join(deployDir, dir)))
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
			}
			c := validatorContainer(t, d)
			if problem := imageProblem(c.Image); problem != "" {
				t.Errorf("image %q: %s", c.Image, problem)
			}
			if !slices.Equal(c.Command, []string{"/" + validatorName}) {
				t.Errorf("command %q, want the image's /%s", c.Command, validatorName)
			}
			if !slices.ContainsFunc(c.Args, isLeaderElectionOn) {
				t.Errorf("args %q, want --leader-election", c.Args)
			}
			if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
				t.Errorf("readiness probe %+v, want GET /readyz", p)
			}
			if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz/leader-election" {
				t.Errorf("liveness probe %+v, want GET /healthz/leader-election", p)
			}
			if _, ok := c.Resources.Requests[v1.ResourceMemory]; !ok {
				t.Error("no memory request")
			}
			if sc := c.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Errorf("securityContext %+v, want runAsNonRoot", sc)
			}
		})
	}
}

func validatorDeployment(t *testing.T, manifests []manifest) *appsv1.Deployment {
	t.Helper()
	for _, m := range manifests {
		if d, ok := m.obj.(*appsv1.Deployment); ok && d.Name == validatorName {
			return d
		}
	}
	t.Fatalf("No Deployment %s", validatorName)
	return nil
}

func validatorContainer(t *testing.T, d *appsv1.Deployment) *v1.Container {
	t.Helper()
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c v1.Container) bool { return c.Name == validatorName })
	if i < 0 {
		t.Fatalf("Deployment %s has no container %s", d.Name, validatorName)
	}
	return &d.Spec.Template.Spec.Containers[i]
}
