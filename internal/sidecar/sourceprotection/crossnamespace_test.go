package sourceprotection

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// This protector serves the driver ours; theirs is another driver's.
const (
	ours   = "ours.example.com"
	theirs = "theirs.example.com"
)

// namedWithNamespace is src as used by a claim naming its namespace in
// spec.dataSourceRef.namespace.
func namedWithNamespace(src datasource.Source) datasource.Source {
	src.ExplicitNamespace = true
	return src
}

func handedTo(provisioner string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{claimsource.AnnStorageProvisioner: provisioner}
	}
}

// TestInUseAcrossNamespacesNextToOtherSidecars: which claims hold the
// finalizers of restores and clones naming the source's namespace, and
// upstream's shared ones, when sidecars of several drivers, set
// differently, release them.
func TestInUseAcrossNamespacesNextToOtherSidecars(t *testing.T) {
	tests := []struct {
		name     string
		src      datasource.Source
		claim    *v1.PersistentVolumeClaim
		grants   grants
		gateOff  bool
		inFlight bool
		want     bool
	}{
		{"a claim naming the namespace keeps the finalizer of such restores", namedWithNamespace(prodSnap),
			pendingClaim("test", "a", prodSnap, handedTo(ours)), grants(referencegrant.ReasonAllowed), false, false, true},
		{"a claim in the snapshot's own namespace does not keep the finalizer of restores naming it", namedWithNamespace(prodSnap),
			pendingClaim("prod", "a", prodSnap, handedTo(ours)), "", false, false, false},
		{"with the gate off, its own claim naming another namespace is never provisioned and keeps nothing", namedWithNamespace(prodSnap),
			pendingClaim("test", "a", prodSnap, handedTo(ours)), grants(referencegrant.ReasonAllowed), true, false, false},
		{"with the gate off, another driver's granted restore keeps the snapshot: its sidecar decides it", namedWithNamespace(prodSnap),
			pendingClaim("test", "a", prodSnap, handedTo(theirs)), grants(referencegrant.ReasonAllowed), true, false, true},
		{"with the gate off, another driver's granted clone keeps its source claim", namedWithNamespace(prodClaim),
			pendingClaim("test", "x", prodClaim, handedTo(theirs)), grants(referencegrant.ReasonAllowed), true, false, true},
		{"another driver's claim without a grant keeps nothing: naming a provisioner pins nothing", namedWithNamespace(prodSnap),
			pendingClaim("test", "a", prodSnap, handedTo(theirs)), grants(referencegrant.ReasonNotGranted), true, false, false},
		{"another driver's claim naming the namespace keeps upstream's shared finalizer, which upstream protects it with", prodSnap,
			pendingClaim("test", "a", prodSnap, handedTo(theirs)), grants(referencegrant.ReasonAllowed), true, false, true},
		{"an attempt in flight keeps the finalizer of restores naming the namespace after its claim is gone", namedWithNamespace(prodSnap),
			nil, "", false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var claims []*v1.PersistentVolumeClaim
			if tt.claim != nil {
				claims = append(claims, tt.claim)
			}
			attempts := inflight.New()
			if tt.inFlight {
				attempts.Begin(&inflight.Attempt{Claim: "gone", Source: tt.src})
			}
			p := New(Config{Claims: claimIndexer(t, claims...), Volumes: noVolumes{}, InFlight: attempts,
				Policy:     claimsource.Policy{CrossNamespace: !tt.gateOff, Grants: tt.grants, Driver: claimsource.Driver{Name: ours}},
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
			if got := p.inUse(tt.src, &metav1.ObjectMeta{Namespace: tt.src.Namespace, Name: tt.src.Name}); got != tt.want {
				t.Errorf("inUse() = %v, want %v", got, tt.want)
			}
		})
	}
}
