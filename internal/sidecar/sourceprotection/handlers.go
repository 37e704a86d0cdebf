package sourceprotection

import (
	"slices"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
)

// ClaimHandler watches claims: one that gets its volume or goes away may
// release its source, and a claim carrying the clone finalizer (e.g. after a
// restart) is checked itself. The record of the last write to a claim
// cloned from ends once the cache shows that write, or the claim is gone.
func (p *Protector) ClaimHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { p.enqueueClaim(obj, true) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*v1.PersistentVolumeClaim), newObj.(*v1.PersistentVolumeClaim)
			p.sourceSeen(n)
			p.enqueueClaim(n, o.Spec.VolumeName != n.Spec.VolumeName || !o.DeletionTimestamp.Equal(n.DeletionTimestamp))
		},
		DeleteFunc: func(obj any) {
			p.enqueueClaim(unwrap(obj), true)
			p.sourceGone(obj)
		},
	}
}

// VolumeHandler watches PVs: a new PV means its claim no longer needs the
// source.
func (p *Protector) VolumeHandler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		pv, ok := obj.(*v1.PersistentVolume)
		if !ok || pv.Spec.ClaimRef == nil {
			return
		}
		if claim, exists, _ := p.cfg.Claims.GetByKey(pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name); exists {
			p.enqueueClaim(claim, true)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }}
}

// SnapshotHandler checks every snapshot that carries a finalizer of this
// protector, so one left behind by a crash or a deleted claim is released:
// each use whose finalizer it carries (see datasource.Source.Uses). The
// finalizer of restores through links is left alone unless links are
// followed. As for claims, the record of the last write to a snapshot ends
// once the cache shows that write, or the snapshot is gone.
func (p *Protector) SnapshotHandler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		snap, ok := obj.(*snapv1.VolumeSnapshot)
		if !ok {
			return
		}
		p.queueProtected(snap, datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind,
			Namespace: snap.Namespace, Name: snap.Name})
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) {
		p.sourceSeen(n)
		enqueue(n)
	}, DeleteFunc: p.sourceGone}
}

// GrantsChanged re-checks the sources of the pending claims that need a
// ReferenceGrant in namespace ("" for any namespace): a grant created,
// deleted, or readable again may change whether they hold their sources.
// Claims restoring through links need the grants of their snapshot's
// namespace.
func (p *Protector) GrantsChanged(namespace string) {
	for _, claim := range requeue.GrantWaiters(p.cfg.Claims, namespace) {
		if src, err := datasource.Resolve(claim); err == nil && src.Finalizer() != "" {
			p.Recheck(src)
		}
	}
	if p.cfg.Links == nil {
		return
	}
	if namespace != "" {
		links, _ := p.cfg.Links.LinksInto(namespace)
		for _, l := range links {
			p.Recheck(claimsource.LinkTarget(l))
		}
		return
	}
	for _, key := range p.cfg.Claims.ListIndexFuncValues(requeue.SourceIndex) {
		if ns, name, ok := requeue.ParseLinkKey(key); ok {
			p.recheckLinkTarget(ns, name)
		}
	}
}

// recheckLinkTarget queues the snapshot the link namespace/name names, if
// the link exists.
func (p *Protector) recheckLinkTarget(namespace, name string) {
	if link, _ := p.cfg.Links.GetLink(namespace, name); link != nil {
		p.Recheck(claimsource.LinkTarget(link))
	}
}

// enqueueClaim queues the claim's source when sourceChanged, and the claim
// itself for each clone finalizer it carries.
func (p *Protector) enqueueClaim(obj any, sourceChanged bool) {
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	p.queueProtected(claim, datasource.Source{Kind: datasource.ClaimKind, Namespace: claim.Namespace, Name: claim.Name})
	if !sourceChanged {
		return
	}
	src, err := datasource.Resolve(claim)
	switch {
	case err != nil:
	case src.Type() == datasource.Snapshot || src.Type() == datasource.Claim:
		p.Recheck(src)
	case src.Type() == datasource.Link && p.cfg.Links != nil:
		p.recheckLinkTarget(src.Namespace, src.Name)
	}
}

// queueProtected queues each use of the object target (obj, a snapshot or
// claim) whose finalizer obj carries; the links' only when links are
// followed.
func (p *Protector) queueProtected(obj metav1.Object, target datasource.Source) {
	for _, use := range target.Uses() {
		if p.releases(obj, use) {
			p.queue.Add(use)
		}
	}
}

// releases reports whether obj carries the finalizer of use and this
// protector takes it off when unused: the links' only when links are
// followed.
func (p *Protector) releases(obj metav1.Object, use datasource.Source) bool {
	return hasFinalizer(obj, use.Finalizer()) && (!use.ThroughLink || p.cfg.Links != nil)
}

func unwrap(obj any) any {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tomb.Obj
	}
	return obj
}

func hasFinalizer(obj metav1.Object, finalizer string) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}
