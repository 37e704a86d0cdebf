package snapshotwebhook

import (
	"context"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// volumeName is the name of the PV the provisioner creates for a claim,
// as the sidecar names it.
func volumeName(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

// guardCaches are the DELETE guard and its caches.
type guardCaches struct {
	guard *DeleteGuard
	// runners run the caches until their context is done.
	runners []func(context.Context)
	// apis report whether each cache can be read.
	apis []stategauge.APIReporter
}

// newDeleteGuard builds the DELETE guard on caches of claims, volumes,
// StorageClasses, ReferenceGrants and VolumeSnapshotLinks (the last two
// optional APIs). The guard decides claims as the sidecars do, set as opts
// says they are (--feature-gates, --cross-namespace-snapshot): a claim
// they leave alone is no restore to guard. Without
// --cross-namespace-snapshot it has no link cache.
func newDeleteGuard(config *rest.Config, opts *Options, snapshotClasses ClassLister) (*guardCaches, error) {
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	gateway, err := gatewayclientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	// The guard never writes a claim back: its cache keeps what the
	// claim-source decision reads, and the provisioner it was handed to.
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithTransform(GuardedClaim))
	claims := factory.Core().V1().PersistentVolumeClaims().Informer()
	if err := claims.AddIndexers(cache.Indexers{requeue.SourceIndex: requeue.IndexBySource}); err != nil {
		return nil, err
	}
	volumes := factory.Core().V1().PersistentVolumes()
	volumes.Informer()
	classes := factory.Storage().V1().StorageClasses()
	classes.Informer()
	grants := referencegrant.NewChecker(referencegrant.Config{Client: gateway, Discovery: gateway.Discovery()})
	snapClient, err := snapclientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	snapshots := newSnapshotMetadataCache(snapClient, snapClient.Discovery())
	guard := &DeleteGuard{
		Finder: sourceuse.Finder{Claims: claims.GetIndexer(), Volumes: volumes.Lister(), VolumeName: volumeName,
			Policy: claimsource.Policy{CrossNamespace: features.CrossNamespaceEnabled(opts.FeatureGate), Grants: grants}},
		Synced:          []cache.InformerSynced{claims.HasSynced, volumes.Informer().HasSynced, classes.Informer().HasSynced},
		SnapshotClasses: snapshotClasses,
		StorageClasses:  classes.Lister(),
		Snapshots:       snapshots,
	}
	g := &guardCaches{guard: guard, runners: []func(context.Context){grants.Run, snapshots.api.Run, func(ctx context.Context) {
		factory.Start(ctx.Done())
		<-ctx.Done()
		factory.Shutdown()
	}}, apis: []stategauge.APIReporter{grants, snapshots, syncedCache{"PersistentVolumeClaim", claims.HasSynced},
		syncedCache{"PersistentVolume", volumes.Informer().HasSynced}, syncedCache{"StorageClass", classes.Informer().HasSynced}}}
	if opts.CrossNamespaceSnapshot {
		linkClient, err := linkclientset.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		links := linkcache.New(linkcache.Config{Client: linkClient, Discovery: linkClient.Discovery()})
		guard.Finder.Links, guard.Finder.Policy.SnapshotLinks, guard.Finder.Policy.Links = links, true, links
		g.runners, g.apis = append(g.runners, links.Run), append(g.apis, links)
	}
	return g, nil
}

// GuardedClaim is the transform of the guard's claim cache: a claim
// trimmed as cachetrim.ClaimSource does, keeping what tells whether a
// provisioner works on it (DeleteGuard.worksOn): the annotation naming the
// provisioner it was handed to (GA, else beta, kept as GA), its class
// (spec.storageClassName and the beta annotation) and its selected node.
func GuardedClaim(obj any) (any, error) {
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return cachetrim.ClaimSource(obj)
	}
	handedTo, class := claimsource.ProvisionerOf(claim), claim.Spec.StorageClassName
	kept := map[string]string{}
	if handedTo != "" {
		kept[claimsource.AnnStorageProvisioner] = handedTo
	}
	for _, k := range []string{v1.BetaStorageClassAnnotation, annSelectedNode} {
		if v, ok := claim.Annotations[k]; ok {
			kept[k] = v
		}
	}
	trimmed, err := cachetrim.ClaimSource(claim)
	if err != nil {
		return trimmed, err
	}
	claim = trimmed.(*v1.PersistentVolumeClaim)
	claim.Spec.StorageClassName = class
	if len(kept) > 0 {
		claim.Annotations = kept
	}
	return claim, nil
}
