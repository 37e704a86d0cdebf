package manifests

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// permission is one API group and resource with the verbs a role grants
// on it.
type permission struct {
	group, resource string
	verbs           []string
}

// clusterRolePermissions is exactly what the ClusterRole of
// deploy/csi-provisioner/rbac.yaml must grant: what the sidecar and its
// vendored provisioning library call (see the comments in that file). A
// verb missing here breaks the sidecar; a verb added in the YAML but not
// here fails TestClusterRoleGrantsNothingElse, to keep the role
// least-privilege.
var clusterRolePermissions = []permission{
	{"", "persistentvolumes", []string{"get", "list", "watch", "create", "patch", "delete"}},
	{"", "persistentvolumeclaims", []string{"get", "list", "watch", "patch", "update"}},
	{"storage.k8s.io", "storageclasses", []string{"get", "list", "watch"}},
	{"storage.k8s.io", "csinodes", []string{"get", "list", "watch"}},
	{"", "nodes", []string{"get", "list", "watch"}},
	{"storage.k8s.io", "volumeattributesclasses", []string{"list", "watch"}},
	{"storage.k8s.io", "volumeattachments", []string{"list", "watch"}},
	{"", "events", []string{"create", "patch"}},
	{"", "secrets", []string{"get"}},
	{"snapshot.storage.k8s.io", "volumesnapshots", []string{"get", "list", "watch", "patch"}},
	{"snapshot.storage.k8s.io", "volumesnapshotcontents", []string{"get", "list", "watch"}},
	{"gateway.networking.k8s.io", "referencegrants", []string{"get", "list", "watch"}},
	{"snapshot.storage.k8s.io", "volumesnapshotlinks", []string{"list", "watch"}},
	{"snapshot.storage.k8s.io", "volumesnapshotlinks/status", []string{"update"}},
}

// rolePermissions are the namespaced Roles of rbac.yaml, in the sidecar's
// namespace, and exactly what each must grant, like clusterRolePermissions.
var rolePermissions = map[string][]permission{
	// Leader election.
	"external-provisioner-cfg": {
		{"coordination.k8s.io", "leases", []string{"get", "watch", "list", "delete", "update", "create"}},
	},
	// Storage capacity tracking (--enable-capacity), up to the owner of
	// --capacity-ownerref-level=2.
	"external-provisioner-capacity": {
		{"storage.k8s.io", "csistoragecapacities", []string{"list", "watch", "create", "update", "delete"}},
		{"", "pods", []string{"get"}},
		{"apps", "replicasets", []string{"get"}},
	},
}

// missingVerbs returns the verbs of want that no rule of rules grants on
// want's group and resource.
func missingVerbs(rules []rbacv1.PolicyRule, want permission) []string {
	granted := grantedVerbs(rules, want.group, want.resource)
	var missing []string
	for _, v := range want.verbs {
		if !granted.Has(v) && !granted.Has(rbacv1.VerbAll) {
			missing = append(missing, v)
		}
	}
	return missing
}

// grantedVerbs returns the verbs rules grant on group and resource.
func grantedVerbs(rules []rbacv1.PolicyRule, group, resource string) sets.Set[string] {
	verbs := sets.New[string]()
	for _, r := range rules {
		if matches(r.APIGroups, group) && matches(r.Resources, resource) {
			verbs.Insert(r.Verbs...)
		}
	}
	return verbs
}

func matches(values []string, want string) bool {
	return slices.Contains(values, want) || slices.Contains(values, "*")
}

// extraGrants describes every group, resource and verb rules grant beyond
// allowed, wildcards and non-resource URLs included.
func extraGrants(rules []rbacv1.PolicyRule, allowed []permission) []string {
	var extra []string
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			extra = append(extra, fmt.Sprintf("nonResourceURLs %v", r.NonResourceURLs))
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !allows(allowed, g, res, v) {
						extra = append(extra, fmt.Sprintf("%s %s/%s", v, g, res))
					}
				}
			}
		}
	}
	return extra
}

func allows(allowed []permission, group, resource, verb string) bool {
	for _, p := range allowed {
		if p.group == group && p.resource == resource && slices.Contains(p.verbs, verb) {
			return true
		}
	}
	return false
}

// rulesOf returns the rules of the ClusterRole or Role named name in
// deploy/, failing t when there is none.
func rulesOf(t *testing.T, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, m := range loadManifests(t) {
		switch o := m.obj.(type) {
		case *rbacv1.ClusterRole:
			if kind == "ClusterRole" && o.Name == name {
				return o.Rules
			}
		case *rbacv1.Role:
			if kind == "Role" && o.Name == name {
				return o.Rules
			}
		}
	}
	t.Fatalf("deploy/ has no %s %s", kind, name)
	return nil
}

func TestClusterRoleGrantsWhatTheSidecarUses(t *testing.T) {
	rules := rulesOf(t, "ClusterRole", "external-provisioner-runner")
	for _, want := range clusterRolePermissions {
		if missing := missingVerbs(rules, want); len(missing) > 0 {
			t.Errorf("ClusterRole external-provisioner-runner does not grant %v on %q/%s", missing, want.group, want.resource)
		}
	}
}

func TestClusterRoleGrantsNothingElse(t *testing.T) {
	rules := rulesOf(t, "ClusterRole", "external-provisioner-runner")
	for _, extra := range extraGrants(rules, clusterRolePermissions) {
		t.Errorf("ClusterRole external-provisioner-runner grants %s, which the sidecar does not use", extra)
	}
}

func TestRolesGrantExactlyWhatTheirFeatureUses(t *testing.T) {
	for name, permissions := range rolePermissions {
		t.Run(name, func(t *testing.T) {
			rules := rulesOf(t, "Role", name)
			for _, want := range permissions {
				if missing := missingVerbs(rules, want); len(missing) > 0 {
					t.Errorf("Role %s does not grant %v on %q/%s", name, missing, want.group, want.resource)
				}
			}
			for _, extra := range extraGrants(rules, permissions) {
				t.Errorf("Role %s grants %s, which the sidecar does not use", name, extra)
			}
		})
	}
}

func TestBindingsGrantTheDeploymentsServiceAccount(t *testing.T) {
	var deployment *appsv1.Deployment
	var bindings []*rbacv1.ClusterRoleBinding
	var roleBindings []*rbacv1.RoleBinding
	for _, m := range loadManifests(t) {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			if o.Name == "csi-provisioner" {
				deployment = o
			}
		case *rbacv1.ClusterRoleBinding:
			bindings = append(bindings, o)
		case *rbacv1.RoleBinding:
			roleBindings = append(roleBindings, o)
		}
	}
	if deployment == nil {
		t.Fatal("deploy/ has no Deployment csi-provisioner")
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: deployment.Namespace, Name: deployment.Spec.Template.Spec.ServiceAccountName}
	if !slices.ContainsFunc(bindings, func(b *rbacv1.ClusterRoleBinding) bool {
		return b.RoleRef.Kind == "ClusterRole" && b.RoleRef.Name == "external-provisioner-runner" && slices.Contains(b.Subjects, sa)
	}) {
		t.Errorf("No ClusterRoleBinding grants ClusterRole external-provisioner-runner to %s %s/%s", sa.Kind, sa.Namespace, sa.Name)
	}
	// The Lease and the CSIStorageCapacity objects are in the sidecar's own
	// namespace, so the Roles must be too.
	for role := range rolePermissions {
		if !slices.ContainsFunc(roleBindings, func(b *rbacv1.RoleBinding) bool {
			return b.Namespace == deployment.Namespace && b.RoleRef.Kind == "Role" &&
				b.RoleRef.Name == role && slices.Contains(b.Subjects, sa)
		}) {
			t.Errorf("No RoleBinding in %s grants Role %s to %s %s/%s", deployment.Namespace, role, sa.Kind, sa.Namespace, sa.Name)
		}
	}
}

func TestMissingVerbs(t *testing.T) {
	referenceGrants := permission{"gateway.networking.k8s.io", "referencegrants", []string{"get", "list", "watch"}}
	snapshotPatch := permission{"snapshot.storage.k8s.io", "volumesnapshots", []string{"patch"}}
	tests := map[string]struct {
		rules []rbacv1.PolicyRule
		want  permission
		// missing are the verbs missingVerbs must report.
		missing []string
	}{
		"a rule with every verb misses nothing": {
			rules: []rbacv1.PolicyRule{rule("gateway.networking.k8s.io", "referencegrants", "get", "list", "watch")},
			want:  referenceGrants,
		},
		"verbs spread over two rules add up": {
			rules: []rbacv1.PolicyRule{
				rule("gateway.networking.k8s.io", "referencegrants", "get"),
				rule("gateway.networking.k8s.io", "referencegrants", "list", "watch"),
			},
			want: referenceGrants,
		},
		"a role that cannot watch referencegrants misses watch": {
			rules:   []rbacv1.PolicyRule{rule("gateway.networking.k8s.io", "referencegrants", "get", "list")},
			want:    referenceGrants,
			missing: []string{"watch"},
		},
		"a role without patch on volumesnapshots misses patch": {
			rules:   []rbacv1.PolicyRule{rule("snapshot.storage.k8s.io", "volumesnapshots", "get", "list", "watch")},
			want:    snapshotPatch,
			missing: []string{"patch"},
		},
		"patch on volumesnapshotcontents is not patch on volumesnapshots": {
			rules:   []rbacv1.PolicyRule{rule("snapshot.storage.k8s.io", "volumesnapshotcontents", "patch")},
			want:    snapshotPatch,
			missing: []string{"patch"},
		},
		"referencegrants in another group do not count": {
			rules:   []rbacv1.PolicyRule{rule("example.com", "referencegrants", "get", "list", "watch")},
			want:    referenceGrants,
			missing: []string{"get", "list", "watch"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := missingVerbs(tc.rules, tc.want); !slices.Equal(got, tc.missing) {
				t.Errorf("missingVerbs() = %v, want %v", got, tc.missing)
			}
		})
	}
}

func TestExtraGrants(t *testing.T) {
	allowed := []permission{{"", "secrets", []string{"get"}}}
	tests := map[string]struct {
		rules []rbacv1.PolicyRule
		want  []string
	}{
		"the allowed verbs are not extra": {
			rules: []rbacv1.PolicyRule{rule("", "secrets", "get")},
		},
		"listing secrets is extra": {
			rules: []rbacv1.PolicyRule{rule("", "secrets", "get", "list")},
			want:  []string{"list /secrets"},
		},
		"a wildcard verb is extra": {
			rules: []rbacv1.PolicyRule{rule("", "secrets", "*")},
			want:  []string{"* /secrets"},
		},
		"a wildcard resource is extra": {
			rules: []rbacv1.PolicyRule{rule("", "*", "get")},
			want:  []string{"get /*"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := extraGrants(tc.rules, allowed); !slices.Equal(got, tc.want) {
				t.Errorf("extraGrants() = %v, want %v", got, tc.want)
			}
		})
	}
}

// rule returns a policy rule granting verbs on one group and resource.
func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// checkGrantsExactly fails t unless the ClusterRole or Role kind/name of
// deploy/ grants every permission of permissions and nothing more; user
// names the component in messages.
func checkGrantsExactly(t *testing.T, kind, name string, permissions []permission, user string) {
	t.Helper()
	rules := rulesOf(t, kind, name)
	for _, want := range permissions {
		if missing := missingVerbs(rules, want); len(missing) > 0 {
			t.Errorf("%s %s does not grant %v on %q/%s", kind, name, missing, want.group, want.resource)
		}
	}
	for _, extra := range extraGrants(rules, permissions) {
		t.Errorf("%s %s grants %s, which the %s does not use", kind, name, extra, user)
	}
}
