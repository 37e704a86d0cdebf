package sidecar

import (
	"fmt"
	"maps"
	"testing"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/nodedeployment"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// The node-deployment tests run the sidecar of node-a with
// --node-deployment, next to a driver whose storage is in zone a. The fake
// API has no Node or CSINode: in this mode the topology comes from the
// driver alone.

const thisNode = "node-a"

// onNodeA sets --node-deployment with NODE_NAME=node-a, no delay before
// claiming an immediately bound claim, and what NodeGetInfo would have
// answered: node-a in zone a. The driver is topology-aware and puts its
// volumes in zone a.
func onNodeA() envOption {
	return func(c *envConfig) {
		c.driverOpts = append(c.driverOpts, csitest.WithAccessibilityConstraints(true), csitest.WithTopology(map[string]string{zoneKey: "a"}))
		c.configure = append(c.configure, func(_ *env, opts *Options, bc *buildConfig) {
			opts.NodeDeployment = NodeDeploymentOptions{Enabled: true, ImmediateBinding: true, BaseDelay: 0, MaxDelay: 0, NodeName: thisNode}
			local := nodedeployment.NewLocal(thisNode, &csispec.NodeGetInfoResponse{NodeId: "id-" + thisNode,
				AccessibleTopology: &csispec.Topology{Segments: map[string]string{zoneKey: "a"}}})
			bc.identity.node = &local
		})
	}
}

// nodeClaimsSeen is claimsSeen for a sidecar of --node-deployment: its
// barrier claim is selected for this node.
func (e *env) nodeClaimsSeen() {
	e.t.Helper()
	e.barriers++
	e.waitForPV(e.createClaim("barriers", fmt.Sprintf("claims-seen-%d", e.barriers), selectedNode(thisNode)))
}

func TestNodeDeploymentProvisionsOnlyTheClaimsOfItsNode(t *testing.T) {
	e := startEnv(t, onNodeA(), oneProvisioningWorker(), beforeStart(func(e *env) {
		e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
	}))
	theirs := e.createClaim("apps", "theirs", inClass(lateClass), selectedNode("node-b"))
	waiting := e.createClaim("apps", "waiting", inClass(lateClass))
	mine := e.createClaim("apps", "mine", inClass(lateClass), selectedNode(thisNode))

	e.waitForPV(mine)
	e.nodeClaimsSeen()
	for _, claim := range []*v1.PersistentVolumeClaim{theirs, waiting} {
		e.noPV(claim)
		if n := len(e.createRequests(claim)); n != 0 {
			t.Errorf("claim %s: %d CreateVolume calls, want none", claim.Name, n)
		}
		if events := e.claimEvents(claim); len(events) != 0 {
			t.Errorf("claim %s: events %v, want none", claim.Name, events)
		}
	}
	// The topology is this node's, from the driver, though the API has no
	// Node or CSINode; and no node watches the cluster's.
	want := &csispec.TopologyRequirement{Requisite: []*csispec.Topology{{Segments: map[string]string{zoneKey: "a"}}},
		Preferred: []*csispec.Topology{{Segments: map[string]string{zoneKey: "a"}}}}
	if got := e.createRequests(mine)[0].GetAccessibilityRequirements(); !proto.Equal(got, want) {
		t.Errorf("accessibility requirements %v, want %v", got, want)
	}
	for _, a := range e.kube.Actions() {
		if r := a.GetResource().Resource; r == "nodes" || r == "csinodes" {
			t.Errorf("the sidecar of a node read %s (%s)", r, a.GetVerb())
		}
	}
}

func TestNodeDeploymentClaimsAnImmediatelyBoundClaim(t *testing.T) {
	e := startEnv(t, onNodeA(), beforeStart(func(e *env) {
		e.createClassWithBinding("now", storagev1.VolumeBindingImmediate)
	}))
	claim := e.createClaim("apps", "data", inClass("now"))

	e.waitForPV(claim)
	got, err := e.kube.CoreV1().PersistentVolumeClaims("apps").Get(e.ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node := got.Annotations[nodedeployment.AnnSelectedNode]; node != thisNode {
		t.Errorf("selected node %q, want %q", node, thisNode)
	}
}

func TestNodeDeploymentDeletesOnlyTheVolumesOfItsNode(t *testing.T) {
	e := startEnv(t, onNodeA(), oneProvisioningWorker(), driverWith(csitest.WithVolume("vol-b", gib)))
	mine := e.waitForPV(e.createClaim("apps", "data", selectedNode(thisNode)))
	// A volume of node-b, released, which the sidecar of node-b deletes.
	theirs := mine.DeepCopy()
	theirs.ObjectMeta = metav1.ObjectMeta{Name: "pv-theirs", Annotations: mine.Annotations, Finalizers: mine.Finalizers}
	theirs.Spec.CSI.VolumeHandle = "vol-b"
	theirs.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"b"}
	theirs.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// With one worker, the volume of node-b is decided on first.
	mine.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, mine, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("DeleteVolume of this node's volume", func() bool { _, ok := e.driver.Volumes()[mine.Spec.CSI.VolumeHandle]; return !ok })
	for _, r := range e.driver.DeleteVolumeRequests() {
		if r.GetVolumeId() == "vol-b" {
			t.Errorf("the sidecar of %s deleted the volume of node-b", thisNode)
		}
	}
}

func TestNodeDeploymentPublishesTheCapacityOfItsSegment(t *testing.T) {
	driver := newCapacities(map[string]int64{"a": 7 * gib})
	e := startEnv(t, onNodeA(), withCapacity(driver), beforeStart(func(e *env) {
		e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
	}))

	obj := e.waitForCapacity(lateClass, "a", 7*gib)
	want := map[string]string{capacity.DriverNameLabel: driverName, capacity.ManagedByLabel: "external-provisioner-" + thisNode}
	if !maps.Equal(obj.Labels, want) {
		t.Errorf("labels %v, want %v", obj.Labels, want)
	}
}

// claimEvents returns the reasons of all events on the claim.
func (e *env) claimEvents(claim *v1.PersistentVolumeClaim) []string {
	e.t.Helper()
	events, err := e.kube.CoreV1().Events(claim.Namespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == claim.Name {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons
}
