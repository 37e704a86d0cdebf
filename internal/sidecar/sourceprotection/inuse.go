package sourceprotection

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse"
)

// inUse reports whether src (as last seen: obj) must keep its finalizer:
// a CreateVolume from it may still be running, or a pending claim would be
// provisioned from it. "Would be provisioned" is the provisioning decision
// itself (claimsource, through sourceuse), so a claim refused for good (the
// gate off, no grant) holds nothing: otherwise anyone could keep another
// namespace's snapshot or claim from being deleted by naming it. A claim
// whose grant cannot be read now holds the source, as does one the source
// still serves while being deleted (datasource.ServesDespiteDeletion).
// Clones from other namespaces count as restores do: the upstream
// provisioner looks only for clones in the source's own namespace, and
// releases a source that a cross-namespace clone is still being made from,
// unless it is protected by the finalizer of such clones. Claims of other
// provisioners are judged with the gate on (sourceuse.Finder.Provisioner),
// so that a sidecar with the gate off does not release a restore of
// another driver's.
func (p *Protector) inUse(src datasource.Source, obj metav1.Object) bool {
	if p.cfg.InFlight != nil && p.cfg.InFlight.Uses(src) {
		return true
	}
	if src.ThroughLink && p.cfg.Links == nil {
		return true // cannot tell: only a sidecar following links releases their finalizer
	}
	// A claim whose link became unreadable after it was found cannot be
	// told either.
	held, err := p.finder().AnyPending(src, obj, func(u sourceuse.Use) bool {
		return u.Verdict.HoldsSource() || u.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable
	})
	// With an error, it cannot tell: the link cache has not synced (a
	// restart, a leader change), its list is refused or its CRD is not
	// served, and a claim restoring through a link would look absent.
	// LinksSynced re-checks once it can be read.
	return held || err != nil
}

// finder asks sourceuse with the protector's caches.
func (p *Protector) finder() sourceuse.Finder {
	f := sourceuse.Finder{Claims: p.cfg.Claims, Volumes: p.cfg.Volumes, VolumeName: p.cfg.VolumeName, Policy: p.cfg.Policy,
		Provisioner: p.cfg.Policy.Driver.Name}
	if p.cfg.Links != nil {
		f.Links = p.cfg.Links
	}
	return f
}
