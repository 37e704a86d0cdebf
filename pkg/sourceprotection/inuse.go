package sourceprotection

import (
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/requeue"
)

// inUse reports whether src (as last seen: obj) must keep its finalizer:
// a CreateVolume from it may still be running, or a pending claim would be
// provisioned from it. "Would be provisioned" is the provisioning decision
// itself (claimsource), so a claim refused for good (the gate off, no
// grant) holds nothing: otherwise anyone could keep another namespace's
// snapshot or claim from being deleted by naming it. A claim whose grant
// cannot be read now holds the source, as does one the source still serves
// while being deleted (datasource.ServesDespiteDeletion). Clones from other
// namespaces count as restores do: the upstream provisioner looks only for
// clones in the source's own namespace, and releases a source that a
// cross-namespace clone is still being made from.
func (p *Protector) inUse(src datasource.Source, obj metav1.Object) bool {
	if p.cfg.InFlight != nil && p.cfg.InFlight.Uses(src) {
		return true
	}
	if src.ThroughLink && p.cfg.Links == nil {
		return true // cannot tell: only a sidecar following links releases their finalizer
	}
	for _, o := range p.claimsOf(src) {
		claim := o.(*v1.PersistentVolumeClaim)
		if claim.DeletionTimestamp != nil || !datasource.ServesDespiteDeletion(obj, src.Finalizer(), claim) {
			continue
		}
		if _, err := p.cfg.Volumes.Get(p.cfg.VolumeName(claim)); !apierrors.IsNotFound(err) {
			continue // provisioned (or the cache cannot say otherwise)
		}
		if _, verdict, err := p.cfg.Policy.Admit(claim); err == nil && verdict.HoldsSource() {
			return true
		}
	}
	return false
}

// claimsOf returns the pending claims that use src: that name it or, for a
// snapshot used through links, that name a VolumeSnapshotLink to it.
func (p *Protector) claimsOf(src datasource.Source) []any {
	if !src.ThroughLink {
		objs, _ := p.cfg.Claims.ByIndex(requeue.SourceIndex, requeue.SourceKey(src))
		return objs
	}
	var objs []any
	links, _ := p.cfg.Links.LinksTo(src.Namespace, src.Name)
	for _, l := range links {
		through, _ := p.cfg.Claims.ByIndex(requeue.SourceIndex, requeue.LinkKey(l.Namespace, l.Name))
		objs = append(objs, through...)
	}
	return objs
}
