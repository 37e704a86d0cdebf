package linkstatus

import (
	"context"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// Links reads VolumeSnapshotLinks from a cache (see package linkcache).
type Links interface {
	GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error)
	LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
	LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
	List() ([]*snapv1alpha1.VolumeSnapshotLink, error)
}

// SnapshotGetter reads VolumeSnapshots from a cache ((nil, nil) when
// absent).
type SnapshotGetter interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
}

// Config holds the controller's dependencies.
type Config struct {
	// Client writes the links' status subresource.
	Client versioned.Interface
	// Links, Snapshots and Grants are the caches the conditions are
	// computed from.
	Links     Links
	Snapshots SnapshotGetter
	Grants    claimsource.GrantChecker
}

// Controller writes the status of VolumeSnapshotLinks.
type Controller struct {
	cfg   Config
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// New returns a Controller; call Run to start it and wire its handlers to
// the link and snapshot informers and GrantsChanged to the grant cache.
func New(cfg Config) *Controller {
	return &Controller{cfg: cfg, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "volumesnapshotlink-status"})}
}

// LinkHandler queues a link when it is added or changed.
func (c *Controller) LinkHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueLink(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueLink(obj) },
	}
}

// SnapshotHandler queues the links of a snapshot that is added or deleted
// (the only changes Resolved depends on). A link that may not use the
// snapshot is synced too, and its status stays as it was.
func (c *Controller) SnapshotHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueLinksTo,
		DeleteFunc: c.enqueueLinksTo,
	}
}

// GrantsChanged queues the links whose snapshot is in namespace, or every
// link when namespace is "" (the grant cache just became readable).
func (c *Controller) GrantsChanged(namespace string) {
	if namespace == "" {
		c.Resync()
		return
	}
	links, _ := c.cfg.Links.LinksInto(namespace)
	c.enqueue(links)
}

// Resync queues every link: a cache their conditions are computed from
// just became readable (wire it to the snapshot cache's OnSynced).
func (c *Controller) Resync() {
	links, _ := c.cfg.Links.List()
	c.enqueue(links)
}

func (c *Controller) enqueue(links []*snapv1alpha1.VolumeSnapshotLink) {
	for _, l := range links {
		c.queue.Add(types.NamespacedName{Namespace: l.Namespace, Name: l.Name})
	}
}

func (c *Controller) enqueueLink(obj any) {
	if l, ok := obj.(*snapv1alpha1.VolumeSnapshotLink); ok {
		c.queue.Add(types.NamespacedName{Namespace: l.Namespace, Name: l.Name})
	}
}

func (c *Controller) enqueueLinksTo(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	snap, ok := obj.(*snapv1.VolumeSnapshot)
	if !ok {
		return
	}
	links, _ := c.cfg.Links.LinksTo(snap.Namespace, snap.Name)
	c.enqueue(links)
}

// Run writes statuses with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		klog.FromContext(ctx).V(2).Info("Retrying the status of a VolumeSnapshotLink", "link", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync writes the link's conditions when they changed.
func (c *Controller) sync(ctx context.Context, key types.NamespacedName) error {
	link, err := c.cfg.Links.GetLink(key.Namespace, key.Name)
	if err != nil || link == nil {
		return err
	}
	in := Input{Link: link}
	target := claimsource.LinkTarget(link)
	if target.Namespace != link.Namespace {
		in.Grant = c.cfg.Grants.Check(referencegrant.LinkReference(link.Namespace, target.Namespace, target.Name))
	}
	if target.Namespace == link.Namespace || in.Grant.Allowed {
		in.Snapshot, in.SnapshotUnreadable = c.cfg.Snapshots.GetSnapshot(target.Namespace, target.Name)
	}
	want := Conditions(in)
	if !changed(link, want) {
		return nil
	}
	updated := link.DeepCopy()
	for _, cond := range want {
		cond.ObservedGeneration = link.Generation
		meta.SetStatusCondition(&updated.Status.Conditions, cond)
	}
	updated.Status.ObservedGeneration = link.Generation
	_, err = c.cfg.Client.SnapshotV1alpha1().VolumeSnapshotLinks(link.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	if err == nil {
		klog.FromContext(ctx).V(4).Info("Updated the status of a VolumeSnapshotLink", "link", key)
	}
	return err
}
