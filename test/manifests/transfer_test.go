package manifests

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// transferName is the name of the storage-transfer-controller's
// Deployment, container, ServiceAccount and ClusterRole.
const transferName = "storage-transfer-controller"

// transferPermissions is exactly what the controller's ClusterRole grants:
// list and watch of what its informers read, the writes of the transfer
// steps (internal/transfer/actions.go), and the reads afresh before the
// source's deletion and the target's creation (get: the request, its
// accept, the source; internal/transfer/sync.go).
var transferPermissions = []permission{
	{"transfer.xns-csi.io", "storagetransferrequests", []string{"get", "list", "watch", "update", "delete"}},
	{"transfer.xns-csi.io", "storagetransferaccepts", []string{"get", "list", "watch", "delete"}},
	{"transfer.xns-csi.io", "storagetransferrequests/status", []string{"update"}},
	{"transfer.xns-csi.io", "storagetransferaccepts/status", []string{"update"}},
	{"snapshot.storage.k8s.io", "volumesnapshots", []string{"get", "list", "watch", "create", "update", "delete"}},
	{"snapshot.storage.k8s.io", "volumesnapshotcontents", []string{"list", "watch", "create", "update", "delete"}},
	{"", "persistentvolumeclaims", []string{"get", "list", "watch", "create", "update", "delete"}},
	{"", "persistentvolumes", []string{"list", "watch", "update"}},
	{"", "pods", []string{"list", "watch"}},
	{"", "events", []string{"create", "patch"}},
}

func TestTransferRolesGrantExactlyWhatItUses(t *testing.T) {
	checkGrantsExactly(t, "ClusterRole", transferName, transferPermissions, "storage-transfer-controller")
	checkGrantsExactly(t, "Role", transferName+"-leader-election", validatorLeasePermissions, "storage-transfer-controller")
	checkGrantsExactly(t, "ClusterRole", "storage-transfer-edit", []permission{
		{"transfer.xns-csi.io", "storagetransferrequests", []string{"get", "list", "watch", "create", "delete"}},
		{"transfer.xns-csi.io", "storagetransferaccepts", []string{"get", "list", "watch", "create", "delete"}},
	}, "namespace owner")
	checkGrantsExactly(t, "ClusterRole", transferName+"-token-secrets", []permission{{"", "secrets", []string{"get"}}}, "storage-transfer-controller")
}

// TestTransferTokenSecretsRoleIsBoundByNoOne: the controller reads Secrets
// only in the namespaces that bind the role themselves.
func TestTransferTokenSecretsRoleIsBoundByNoOne(t *testing.T) {
	for _, m := range loadManifests(t) {
		switch b := m.obj.(type) {
		case *rbacv1.ClusterRoleBinding:
			if b.RoleRef.Name == transferName+"-token-secrets" {
				t.Errorf("ClusterRoleBinding %s binds the token Secrets role cluster-wide", b.Name)
			}
		case *rbacv1.RoleBinding:
			if b.RoleRef.Name == transferName+"-token-secrets" {
				t.Errorf("RoleBinding %s/%s binds the token Secrets role", b.Namespace, b.Name)
			}
		}
	}
}

func TestTransferUserRoleIsAggregatedToAdminAndEditOnly(t *testing.T) {
	for _, m := range loadManifests(t) {
		role, ok := m.obj.(*rbacv1.ClusterRole)
		if !ok || role.Name != "storage-transfer-edit" {
			continue
		}
		l := role.Labels
		if l["rbac.authorization.k8s.io/aggregate-to-admin"] != "true" || l["rbac.authorization.k8s.io/aggregate-to-edit"] != "true" {
			t.Errorf("storage-transfer-edit labels = %v, want aggregated to admin and edit", l)
		}
		// view would let readers of the source namespace see the token.
		if _, ok := l["rbac.authorization.k8s.io/aggregate-to-view"]; ok {
			t.Error("storage-transfer-edit is aggregated to view, whose users could read tokens")
		}
		return
	}
	t.Error("deploy/ has no ClusterRole storage-transfer-edit")
}

func TestTransferDeployment(t *testing.T) {
	var d *appsv1.Deployment
	for _, m := range loadManifests(t) {
		if o, ok := m.obj.(*appsv1.Deployment); ok && o.Name == transferName {
			d = o
		}
	}
	if d == nil {
		t.Fatal("deploy/ has no Deployment storage-transfer-controller")
	}
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 2 || !slices.Contains(c.Args, "--leader-election") || d.Spec.Template.Spec.ServiceAccountName != transferName {
		t.Errorf("Deployment = %d replicas, args %v, service account %s; want 2 under leader election as %s",
			*d.Spec.Replicas, c.Args, d.Spec.Template.Spec.ServiceAccountName, transferName)
	}
	if !slices.Equal(c.Command, []string{"/storage-transfer-controller"}) {
		t.Errorf("Command = %v, want the controller's binary of the image", c.Command)
	}
	if sc := c.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("SecurityContext = %+v, want non-root with a read-only root", sc)
	}
}
