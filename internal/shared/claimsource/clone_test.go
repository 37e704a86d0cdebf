package claimsource

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

func boundSource() (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	src := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "ns", UID: "uid-src"},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-src", StorageClassName: ptr("fast")},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-src"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-1"}},
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "src", UID: "uid-src"},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	return src, pv
}

// cloneCase is a clone and the reason Decide gives it.
type cloneCase struct {
	name      string
	mutate    func(*v1.PersistentVolumeClaim, *v1.PersistentVolume, *v1.PersistentVolumeClaim)
	noSource  bool
	noVolume  bool
	class     string
	requested int64
	want      Reason
	// inMessage is part of the refusal's message, when set.
	inMessage string
}

// cloneCases are the clone checks.
var cloneCases = []cloneCase{
	{name: "a bound claim of this driver and class can be cloned", want: ReasonAllowed},
	{name: "a missing source is reported", noSource: true, want: ReasonSourceClaimNotFound},
	{name: "a source being deleted is refused", want: ReasonSourceClaimBeingDeleted,
		mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			s.DeletionTimestamp = &metav1.Time{}
		}},
	{name: "a protected source being deleted still serves a clone that was there first", want: ReasonAllowed,
		mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
			s.DeletionTimestamp, s.Finalizers = &metav1.Time{Time: time.Unix(100, 0)}, []string{datasource.CloneFinalizer}
			c.CreationTimestamp = metav1.Unix(99, 0)
		}},
	{name: "a protected source being deleted refuses a clone created after the deletion request", want: ReasonSourceClaimBeingDeleted,
		mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
			s.DeletionTimestamp, s.Finalizers = &metav1.Time{Time: time.Unix(100, 0)}, []string{datasource.CloneFinalizer}
			c.CreationTimestamp = metav1.Unix(101, 0)
		}},
	{name: "an unbound source waits", want: ReasonSourceClaimNotBound,
		mutate: func(s *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			s.Status.Phase = v1.ClaimPending
		}},
	{name: "a source whose volume is not in the cache waits", noVolume: true, want: ReasonSourceClaimNotBound},
	// As upstream's getPVCSource: the volume must be bound to the source
	// claim itself. A volume not bound yet is a PV cache behind the claim
	// cache, and the clone waits; one bound to another claim is refused.
	{name: "a source PV bound to another claim is refused", want: ReasonSourceVolumeMismatch, inMessage: "PersistentVolumeClaim ns/other",
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef.Name, pv.Spec.ClaimRef.UID = "other", "uid-other"
		}},
	{name: "a source PV bound to a claim of the source's name in another namespace is refused", want: ReasonSourceVolumeMismatch,
		inMessage: "PersistentVolumeClaim test/src",
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef.Namespace = "test"
		}},
	{name: "a source PV whose claimRef UID differs (claim re-created) is refused", want: ReasonSourceVolumeMismatch, inMessage: "uid-old",
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef.UID = "uid-old"
		}},
	{name: "a source PV bound to no claim yet waits", want: ReasonSourceClaimNotBound, inMessage: `PersistentVolume "pv-src"`,
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef = nil
		}},
	{name: "a source PV pre-bound to the source, its UID not set yet, waits", want: ReasonSourceClaimNotBound,
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef.UID = ""
		}},
	{name: "a source PV that is not Bound yet waits", want: ReasonSourceClaimNotBound, inMessage: `phase "Available"`,
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Status.Phase = v1.VolumeAvailable
		}},
	{name: "a source PV without a phase waits", want: ReasonSourceClaimNotBound,
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Status.Phase = ""
		}},
	{name: "a volume of another driver is refused", want: ReasonSourceClaimOfOtherDriver,
		mutate: func(_ *v1.PersistentVolumeClaim, pv *v1.PersistentVolume, _ *v1.PersistentVolumeClaim) {
			pv.Spec.CSI.Driver = "x"
		}},
	{name: "a source of another class is refused", class: "slow", want: ReasonStorageClassMismatch},
	{name: "a volume mode change is refused", want: ReasonVolumeModeMismatch,
		mutate: func(_ *v1.PersistentVolumeClaim, _ *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeMode = ptr(v1.PersistentVolumeBlock)
		}},
	{name: "a request smaller than the source is refused", requested: 1 << 20, want: ReasonRequestedSizeTooSmall},
}

// input is the case's Decide input: a claim "clone" cloning "src", both
// in namespace ns.
func (tt cloneCase) input() Input {
	src, pv := boundSource()
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "clone", Namespace: "ns"}}
	if tt.mutate != nil {
		tt.mutate(src, pv, claim)
	}
	if tt.noSource {
		src = nil
	}
	if tt.noVolume {
		pv = nil
	}
	class, requested := tt.class, tt.requested
	if class == "" {
		class = "fast"
	}
	if requested == 0 {
		requested = 1 << 30
	}
	claim.Spec.Resources = requests(requested)
	return Input{Claim: claim, ClassName: class, Source: datasource.Source{Kind: datasource.ClaimKind, Namespace: "ns", Name: "src"},
		Driver: Driver{Name: driver, Clones: true}, SourceClaim: src, SourceVolume: pv}
}

// acrossNamespaces moves the clone of in to namespace test, naming its
// source's namespace, with a grant that allows it; a protected source
// carries the finalizer of such clones.
func acrossNamespaces(in Input) Input {
	in.Claim.Namespace = "test"
	in.Source.ExplicitNamespace, in.CrossNamespace, in.Grant = true, true, granted
	if in.SourceClaim != nil {
		for i, f := range in.SourceClaim.Finalizers {
			if f == datasource.CloneFinalizer {
				in.SourceClaim.Finalizers[i] = datasource.CrossNamespaceCloneFinalizer
			}
		}
	}
	return in
}

// TestDecideClone: the clone checks are the same for a source in the
// claim's namespace and, once a grant allows it, in another.
func TestDecideClone(t *testing.T) {
	for _, where := range []struct {
		name  string
		input func(Input) Input
	}{{"within the namespace", func(in Input) Input { return in }}, {"across namespaces", acrossNamespaces}} {
		for _, tt := range cloneCases {
			t.Run(where.name+": "+tt.name, func(t *testing.T) {
				checkCloneCase(t, tt, Decide(where.input(tt.input())))
			})
		}
	}
}

func checkCloneCase(t *testing.T, tt cloneCase, got Verdict) {
	t.Helper()
	if got.Reason != tt.want {
		t.Fatalf("Decide() = %s (%s), want %s", got.Reason, got.Message, tt.want)
	}
	if tt.want == ReasonAllowed && got.Content.GetVolume().GetVolumeId() != "vol-1" {
		t.Errorf("Content = %v, want a clone of vol-1", got.Content)
	}
	if tt.want != ReasonAllowed && (got.Message == "" || got.Action != Refuse) {
		t.Errorf("refusal = %+v, want Refuse with a message", got)
	}
	if !strings.Contains(got.Message, tt.inMessage) {
		t.Errorf("Message = %q, want it to say %q", got.Message, tt.inMessage)
	}
}
