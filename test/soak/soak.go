package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// The soak's namespaces: src holds the claim "source" and the snapshots
// taken of it, and same-namespace restores; dst restores src's snapshots
// when a grant exists; other restores them too and is never granted.
const (
	srcNS, dstNS, otherNS = "soak-src", "soak-dst", "soak-other"
	driverName            = "soak.csi.example.com"
	className             = "soak"
	snapshotGroup         = "snapshot.storage.k8s.io"
)

// settleBound bounds each wait of the end: for the claims to settle, for
// the driver's state and the cluster's to agree, for the teardown. It
// bounds a failure, never the speed of a success.
const settleBound = 3 * time.Minute

// kind is what a claim of the soak asks for.
type kind string

const (
	plain    kind = "plain"    // no data source, in dst
	restore  kind = "restore"  // a snapshot of src, in src
	xrestore kind = "xrestore" // a snapshot of src from dst: needs a grant
	xother   kind = "xother"   // a snapshot of src from other: never granted
)

// claim is a claim the soak created, and what happened to it.
type claim struct {
	kind     kind
	ns, name string
	uid      string
	snapshot string // the snapshot restored, if any
	// created is taken before the create call, deleted after the delete
	// call returned (zero: not deleted).
	created, deleted time.Time
}

// volumeName is the name of the claim's PV and of its CreateVolume (the
// sidecar's default --volume-name-prefix).
func (c *claim) volumeName() string { return "pvc-" + c.uid }

func (c *claim) String() string { return fmt.Sprintf("%s %s/%s", c.kind, c.ns, c.name) }

// snapshot is a VolumeSnapshot of src the soak created.
type snapshot struct {
	name string
	// created before the create call; deleted after the delete call
	// returned (zero: not deleted).
	created, deleted time.Time
}

// window is when one grant existed: from before its create call to after
// its delete call returned (zero: it still exists).
type window struct {
	name     string
	from, to time.Time
}

// soak is the running soak: its environment, stack and model of the world.
type soak struct {
	ctx   context.Context
	env   *localenv.Env
	stack *localenv.Stack
	side  *localenv.Sidecar
	calls string // the driver's call log
	o     options

	mu        sync.Mutex
	claims    []*claim
	snapshots []*snapshot
	grants    []window
	pvSeen    map[string]time.Time // PV name -> when the soak first saw it
	apiErrors int
	ops       map[string]int
	// lateRestores counts the restores created naming a snapshot being
	// deleted, deletedWhilePending the snapshots deleted while a restore
	// of them was pending.
	lateRestores, deletedWhilePending int
}

// prepare starts the soak's driver (with a call log) and sidecar next to
// the environment's shared stack, and creates the namespaces, classes, the
// source claim and a first snapshot.
func (s *soak) prepare() error {
	s.calls = filepath.Join(s.env.Work, "soak-calls.jsonl")
	var err error
	if s.stack, err = s.env.StartStack(s.ctx, driverName, []string{"--call-log=" + s.calls}); err != nil {
		return err
	}
	if s.side, err = s.env.StartSidecar(s.ctx, s.stack, "soak", "--v=2", "--enable-pprof"); err != nil {
		return err
	}
	s.watchPVs()
	kube := s.env.Kube
	for _, ns := range []string{srcNS, dstNS, otherNS} {
		if _, err := kube.CoreV1().Namespaces().Create(s.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := kube.StorageV1().StorageClasses().Create(s.ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: className}, Provisioner: driverName}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := s.env.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(s.ctx, &snapv1.VolumeSnapshotClass{
		ObjectMeta: metav1.ObjectMeta{Name: className}, Driver: driverName, DeletionPolicy: snapv1.VolumeSnapshotContentDelete},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	source := &claim{kind: plain, ns: srcNS, name: "source"}
	if err := s.createClaim(source, nil); err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(s.ctx, 100*time.Millisecond, settleBound, true, func(context.Context) (bool, error) {
		return s.seen(source.volumeName()), nil
	}); err != nil {
		return fmt.Errorf("the source claim was not provisioned: %w", err)
	}
	return s.createSnapshot()
}

// watchPVs records when each PV first appears.
func (s *soak) watchPVs() {
	s.pvSeen = map[string]time.Time{}
	factory := informers.NewSharedInformerFactory(s.env.Kube, 0)
	inf := factory.Core().V1().PersistentVolumes().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok {
			s.mu.Lock()
			if _, ok := s.pvSeen[pv.Name]; !ok {
				s.pvSeen[pv.Name] = time.Now()
			}
			s.mu.Unlock()
		}
	}})
	factory.Start(s.ctx.Done())
	factory.WaitForCacheSync(s.ctx.Done())
}

// seen reports whether the PV named has appeared.
func (s *soak) seen(pv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pvSeen[pv]
	return ok
}

// createClaim creates c (named, in its namespace) restoring ref if set,
// and records it with its UID.
func (s *soak) createClaim(c *claim, ref *v1.TypedObjectReference) error {
	class := className
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.ns},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")}},
			DataSourceRef:    ref,
		},
	}
	c.created = time.Now()
	created, err := s.env.Kube.CoreV1().PersistentVolumeClaims(c.ns).Create(s.ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating claim %s: %w", c, err)
	}
	c.uid = string(created.UID)
	s.mu.Lock()
	s.claims = append(s.claims, c)
	s.mu.Unlock()
	return nil
}

// createSnapshot takes a new snapshot of the source claim.
func (s *soak) createSnapshot() error {
	s.mu.Lock()
	snap := &snapshot{name: fmt.Sprintf("snap-%03d", len(s.snapshots))}
	s.mu.Unlock()
	source, class := "source", className
	snap.created = time.Now()
	if _, err := s.env.Snaps.SnapshotV1().VolumeSnapshots(srcNS).Create(s.ctx, &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: snap.name, Namespace: srcNS},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &source},
			VolumeSnapshotClassName: &class}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating snapshot %s: %w", snap.name, err)
	}
	s.mu.Lock()
	s.snapshots = append(s.snapshots, snap)
	s.mu.Unlock()
	return nil
}

// inRepo returns the repository root and a fresh work directory in it.
func inRepo() (root, work string, err error) {
	if root, err = localenv.RepoRoot(); err != nil {
		return "", "", err
	}
	work = filepath.Join(root, ".cache", "soak")
	if err := os.RemoveAll(work); err != nil {
		return "", "", err
	}
	return root, work, os.MkdirAll(work, 0o755)
}
