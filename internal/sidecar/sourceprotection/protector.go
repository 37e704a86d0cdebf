// Package sourceprotection keeps a snapshot or claim from being deleted while
// a new volume is being provisioned from it.
//
// Protect puts a finalizer on the source just before CreateVolume. A small
// controller takes it off as soon as no claim in progress needs the source
// any more: its PV exists, it was deleted and no CreateVolume of it may still
// be running, or it will never be provisioned from the source. Both are
// driven by informer events; no periodic sweep is needed.
//
// Protect and release of one source are serialized, and each trusts the
// object its own last write returned over a cache that has not caught up
// with it, so a release can never undo a protection that a CreateVolume
// relies on.
//
// Each way of using a source has its finalizer (datasource.Source.Finalizer),
// released when no claim holds it any more (see package sourceuse for which
// claims hold which). Next to other provisioners' sidecars the rule is:
// upstream's shared finalizers (volumesnapshot-as-source-protection,
// cloning-protection) are held by every claim naming the source, with or
// without spec.dataSourceRef.namespace; restores and clones naming the
// namespace are protected by finalizers of their own, which upstream's
// provisioner and snapshot-controller never touch; and a claim of another
// provisioner is judged as if the CrossNamespaceSourceProvisioning gate
// were on (its own sidecar decides it), its grant still deciding. So a
// sidecar with the gate off, or upstream's cloning-protection controller,
// never takes the protection off another driver's restore across
// namespaces.
package sourceprotection

import (
	"context"
	"errors"
	"fmt"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// SnapshotGetter reads snapshots from a cache ((nil, nil) when absent).
type SnapshotGetter interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
}

// LinkIndex reads VolumeSnapshotLinks from a cache (see package linkcache):
// a claim restoring through a link uses the link's snapshot.
type LinkIndex interface {
	GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error)
	LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
	LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
}

// Config holds the protector's dependencies.
type Config struct {
	// Client patches claims; SnapshotClient patches snapshots.
	Client         kubernetes.Interface
	SnapshotClient snapclientset.Interface
	// Snapshots reads snapshots from the cache.
	Snapshots SnapshotGetter
	// Claims is the PVC informer's indexer, with requeue.SourceIndex.
	Claims cache.Indexer
	// Volumes is the PV lister.
	Volumes corelisters.PersistentVolumeLister
	// VolumeName is the name of the PV the provisioner creates for a claim.
	VolumeName func(*v1.PersistentVolumeClaim) string
	// Policy decides whether a pending claim uses its source, as
	// provisioning decides it.
	Policy claimsource.Policy
	// InFlight holds the CreateVolume calls whose outcome is unknown; their
	// sources stay protected, also after their claims are deleted.
	InFlight *inflight.Registry
	// Links, when set (--cross-namespace-snapshot), finds the claims that
	// restore a snapshot through VolumeSnapshotLinks.
	Links LinkIndex
	// SnapshotList lists the cached snapshots, for LinksSynced (with Links)
	// and EachHeld.
	SnapshotList SnapshotLister
	// Synced reports whether the caches in use decisions read (claims,
	// volumes) have synced. Nothing is released before they have: an
	// unsynced cache would show a claim in progress as absent.
	Synced []cache.InformerSynced
	// Linger is how long a source nobody is deleting keeps its finalizer
	// after its last use ended (0: released at once). Restores of one
	// snapshot that follow each other then cost no write to it; a source
	// whose deletion is requested is released as soon as it is unused.
	Linger time.Duration
	// Now is the clock of Linger and of the in-use marks (time.Now when
	// nil).
	Now func() time.Time
	// Holder names this process among all that protect sources at once
	// (the driver's name and, with --node-deployment, the node's): with
	// it, a source protected for a CreateVolume of this process carries
	// its in-use mark while the call may run (see inuse_marks.go). Empty,
	// this process marks nothing; every process honors the marks of
	// others.
	Holder string
	// InUseTTL is how long a mark holds unless renewed
	// (DefaultInUseTTL when 0).
	InUseTTL time.Duration
}

// Protector adds and removes the source finalizers.
type Protector struct {
	cfg       Config
	queue     workqueue.TypedRateLimitingInterface[datasource.Source]
	writes    writes
	idle      idleSince
	marks     marks
	markQueue workqueue.TypedDelayingInterface[datasource.Source]
}

// New returns a Protector; call Run to start removing finalizers.
func New(cfg Config) *Protector {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.InUseTTL == 0 {
		cfg.InUseTTL = DefaultInUseTTL
	}
	return &Protector{cfg: cfg, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[datasource.Source](),
		workqueue.TypedRateLimitingQueueConfig[datasource.Source]{Name: "source-protection"}), markQueue: newMarkQueue()}
}

// Protect makes sure src carries the finalizer of its use, and this
// process's in-use mark, before a volume is made from it. It writes unless
// the object last seen (the cache, or this protector's own newer write)
// carries the finalizer, and the mark was written recently.
func (p *Protector) Protect(ctx context.Context, src datasource.Source) error {
	target := src.Target()
	unlock := p.writes.lock(target)
	defer unlock()
	p.idle.used(src)
	obj, err := p.current(target)
	if err != nil {
		return err
	}
	if obj == nil {
		return fmt.Errorf("%s does not exist", src)
	}
	if p.marking() {
		if err := p.mark(ctx, target, obj); err != nil {
			if !apierrors.IsForbidden(err) {
				return err
			}
			// As for the finalizer (ForbiddenError): the restore goes on,
			// known in flight to this process only.
			klog.FromContext(ctx).Error(err, "Cannot mark data source in use", "source", src.String())
		}
		if obj, err = p.current(target); err != nil {
			return err
		}
		if obj == nil {
			return fmt.Errorf("%s does not exist", src)
		}
	}
	patch := addPatch(obj, src.Finalizer())
	if patch == nil {
		return nil
	}
	klog.FromContext(ctx).V(4).Info("Protecting data source", "source", src.String(), "finalizer", src.Finalizer())
	return p.write(ctx, target, obj, patch, finalizerChange{finalizer: src.Finalizer(), add: true})
}

// Recheck queues src to have its finalizer released if nothing uses it.
// A direct use queues both spellings (datasource.Source.Uses): a claim
// naming the namespace holds upstream's shared finalizer too (see package
// sourceuse), and attempts in flight are known whatever the spelling
// (datasource.Source.Object).
func (p *Protector) Recheck(src datasource.Source) {
	for _, use := range src.Uses() {
		if use.ThroughLink == src.ThroughLink {
			p.queue.Add(use)
		}
	}
	if _, marked := p.marks.get(src.Target()); marked {
		p.markQueue.Add(src.Target())
	}
}

// Run removes finalizers that are no longer needed until ctx is done. It
// starts once the caches in Config.Synced have synced.
func (p *Protector) Run(ctx context.Context, workers int) {
	defer p.queue.ShutDown()
	defer p.markQueue.ShutDown()
	go p.runMarks(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), p.cfg.Synced...) {
		return
	}
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for p.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
}

func (p *Protector) processNext(ctx context.Context) bool {
	src, shutdown := p.queue.Get()
	if shutdown {
		return false
	}
	defer p.queue.Done(src)
	if err := p.release(ctx, src); err != nil {
		logger := klog.FromContext(ctx)
		var forbidden *ForbiddenError
		if errors.As(err, &forbidden) {
			// As upstream: the finalizer stays, and nothing is retried
			// until the source changes or the informers resync.
			logger.Error(err, "Cannot release data source; its finalizer stays", "source", src.String())
			p.queue.Forget(src)
			return true
		}
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			// The cache was behind (the patch tests the resourceVersion).
			logger.V(4).Info("Retrying to release data source", "source", src.String(), "err", err)
		} else {
			logger.Error(err, "Cannot release data source", "source", src.String())
		}
		p.queue.AddRateLimited(src)
		return true
	}
	p.queue.Forget(src)
	return true
}

// release removes the finalizer from src if nothing uses it, once it has
// lingered. The lock keeps a Protect of src from deciding between the check
// and the write.
func (p *Protector) release(ctx context.Context, src datasource.Source) error {
	target := src.Target()
	unlock := p.writes.lock(target)
	defer unlock()
	obj, err := p.current(target)
	if err != nil || obj == nil {
		p.idle.forget(src)
		return err
	}
	patch := removePatch(obj, src.Finalizer())
	if patch == nil {
		p.idle.forget(src)
		return nil
	}
	marked, err := p.marksOf(ctx, target, obj)
	if err != nil {
		return err
	}
	held, stale := p.marksOn(target, marked)
	if len(held) > 0 || p.inUse(src, obj) {
		p.idle.used(src)
		return nil
	}
	if obj.GetDeletionTimestamp() == nil {
		if wait := p.idle.remaining(src, p.cfg.Now(), p.cfg.Linger); wait > 0 {
			p.queue.AddAfter(src, wait)
			return nil
		}
	}
	p.idle.forget(src)
	if len(stale) > 0 {
		if obj, patch, err = p.dropStaleMarks(ctx, target, src, marked, stale); err != nil || patch == nil {
			return err
		}
	}
	klog.FromContext(ctx).V(2).Info("Releasing data source: no claim in progress uses it", "source", src.String(), "finalizer", src.Finalizer())
	return p.write(ctx, target, obj, patch, finalizerChange{finalizer: src.Finalizer()})
}

// current returns src as last seen: from the cache, or the object this
// protector's own write returned if the cache has not caught up with it.
// Call with src locked.
func (p *Protector) current(src datasource.Source) (metav1.Object, error) {
	cached, err := p.cached(src)
	if err != nil || cached == nil {
		return nil, err
	}
	return p.writes.newest(src, cached), nil
}

func (p *Protector) cached(src datasource.Source) (metav1.Object, error) {
	switch src.Type() {
	case datasource.Snapshot:
		snap, err := p.cfg.Snapshots.GetSnapshot(src.Namespace, src.Name)
		if snap == nil || err != nil {
			return nil, err
		}
		return snap, nil
	case datasource.Claim:
		obj, exists, err := p.cfg.Claims.GetByKey(src.Namespace + "/" + src.Name)
		if !exists || err != nil {
			return nil, err
		}
		return obj.(*v1.PersistentVolumeClaim), nil
	}
	return nil, fmt.Errorf("%s cannot be protected", src)
}
