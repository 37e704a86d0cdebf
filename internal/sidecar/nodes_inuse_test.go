package sidecar

import (
	"strings"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/nodedeployment"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// onNode sets --node-deployment for the sidecar of node, in zone a, as
// onNodeA does for node-a.
func onNode(node string) func(*env, *Options, *buildConfig) {
	return func(_ *env, opts *Options, bc *buildConfig) {
		opts.NodeDeployment = NodeDeploymentOptions{Enabled: true, ImmediateBinding: true, NodeName: node}
		local := nodedeployment.NewLocal(node, &csispec.NodeGetInfoResponse{NodeId: "id-" + node,
			AccessibleTopology: &csispec.Topology{Segments: map[string]string{zoneKey: "a"}}})
		bc.identity.node = &local
	}
}

// TestAnotherNodesSidecarKeepsASourceWhoseRestoreRunsElsewhere: issue 21,
// defect 6. With --node-deployment each node's sidecar protects sources,
// but only node-a's knows that its CreateVolume from prod/snap still runs
// after Bob deletes his claim. node-b's must not release the snapshot,
// whose deletion Alice requested, until node-a's call has ended.
func TestAnotherNodesSidecarKeepsASourceWhoseRestoreRunsElsewhere(t *testing.T) {
	// node-a's source protection has no worker, so that node-b's one worker
	// is the only one that releases anything, and protectionSeen shows what
	// it did.
	e := startEnv(t, onNodeA(), knownSnapshots("prod/snap"), func(c *envConfig) { c.protectionWorkers = 0 }, beforeStart(func(e *env) {
		e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
	}))
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	e.createSnapshot("prod", "snap", true)
	e.createGrant("prod", "bar", "test", "snap")
	claim := e.createClaim("test", "restore", fromSnapshot("prod", "snap"), inClass(lateClass), selectedNode(thisNode))
	e.await(entered, "node-a's CreateVolume from prod/snap")

	nodeB := csitest.Start(t, csitest.WithAccessibilityConstraints(true), csitest.WithTopology(map[string]string{zoneKey: "a"}))
	e.runSidecar(envConfig{crossNamespace: true, timeout: 5 * time.Second, backoff: time.Hour, workers: 1, protectionWorkers: 1,
		configure: []func(*env, *Options, *buildConfig){onNode("node-b")}}, nodeB, prometheus.NewRegistry())
	e.protectionWorkers = 1 // node-b's, for protectionSeen
	e.protectionSeen()      // node-b has decided on the protected snapshot, listed

	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.patchSnapshot("prod", "snap", deletion(t, e.snapshotFinalizers("prod", "snap")))
	e.protectionSeen() // node-b has decided on both
	if f := e.snapshotFinalizers("prod", "snap"); len(protection(f)) == 0 {
		t.Fatalf("snapshot finalizers during node-a's CreateVolume = %v: node-b released the snapshot under it", f)
	}

	close(release)
	e.waitFor("the snapshot to be released once node-a's call has ended", func() bool {
		return len(protection(e.snapshotFinalizers("prod", "snap"))) == 0
	})
}

// TestACentralSidecarWritesNoInUseMarks: without --node-deployment the
// leader is the one process that uses the driver's sources, so its calls in
// flight cost no annotation write on the source; its protection is the
// finalizer alone.
func TestACentralSidecarWritesNoInUseMarks(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/snap"))
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	e.createSnapshot("prod", "snap", true)
	e.createGrant("prod", "bar", "test", "snap")
	claim := e.createClaim("test", "restore", fromSnapshot("prod", "snap"))
	e.await(entered, "the CreateVolume from prod/snap")
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(protection(snap.Finalizers)) == 0 {
		t.Errorf("snapshot finalizers during the CreateVolume = %v, want its protection", snap.Finalizers)
	}
	for k := range snap.Annotations {
		if strings.HasPrefix(k, datasource.InUseAnnotationPrefix) {
			t.Errorf("the snapshot carries in-use mark %s of a sidecar without --node-deployment", k)
		}
	}
	close(release)
	e.waitForPV(claim)
}
