package manifests

import (
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// webhookName is the name of the webhook's Deployment, container,
// ServiceAccount, ClusterRole, PodDisruptionBudget and Service.
const webhookName = "snapshot-validation-webhook"

// webhookPermissions is exactly what the webhook's ClusterRole grants: list
// and watch of the classes its default-class rule reads from informers,
// and the events that report a driver with two defaults.
var webhookPermissions = []permission{
	{"snapshot.storage.k8s.io", "volumesnapshotclasses", []string{"list", "watch"}},
	{"groupsnapshot.storage.k8s.io", "volumegroupsnapshotclasses", []string{"list", "watch"}},
	{"", "events", []string{"create", "patch"}},
}

func TestWebhookRoleGrantsExactlyWhatItUses(t *testing.T) {
	checkGrantsExactly(t, "ClusterRole", webhookName, webhookPermissions, "webhook")
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: webhookName}
	for _, m := range loadManifests(t) {
		if b, ok := m.obj.(*rbacv1.ClusterRoleBinding); ok && b.RoleRef.Name == webhookName && slices.Contains(b.Subjects, sa) {
			return
		}
	}
	t.Errorf("ClusterRole %s is not bound to ServiceAccount default/%s", webhookName, webhookName)
}

// webhookRender is what deploy/webhook renders.
type webhookRender struct {
	deployment *appsv1.Deployment
	pdb        *policyv1.PodDisruptionBudget
	service    *v1.Service
	config     *admissionregistrationv1.ValidatingWebhookConfiguration
	policy     *networkingv1.NetworkPolicy
}

func renderWebhook(t *testing.T) webhookRender {
	t.Helper()
	var r webhookRender
	for _, m := range kustomize(t, filepath.Join(deployDir, "webhook")) {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			r.deployment = o
		case *policyv1.PodDisruptionBudget:
			r.pdb = o
		case *v1.Service:
			r.service = o
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			r.config = o
		case *networkingv1.NetworkPolicy:
			r.policy = o
		}
	}
	if r.deployment == nil || r.pdb == nil || r.service == nil || r.config == nil || r.policy == nil {
		t.Fatalf("deploy/webhook renders %+v, want a Deployment, a PodDisruptionBudget, a Service, a ValidatingWebhookConfiguration and a NetworkPolicy", r)
	}
	return r
}

// TestWebhookDeployment: three replicas spread over nodes, a budget that
// keeps two of them through drains, a non-root container with a read-only
// root file system, the image of the sidecar (pinned) with the webhook's
// binary, and the certificate from its Secret.
func TestWebhookDeployment(t *testing.T) {
	r := renderWebhook(t)
	d := r.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want 3", d.Spec.Replicas)
	}
	pods := labels.Set(d.Spec.Template.Labels)
	if a := d.Spec.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 ||
		!selects(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector, pods) {
		t.Errorf("affinity %+v, want anti-affinity between its own pods", a)
	}
	if r.pdb.Spec.MaxUnavailable == nil || r.pdb.Spec.MaxUnavailable.IntValue() != 1 || !selects(r.pdb.Spec.Selector, pods) {
		t.Errorf("PodDisruptionBudget %+v, want maxUnavailable 1 of the webhook's pods", r.pdb.Spec)
	}
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c v1.Container) bool { return c.Name == webhookName })
	if i < 0 {
		t.Fatalf("Deployment has no container %s", webhookName)
	}
	c := d.Spec.Template.Spec.Containers[i]
	if problem := imageProblem(c.Image); problem != "" {
		t.Errorf("image %q: %s", c.Image, problem)
	}
	if !slices.Equal(c.Command, []string{"/" + webhookName}) {
		t.Errorf("command %q, want the image's /%s", c.Command, webhookName)
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("securityContext %+v, want runAsNonRoot and readOnlyRootFilesystem", sc)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", p)
	}
	for _, arg := range []string{"--tls-cert-file=/etc/snapshot-validation-webhook/certs/tls.crt",
		"--tls-private-key-file=/etc/snapshot-validation-webhook/certs/tls.key", "--port=8443"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q, want %s", c.Args, arg)
		}
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool {
		return m.MountPath == "/etc/snapshot-validation-webhook/certs" && m.ReadOnly && slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v v1.Volume) bool {
			return v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "snapshot-validation-webhook-tls"
		})
	})
	if !mounted {
		t.Errorf("no read-only mount of the Secret snapshot-validation-webhook-tls at /etc/snapshot-validation-webhook/certs")
	}
}

// TestWebhookConfiguration: kube-apiserver calls the Service on a path the
// webhook serves, for what it validates, with seed 004's failurePolicy
// Ignore and timeoutSeconds 2.
func TestWebhookConfiguration(t *testing.T) {
	r := renderWebhook(t)
	if len(r.config.Webhooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(r.config.Webhooks))
	}
	w := r.config.Webhooks[0]
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore || w.TimeoutSeconds == nil || *w.TimeoutSeconds != 2 {
		t.Errorf("failurePolicy %v, timeoutSeconds %v; want Ignore, 2", w.FailurePolicy, w.TimeoutSeconds)
	}
	if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone || !slices.Equal(w.AdmissionReviewVersions, []string{"v1"}) {
		t.Errorf("sideEffects %v, admissionReviewVersions %v; want None, [v1]", w.SideEffects, w.AdmissionReviewVersions)
	}
	s := w.ClientConfig.Service
	if s == nil || s.Name != r.service.Name || s.Namespace != r.service.Namespace || s.Path == nil || *s.Path != "/volumesnapshot" ||
		s.Port == nil || len(r.service.Spec.Ports) != 1 || r.service.Spec.Ports[0].Port != *s.Port {
		t.Errorf("clientConfig.service %+v, want the Service %s/%s on its port, path /volumesnapshot", s, r.service.Namespace, r.service.Name)
	}
	if !selects(&metav1.LabelSelector{MatchLabels: r.service.Spec.Selector}, labels.Set(r.deployment.Spec.Template.Labels)) ||
		r.service.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("Service %+v does not reach the webhook's https port", r.service.Spec)
	}
	var covered []string
	for _, rule := range w.Rules {
		if !slices.Equal(rule.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}) {
			t.Errorf("rule %+v: operations %v, want CREATE and UPDATE (deletion is always allowed)", rule, rule.Operations)
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				covered = append(covered, g+"/"+res)
			}
		}
	}
	want := []string{"snapshot.storage.k8s.io/volumesnapshots", "snapshot.storage.k8s.io/volumesnapshotcontents",
		"snapshot.storage.k8s.io/volumesnapshotclasses", "groupsnapshot.storage.k8s.io/volumegroupsnapshotclasses"}
	if !sameElements(covered, want) {
		t.Errorf("rules cover %v, want %v", covered, want)
	}
}

// selects reports whether selector selects pods with set.
func selects(selector *metav1.LabelSelector, set labels.Set) bool {
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && selector != nil && len(selector.MatchLabels)+len(selector.MatchExpressions) > 0 && s.Matches(set)
}
