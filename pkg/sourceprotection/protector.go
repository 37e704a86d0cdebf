// Package sourceprotection keeps a snapshot or claim from being deleted while
// a new volume is being provisioned from it.
//
// Protect puts a finalizer on the source just before CreateVolume. A small
// controller takes it off as soon as no pending claim needs the source any
// more: its PV exists, or it was deleted. Both are driven by informer events;
// no periodic sweep is needed.
package sourceprotection

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
	"github.com/xns-csi/csi-provisioner/pkg/requeue"
)

// Finalizers, the same as the upstream csi-provisioner's.
const (
	// SnapshotFinalizer protects a VolumeSnapshot being restored.
	SnapshotFinalizer = "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection"
	// CloneFinalizer protects a PersistentVolumeClaim being cloned.
	CloneFinalizer = "provisioner.storage.kubernetes.io/cloning-protection"
)

// SnapshotGetter reads snapshots from a cache ((nil, nil) when absent).
type SnapshotGetter interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
}

// GrantChecker decides from a cache whether a ReferenceGrant allows a
// reference.
type GrantChecker interface {
	Check(ref referencegrant.Reference) referencegrant.Decision
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
	// Grants decides whether a claim naming another namespace may use the
	// source; a claim without a grant does not keep the finalizer.
	Grants GrantChecker
}

// Protector adds and removes the source finalizers.
type Protector struct {
	cfg   Config
	queue workqueue.TypedRateLimitingInterface[datasource.Source]

	// mu serialises Protect, and added remembers the finalizers this
	// protector added that the cache may not show yet: when a hundred claims
	// restore the same snapshot at once, one patch is sent, not a hundred
	// conflicting ones.
	mu    sync.Mutex
	added map[datasource.Source]bool
}

// New returns a Protector; call Run to start removing finalizers.
func New(cfg Config) *Protector {
	return &Protector{cfg: cfg, added: map[datasource.Source]bool{}, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[datasource.Source](),
		workqueue.TypedRateLimitingQueueConfig[datasource.Source]{Name: "source-protection"})}
}

// Protect adds the finalizer to src unless the cache shows it already there.
func (p *Protector) Protect(ctx context.Context, src datasource.Source) error {
	k := key(src)
	p.mu.Lock()
	defer p.mu.Unlock()
	obj, err := p.object(src)
	if err != nil {
		return err
	}
	if obj == nil {
		return fmt.Errorf("%s does not exist", src)
	}
	patch := addPatch(obj, finalizerFor(src))
	if patch == nil {
		delete(p.added, k) // the cache shows it: no need to remember
		return nil
	}
	if p.added[k] {
		return nil // added by an earlier call; the cache lags behind
	}
	klog.FromContext(ctx).V(4).Info("Protecting data source", "source", src.String())
	if err := p.patch(ctx, src, patch); err != nil {
		return err
	}
	p.added[k] = true
	return nil
}

// Run removes finalizers that are no longer needed until ctx is done.
func (p *Protector) Run(ctx context.Context, workers int) {
	defer p.queue.ShutDown()
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

// release removes the finalizer from src if no pending claim needs it.
func (p *Protector) release(ctx context.Context, src datasource.Source) error {
	obj, err := p.object(src)
	if err != nil || obj == nil {
		return err
	}
	patch := removePatch(obj, finalizerFor(src))
	if patch == nil || p.inUse(src) {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Releasing data source: no pending claim uses it", "source", src.String())
	if err := p.patch(ctx, src, patch); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.added, key(src))
	p.mu.Unlock()
	return nil
}

// inUse reports whether a pending, not deleted claim without a PV yet still
// provisions from src. A claim naming the source across namespaces counts
// only while a ReferenceGrant allows it: otherwise anyone could keep another
// namespace's snapshot from being deleted by creating such a claim.
func (p *Protector) inUse(src datasource.Source) bool {
	objs, _ := p.cfg.Claims.ByIndex(requeue.SourceIndex, requeue.SourceKey(src))
	for _, obj := range objs {
		claim := obj.(*v1.PersistentVolumeClaim)
		if claim.DeletionTimestamp != nil || !p.allowed(claim) {
			continue
		}
		if _, err := p.cfg.Volumes.Get(p.cfg.VolumeName(claim)); apierrors.IsNotFound(err) {
			return true
		}
	}
	return false
}

func (p *Protector) allowed(claim *v1.PersistentVolumeClaim) bool {
	src, err := datasource.Resolve(claim)
	if err != nil {
		return false
	}
	if !src.NeedsGrant() {
		return true
	}
	return p.cfg.Grants != nil &&
		p.cfg.Grants.Check(referencegrant.ClaimReference(claim.Namespace, src.APIGroup, src.Kind, src.Namespace, src.Name)).Allowed
}

func (p *Protector) object(src datasource.Source) (metav1.Object, error) {
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

func (p *Protector) patch(ctx context.Context, src datasource.Source, patch []byte) error {
	var err error
	if src.Type() == datasource.Snapshot {
		_, err = p.cfg.SnapshotClient.SnapshotV1().VolumeSnapshots(src.Namespace).Patch(ctx, src.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = p.cfg.Client.CoreV1().PersistentVolumeClaims(src.Namespace).Patch(ctx, src.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("updating the finalizers of %s: %w", src, err)
	}
	return nil
}

func finalizerFor(src datasource.Source) string {
	if src.Type() == datasource.Snapshot {
		return SnapshotFinalizer
	}
	return CloneFinalizer
}

// key normalises a source for the queue: the same object is one item however
// the claim named its namespace.
func key(src datasource.Source) datasource.Source {
	src.ExplicitNamespace = false
	return src
}

func hasFinalizer(obj metav1.Object, finalizer string) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}
