package manifests

import (
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The optional overlay deploy/overlays/webhook-guard: the webhook with its
// DELETE guard (--guard-cross-namespace-restores).

// guardRole is the ClusterRole of the guard's caches.
const guardRole = "snapshot-validation-webhook-guard"

// webhookGuardObjects are what the overlay adds to deploy/webhook.
var webhookGuardObjects = []string{"ClusterRole " + guardRole, "ClusterRoleBinding " + guardRole}

// guardPermissions is exactly what the guard's ClusterRole grants: list and
// watch of what internal/shared/sourceuse reads from informers.
var guardPermissions = []permission{
	{"", "persistentvolumeclaims", []string{"list", "watch"}},
	{"", "persistentvolumes", []string{"list", "watch"}},
	{"gateway.networking.k8s.io", "referencegrants", []string{"list", "watch"}},
	{"snapshot.storage.k8s.io", "volumesnapshotlinks", []string{"list", "watch"}},
	{"snapshot.storage.k8s.io", "volumesnapshots", []string{"list", "watch"}},
	{"storage.k8s.io", "storageclasses", []string{"list", "watch"}},
}

func TestWebhookGuardRoleGrantsExactlyWhatItUses(t *testing.T) {
	checkGrantsExactly(t, "ClusterRole", guardRole, guardPermissions, "webhook's DELETE guard")
}

// TestWebhookGuardOverlay: the overlay runs the webhook with the flag and
// the sidecars' cross-namespace settings (without which it refuses to
// start), binds the guard's role to its
// ServiceAccount, and adds a webhook entry for DELETE of volumesnapshots
// only, on the same Service and path, Ignore and 2 s as the first; the
// first entry still sees no DELETE.
func TestWebhookGuardOverlay(t *testing.T) {
	var deployment *appsv1.Deployment
	var config *admissionregistrationv1.ValidatingWebhookConfiguration
	bound := false
	for _, m := range kustomize(t, filepath.Join(deployDir, "overlays", "webhook-guard")) {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			deployment = o
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			config = o
		case *rbacv1.ClusterRoleBinding:
			bound = bound || o.RoleRef.Name == guardRole &&
				slices.Contains(o.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: webhookName})
		}
	}
	if deployment == nil || config == nil {
		t.Fatalf("deploy/overlays/webhook-guard renders no Deployment or no ValidatingWebhookConfiguration")
	}
	if !bound {
		t.Errorf("ClusterRole %s is not bound to ServiceAccount default/%s", guardRole, webhookName)
	}
	args := deployment.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--guard-cross-namespace-restores", "--feature-gates=CrossNamespaceSourceProvisioning=true", "--cross-namespace-snapshot"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q, want %s", args, want)
		}
	}
	if len(config.Webhooks) != 2 {
		t.Fatalf("%d webhooks, want 2", len(config.Webhooks))
	}
	first, guard := config.Webhooks[0], config.Webhooks[1]
	for _, rule := range first.Rules {
		if slices.Contains(rule.Operations, admissionregistrationv1.Delete) {
			t.Errorf("the first entry's rule %+v registers DELETE", rule)
		}
	}
	want := admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"volumesnapshots"}}}
	if len(guard.Rules) != 1 || !slices.Equal(guard.Rules[0].Operations, want.Operations) || !slices.Equal(guard.Rules[0].APIGroups, want.APIGroups) ||
		!slices.Equal(guard.Rules[0].Resources, want.Resources) {
		t.Errorf("guard rules %+v, want DELETE of snapshot.storage.k8s.io/volumesnapshots only", guard.Rules)
	}
	s, fs := guard.ClientConfig.Service, first.ClientConfig.Service
	if s == nil || fs == nil || s.Name != fs.Name || s.Namespace != fs.Namespace || *s.Path != *fs.Path || *s.Port != *fs.Port {
		t.Errorf("guard clientConfig %+v, want the first entry's %+v", s, fs)
	}
	if guard.FailurePolicy == nil || *guard.FailurePolicy != admissionregistrationv1.Ignore || guard.TimeoutSeconds == nil || *guard.TimeoutSeconds != 2 {
		t.Errorf("guard failurePolicy %v, timeoutSeconds %v; want Ignore, 2", guard.FailurePolicy, guard.TimeoutSeconds)
	}
	if guard.SideEffects == nil || *guard.SideEffects != admissionregistrationv1.SideEffectClassNone || !slices.Equal(guard.AdmissionReviewVersions, []string{"v1"}) {
		t.Errorf("guard sideEffects %v, admissionReviewVersions %v; want None, [v1]", guard.SideEffects, guard.AdmissionReviewVersions)
	}
}
