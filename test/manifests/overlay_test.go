package manifests

import (
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// haOverlay is the kustomization of deploy/ for high availability.
const haOverlay = "overlays/ha"

// renderHA returns the sidecar's Deployment and the PodDisruptionBudget as
// deploy/overlays/ha renders them.
func renderHA(t *testing.T) (*appsv1.Deployment, *policyv1.PodDisruptionBudget) {
	t.Helper()
	manifests := kustomize(t, filepath.Join(deployDir, haOverlay))
	var pdb *policyv1.PodDisruptionBudget
	for _, m := range manifests {
		if o, ok := m.obj.(*policyv1.PodDisruptionBudget); ok {
			if pdb != nil {
				t.Fatalf("%s renders two PodDisruptionBudgets, %s and %s", shown(haOverlay), pdb.Name, o.Name)
			}
			pdb = o
		}
	}
	if pdb == nil {
		t.Fatalf("%s renders no PodDisruptionBudget", shown(haOverlay))
	}
	return sidecarDeployment(t, manifests), pdb
}

func TestHARunsTwoReplicasUnderLeaderElection(t *testing.T) {
	d, _ := renderHA(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("The Deployment has replicas %v, want 2 or more", d.Spec.Replicas)
	}
	// Without leader election every replica would provision every claim.
	if args := sidecarContainer(t, d).Args; !slices.ContainsFunc(args, isLeaderElectionOn) {
		t.Errorf("The sidecar runs with %q, want --leader-election", args)
	}
}

func TestHADisruptionBudgetCoversTheSidecar(t *testing.T) {
	d, pdb := renderHA(t)
	if pdb.Namespace != d.Namespace {
		t.Errorf("The PodDisruptionBudget is in %q, the Deployment in %q", pdb.Namespace, d.Namespace)
	}
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if selector.Empty() || !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("The PodDisruptionBudget selects %q, which does not select the Deployment's pods (labels %v)", selector, d.Spec.Template.Labels)
	}
	// One replica may go at a time, and one must stay: maxUnavailable 1, or
	// minAvailable 1 (which blocks drains when scaled to one).
	spec := pdb.Spec
	switch {
	case spec.MaxUnavailable != nil && spec.MinAvailable == nil:
		if spec.MaxUnavailable.String() != "1" {
			t.Errorf("The PodDisruptionBudget has maxUnavailable %s, want 1", spec.MaxUnavailable)
		}
	case spec.MinAvailable != nil && spec.MaxUnavailable == nil:
		if spec.MinAvailable.String() != "1" {
			t.Errorf("The PodDisruptionBudget has minAvailable %s, want 1", spec.MinAvailable)
		}
	default:
		t.Errorf("The PodDisruptionBudget sets maxUnavailable %v and minAvailable %v, want one of them", spec.MaxUnavailable, spec.MinAvailable)
	}
}

func TestHASpreadsReplicasOverNodes(t *testing.T) {
	d, _ := renderHA(t)
	pod := d.Spec.Template
	var anti *v1.PodAntiAffinity
	if pod.Spec.Affinity != nil {
		anti = pod.Spec.Affinity.PodAntiAffinity
	}
	if anti == nil {
		t.Fatal("The Deployment's pods have no podAntiAffinity")
	}
	// Required anti-affinity would leave a replica, or a rolling update's
	// extra pod, pending on a cluster with fewer nodes than pods.
	if len(anti.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		t.Errorf("The podAntiAffinity is required (%+v), want preferred", anti.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	spread := false
	for _, term := range anti.PreferredDuringSchedulingIgnoredDuringExecution {
		selector, err := metav1.LabelSelectorAsSelector(term.PodAffinityTerm.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		if term.PodAffinityTerm.TopologyKey == v1.LabelHostname && !selector.Empty() && selector.Matches(labels.Set(pod.Labels)) {
			spread = true
		}
	}
	if !spread {
		t.Errorf("No preferred podAntiAffinity term keeps the Deployment's pods (labels %v) apart by %s: %+v", pod.Labels, v1.LabelHostname, anti.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}
