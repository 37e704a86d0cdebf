package provisioner

// A declarative test framework for the provisioner, in the manner of
// external-attacher's framework_test.go. A case states the objects in the
// caches, then steps: a provisioning or deletion as the controller library
// would call it, or an event (an object added, changed or deleted in the
// caches). The CSI driver answers from the case's script. The case lists the
// transcript it expects, in order: every API write, every CSI call, every
// event, every injected change and every result. Anything extra or missing
// fails the case, so a test cannot pass while the provisioner does one call
// or write more than it should.
//
// Everything runs on the test's goroutine with fake clientsets and
// indexers standing in for informers: nothing waits and nothing sleeps.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/connection"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/sourceprotection"
)

// frameworkCase is one declarative case.
type frameworkCase struct {
	name string
	// objects are in the caches (and the API) when the case starts:
	// claims, volumes, classes, secrets, snapshots, contents, grants.
	objects []runtime.Object
	// gateOff turns the CrossNamespaceSourceProvisioning gate off.
	gateOff bool
	// driverName is the CSI driver's name; "" means driver.
	driverName string
	// showParameters adds the parameters and the fsType of every
	// CreateVolume to the transcript.
	showParameters bool
	// caps are the driver's capabilities; zero means all of them.
	caps *csiclient.Capabilities
	// options changes the flags, which are defaultOpts otherwise.
	options func(*Options)
	// attributesClassesUnserved: the cluster serves no
	// VolumeAttributesClasses.
	attributesClassesUnserved bool
	// attachmentsUnreadable: VolumeAttachments cannot be listed.
	attachmentsUnreadable bool
	// forbidden are the writes the RBAC refuses, as "<verb> <resource>",
	// e.g. "patch volumesnapshots".
	forbidden []string
	// steps run in order.
	steps []step
	// want is the whole transcript, in order.
	want []string
}

// step is one thing that happens: the provisioner is called, or the world
// changes. The driver answers the calls the step makes from answers, in
// order.
type step struct {
	run     func(w *world) string
	answers []answer
}

// answer is the driver's reply to one CSI call. during runs while the call
// is in the driver, before it returns: an event that reaches the caches
// while CreateVolume runs.
type answer struct {
	err error
	// capacity is the created volume's size; 0 means what was requested.
	capacity int64
	// ignoreSource answers without the requested content source.
	ignoreSource bool
	// volumeContext is the created volume's context.
	volumeContext map[string]string
	during        func(w *world)
}

// world is the provisioner's view of the cluster in a case.
type world struct {
	t          *testing.T
	ctx        context.Context
	kube       *kubefake.Clientset
	snaps      *snapfake.Clientset
	indexers   map[schema.GroupVersionResource]cache.Indexer
	grants     []referencegrant.Grant
	recorder   *record.FakeRecorder
	forbidden  []string
	prov       *Provisioner
	answers    []answer
	transcript []string
	// showParameters, see frameworkCase.
	showParameters bool
	// pendingRefresh copies patched objects into the caches once the
	// fake API has applied the patches.
	pendingRefresh []func()
	// clock is the provisioner's clock; only wait moves it.
	clock time.Time
}

var (
	claimsGVR    = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	volumesGVR   = v1.SchemeGroupVersion.WithResource("persistentvolumes")
	secretsGVR   = v1.SchemeGroupVersion.WithResource("secrets")
	classesGVR   = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	nodesGVR     = v1.SchemeGroupVersion.WithResource("nodes")
	csiNodesGVR  = storagev1.SchemeGroupVersion.WithResource("csinodes")
	vacsGVR      = storagev1.SchemeGroupVersion.WithResource("volumeattributesclasses")
	vasGVR       = storagev1.SchemeGroupVersion.WithResource("volumeattachments")
	snapshotsGVR = snapv1.SchemeGroupVersion.WithResource("volumesnapshots")
	contentsGVR  = snapv1.SchemeGroupVersion.WithResource("volumesnapshotcontents")
)

// allCapabilities is a driver that can provision, restore and clone.
var allCapabilities = csiclient.Capabilities{ControllerService: true, CreateDeleteVolume: true, CloneVolume: true, CreateDeleteSnapshot: true}

// capsWith is allCapabilities with what set adds.
func capsWith(set func(c *csiclient.Capabilities)) *csiclient.Capabilities {
	c := allCapabilities
	set(&c)
	return &c
}

func runFramework(t *testing.T, cases []frameworkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc)
			for i, s := range tc.steps {
				w.answers = s.answers
				if line := s.run(w); line != "" {
					w.log("%s", line)
				}
				w.drainEvents()
				if len(w.answers) > 0 {
					w.log("step %d: %d CSI answers left unused", i+1, len(w.answers))
				}
			}
			if got := w.transcript; !slices.Equal(got, tc.want) {
				t.Errorf("transcript:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func newWorld(t *testing.T, tc frameworkCase) *world {
	w := &world{t: t, ctx: context.Background(), recorder: record.NewFakeRecorder(100), forbidden: tc.forbidden,
		indexers: map[schema.GroupVersionResource]cache.Indexer{}, showParameters: tc.showParameters}
	var kubeObjs, snapObjs []runtime.Object
	for _, gvr := range []schema.GroupVersionResource{claimsGVR, volumesGVR, classesGVR, nodesGVR, csiNodesGVR, vacsGVR, vasGVR, snapshotsGVR, contentsGVR} {
		indexers := cache.Indexers{}
		if gvr == claimsGVR {
			indexers[requeue.SourceIndex] = requeue.IndexBySource
		}
		w.indexers[gvr] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	}
	for _, obj := range tc.objects {
		switch o := obj.(type) {
		case *gatewayv1.ReferenceGrant:
			w.grants = append(w.grants, referencegrant.FromV1(o))
			continue
		case *snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent:
			snapObjs = append(snapObjs, obj)
		default:
			kubeObjs = append(kubeObjs, obj)
		}
		if inf, ok := w.indexers[gvrOf(obj)]; ok {
			must(t, inf.Add(obj.DeepCopyObject()))
		}
	}
	w.kube, w.snaps = kubefake.NewClientset(kubeObjs...), snapfake.NewSimpleClientset(snapObjs...)
	w.kube.PrependReactor("*", "*", w.recordWrite)
	w.snaps.PrependReactor("*", "*", w.recordWrite)

	caps := allCapabilities
	if tc.caps != nil {
		caps = *tc.caps
	}
	driverName := driver
	if tc.driverName != "" {
		driverName = tc.driverName
	}
	claims := corelisters.NewPersistentVolumeClaimLister(w.indexers[claimsGVR])
	volumes := corelisters.NewPersistentVolumeLister(w.indexers[volumesGVR])
	policy := claimsource.Policy{CrossNamespace: !tc.gateOff, Grants: w, Snapshots: w, Claims: claims, Volumes: volumes,
		Driver: claimsource.Driver{Name: driverName, RestoresSnapshots: caps.SupportsSnapshotRestore(), Clones: caps.SupportsClone()}}
	attempts := inflight.New()
	protector := sourceprotection.New(sourceprotection.Config{Client: w.kube, SnapshotClient: w.snaps, Snapshots: w,
		Claims: w.indexers[claimsGVR], Volumes: volumes, Policy: policy, InFlight: attempts,
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	m, err := metrics.New(prometheus.NewRegistry())
	must(t, err)
	opts := defaultOpts
	if tc.options != nil {
		tc.options(&opts)
	}
	var attachments Attachments
	if caps.PublishUnpublishVolume { // as build.go wires it
		attachments = attachmentCache{w.indexers[vasGVR], !tc.attachmentsUnreadable}
	}
	w.prov = New(Config{DriverName: driverName, Identity: testIdentity, Capabilities: caps, Driver: w, Client: w.kube,
		Claims: claims, Volumes: volumes, Classes: storagelisters.NewStorageClassLister(w.indexers[classesGVR]),
		Nodes: corelisters.NewNodeLister(w.indexers[nodesGVR]), CSINodes: storagelisters.NewCSINodeLister(w.indexers[csiNodesGVR]),
		AttributesClasses: attributesClassCache{w.indexers[vacsGVR], !tc.attributesClassesUnserved}, Attachments: attachments,
		Policy: policy, Protector: protector, InFlight: attempts, Recorder: w.recorder, Metrics: m,
		Options: opts, Now: func() time.Time { return w.clock },
		RequeueAfter: func(claim *v1.PersistentVolumeClaim, d time.Duration) {
			w.log("requeue %s after %v", key(claim.Namespace, claim.Name), d)
		}})
	return w
}

// wait advances the world's clock by d.
func wait(d time.Duration) step {
	return step{run: func(w *world) string {
		w.clock = w.clock.Add(d)
		return ""
	}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) log(format string, args ...any) {
	w.transcript = append(w.transcript, fmt.Sprintf(format, args...))
}

// recordWrite logs every write to the API and lets the fake's tracker apply
// it; the result reaches the caches at once, as an informer would deliver
// it.
func (w *world) recordWrite(action k8stesting.Action) (bool, runtime.Object, error) {
	var line string
	switch a := action.(type) {
	case k8stesting.PatchAction:
		line = fmt.Sprintf("patch %s %s: %s", a.GetResource().Resource, key(a.GetNamespace(), a.GetName()), describePatch(a.GetPatch()))
	case k8stesting.CreateAction, k8stesting.UpdateAction, k8stesting.DeleteAction:
		line = fmt.Sprintf("%s %s", a.GetVerb(), a.GetResource().Resource)
	default:
		return false, nil, nil // reads are not part of the transcript
	}
	if slices.Contains(w.forbidden, action.GetVerb()+" "+action.GetResource().Resource) {
		w.log("%s → Forbidden", line)
		return true, nil, apierrors.NewForbidden(action.GetResource().GroupResource(), "", errors.New("RBAC: access denied"))
	}
	w.log("%s", line)
	switch a := action.(type) {
	case k8stesting.PatchAction:
		defer w.refreshCache(a.GetResource(), a.GetNamespace(), a.GetName())
	case k8stesting.UpdateAction:
		m := mustMeta(w.t, a.GetObject())
		defer w.refreshCache(a.GetResource(), m.GetNamespace(), m.GetName())
	}
	return false, nil, nil
}

// refreshCache queues copying an object the provisioner patched from the
// API into its cache, once the fake's tracker has applied the patch.
func (w *world) refreshCache(gvr schema.GroupVersionResource, namespace, name string) {
	w.pendingRefresh = append(w.pendingRefresh, func() {
		tracker := w.kube.Tracker()
		if gvr.Group == snapv1.GroupName {
			tracker = w.snaps.Tracker()
		}
		obj, err := tracker.Get(gvr, namespace, name)
		if err == nil {
			must(w.t, w.indexers[gvr].Update(obj))
		}
	})
}

// describePatch summarizes a JSON patch by its operations on the object.
func describePatch(patch []byte) string {
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		return string(patch)
	}
	var parts []string
	for _, op := range ops {
		if op.Op == "test" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s %v", op.Op, op.Path, op.Value))
	}
	return strings.Join(parts, "; ")
}

func (w *world) drainEvents() {
	for {
		select {
		case e := <-w.recorder.Events:
			w.log("event %s", e)
		default:
			return
		}
	}
}

func gvrOf(obj runtime.Object) schema.GroupVersionResource {
	switch obj.(type) {
	case *v1.PersistentVolumeClaim:
		return claimsGVR
	case *v1.PersistentVolume:
		return volumesGVR
	case *v1.Secret:
		return secretsGVR
	case *storagev1.StorageClass:
		return classesGVR
	case *v1.Node:
		return nodesGVR
	case *storagev1.VolumeAttributesClass:
		return vacsGVR
	case *storagev1.VolumeAttachment:
		return vasGVR
	case *storagev1.CSINode:
		return csiNodesGVR
	case *snapv1.VolumeSnapshot:
		return snapshotsGVR
	case *snapv1.VolumeSnapshotContent:
		return contentsGVR
	}
	return schema.GroupVersionResource{}
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Check is the grant cache: the grants currently in the world.
func (w *world) Check(ref referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decide(w.grants, ref)
}

// GetSnapshot and GetContent are the snapshot caches.
func (w *world) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	obj, ok, err := w.indexers[snapshotsGVR].GetByKey(key(namespace, name))
	if !ok || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshot), nil
}

func (w *world) GetContent(name string) (*snapv1.VolumeSnapshotContent, error) {
	obj, ok, err := w.indexers[contentsGVR].GetByKey(name)
	if !ok || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshotContent), nil
}

// attributesClassCache is the VolumeAttributesClass cache: the classes in
// indexer, or, when the cluster does not serve them, an error saying so.
type attributesClassCache struct {
	indexer cache.Indexer
	served  bool
}

func (c attributesClassCache) Get(name string) (*storagev1.VolumeAttributesClass, error) {
	if !c.served {
		return nil, fmt.Errorf("VolumeAttributesClass API is %w", optionalapi.ErrNotServed)
	}
	obj, ok, err := c.indexer.GetByKey(name)
	if err != nil || !ok {
		return nil, apierrors.NewNotFound(storagev1.Resource("volumeattributesclasses"), name)
	}
	return obj.(*storagev1.VolumeAttributesClass), nil
}

// attachmentCache is the VolumeAttachment cache: the attachments in
// indexer, or, when they cannot be listed, an error saying so.
type attachmentCache struct {
	indexer  cache.Indexer
	readable bool
}

func (c attachmentCache) OfVolume(pv string) ([]*storagev1.VolumeAttachment, error) {
	if !c.readable {
		return nil, fmt.Errorf("cannot list storage.k8s.io/v1/volumeattachments: %w", optionalapi.ErrForbidden)
	}
	var out []*storagev1.VolumeAttachment
	for _, obj := range c.indexer.List() {
		if va := obj.(*storagev1.VolumeAttachment); ptr.Deref(va.Spec.Source.PersistentVolumeName, "") == pv {
			out = append(out, va)
		}
	}
	return out, nil
}

// CreateVolume and DeleteVolume are the driver: they log the call and
// answer from the step's script. A call without an answer is unexpected.
func (w *world) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	line := "CreateVolume " + req.GetName() + describeMigrated(ctx)
	switch src := req.GetVolumeContentSource(); {
	case src.GetSnapshot() != nil:
		line += " from snapshot " + src.GetSnapshot().GetSnapshotId()
	case src.GetVolume() != nil:
		line += " from volume " + src.GetVolume().GetVolumeId()
	}
	line += describeSecret(req.GetSecrets()) + describeTopology(req.GetAccessibilityRequirements())
	if w.showParameters {
		line += fmt.Sprintf(" with parameters %v fsType %q", req.GetParameters(), requestedFSType(req))
	}
	if m := req.GetMutableParameters(); len(m) > 0 {
		line += fmt.Sprintf(" with mutable parameters %v", m)
	}
	a, ok := w.nextAnswer(line)
	if !ok {
		return nil, errors.New("unexpected call")
	}
	if a.err != nil {
		return nil, a.err
	}
	capacity := a.capacity
	if capacity == 0 {
		capacity = req.GetCapacityRange().GetRequiredBytes()
	}
	vol := &csi.Volume{VolumeId: "id-" + req.GetName(), CapacityBytes: capacity, VolumeContext: a.volumeContext}
	if !a.ignoreSource {
		vol.ContentSource = req.GetVolumeContentSource()
	}
	return &csi.CreateVolumeResponse{Volume: vol}, nil
}

func (w *world) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) error {
	a, ok := w.nextAnswer("DeleteVolume " + req.GetVolumeId() + describeMigrated(ctx) + describeSecret(req.GetSecrets()))
	if !ok {
		return errors.New("unexpected call")
	}
	return a.err
}

// describeMigrated marks a CSI call for a migrated in-tree volume, as the
// CSI connection's metrics label it.
func describeMigrated(ctx context.Context) string {
	if info, ok := ctx.Value(connection.AdditionalInfoKey).(connection.AdditionalInfo); ok && info.Migrated == "true" {
		return " (migrated)"
	}
	return ""
}

// describeSecret shows the secret a CSI call carries, by its keys.
func describeSecret(secret map[string]string) string {
	if len(secret) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(secret))
	return " with secret " + strings.Join(keys, ",")
}

// describeTopology shows a topology requirement's segments, each as its
// sorted key=value pairs.
func describeTopology(req *csi.TopologyRequirement) string {
	if req == nil {
		return ""
	}
	list := func(topologies []*csi.Topology) string {
		var out []string
		for _, t := range topologies {
			var pairs []string
			for _, k := range slices.Sorted(maps.Keys(t.GetSegments())) {
				pairs = append(pairs, k+"="+t.GetSegments()[k])
			}
			out = append(out, strings.Join(pairs, ","))
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	return " in " + list(req.GetRequisite()) + " preferring " + list(req.GetPreferred())
}

func (w *world) nextAnswer(line string) (answer, bool) {
	if len(w.answers) == 0 {
		w.log("%s (unexpected: no answer scripted)", line)
		return answer{}, false
	}
	a := w.answers[0]
	w.answers = w.answers[1:]
	if a.err != nil {
		line += " → " + status.Code(a.err).String()
	}
	w.log("%s", line)
	if a.during != nil {
		a.during(w)
	}
	return a, true
}

// Steps.

// provision runs a claim as the controller library does: the filter, then
// Provision, with the StorageClass the claim names.
func provision(claimKey string, answers ...answer) step {
	return provisionOn(claimKey, "", answers...)
}

// provisionOn provisions a claim for which the scheduler selected node
// ("" for immediate binding).
func provisionOn(claimKey, node string, answers ...answer) step {
	return step{answers: answers, run: func(w *world) string {
		claim := w.claim(claimKey)
		if claim == nil {
			return "provision " + claimKey + ": no such claim"
		}
		return w.provisionOn(claim, node)
	}}
}

// provisionUnfiltered calls Provision without the filter, as the library
// does for a claim it retries.
func provisionUnfiltered(claimKey string, answers ...answer) step {
	return step{answers: answers, run: func(w *world) string {
		claim := w.claim(claimKey)
		if claim == nil {
			return "provision " + claimKey + ": no such claim"
		}
		return w.callProvision(claim, "")
	}}
}

func (w *world) provision(claim *v1.PersistentVolumeClaim) string { return w.provisionOn(claim, "") }

func (w *world) provisionOn(claim *v1.PersistentVolumeClaim, node string) string {
	if !w.prov.ShouldProvision(w.ctx, claim) {
		w.drainEvents()
		return "provision " + key(claim.Namespace, claim.Name) + ": left alone"
	}
	return w.callProvision(claim, node)
}

func (w *world) callProvision(claim *v1.PersistentVolumeClaim, node string) string {
	label := "provision " + key(claim.Namespace, claim.Name) + ": "
	obj, _, err := w.indexers[classesGVR].GetByKey(*claim.Spec.StorageClassName)
	must(w.t, err)
	opts := controller.ProvisionOptions{PVC: claim, StorageClass: obj.(*storagev1.StorageClass), PVName: "pvc-" + string(claim.UID),
		SelectedNodeName: node}
	pv, state, err := w.prov.Provision(w.ctx, opts)
	w.flushRefresh()
	return label + describeResult(pv, state, err)
}

// deleteVolume runs a released PV as the controller library does.
func deleteVolume(name string, answers ...answer) step {
	return step{answers: answers, run: func(w *world) string {
		obj, ok, err := w.indexers[volumesGVR].GetByKey(name)
		if !ok || err != nil {
			return "delete " + name + ": no such volume"
		}
		if err := w.prov.Delete(w.ctx, obj.(*v1.PersistentVolume)); err != nil {
			return "delete " + name + ": " + describeErr(err)
		}
		return "delete " + name + ": done"
	}}
}

// update puts obj into the caches (added or changed), as an informer
// event would.
func update(obj runtime.Object) step {
	return step{run: func(w *world) string { return w.update(obj) }}
}

// remove deletes obj from the caches.
func remove(obj runtime.Object) step {
	return step{run: func(w *world) string { return w.remove(obj) }}
}

func (w *world) update(obj runtime.Object) string {
	m := mustMeta(w.t, obj)
	if g, ok := obj.(*gatewayv1.ReferenceGrant); ok {
		w.grants = append(w.grants, referencegrant.FromV1(g))
		return "> grant " + key(m.GetNamespace(), m.GetName()) + " created"
	}
	must(w.t, w.indexers[gvrOf(obj)].Update(obj.DeepCopyObject()))
	if pv, ok := obj.(*v1.PersistentVolume); ok {
		// The sidecar's PV informer handler.
		w.prov.VolumeSaved(pv)
	}
	return "> " + gvrOf(obj).Resource + " " + key(m.GetNamespace(), m.GetName()) + " updated"
}

func (w *world) remove(obj runtime.Object) string {
	m := mustMeta(w.t, obj)
	if _, ok := obj.(*gatewayv1.ReferenceGrant); ok {
		kept := w.grants[:0]
		for _, g := range w.grants {
			if g.Namespace != m.GetNamespace() || g.Name != m.GetName() {
				kept = append(kept, g)
			}
		}
		w.grants = kept
		return "> grant " + key(m.GetNamespace(), m.GetName()) + " deleted"
	}
	must(w.t, w.indexers[gvrOf(obj)].Delete(obj))
	return "> " + gvrOf(obj).Resource + " " + key(m.GetNamespace(), m.GetName()) + " deleted"
}

// while returns an answer's during hook that applies the step's change in
// the middle of a CSI call, logging it there.
func while(s step) func(w *world) {
	return func(w *world) { w.log("%s", s.run(w)) }
}

func mustMeta(t *testing.T, obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	must(t, err)
	return m
}

func (w *world) claim(k string) *v1.PersistentVolumeClaim {
	obj, ok, err := w.indexers[claimsGVR].GetByKey(k)
	if !ok || err != nil {
		return nil
	}
	return obj.(*v1.PersistentVolumeClaim)
}

func (w *world) flushRefresh() {
	for _, f := range w.pendingRefresh {
		f()
	}
	w.pendingRefresh = nil
}

// describeResult is a Provision result in the transcript: the state, and
// the PV or the error's cause.
func describeResult(pv *v1.PersistentVolume, state controller.ProvisioningState, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s, %s", state, describeErr(err))
	case pv != nil && pv.Spec.VolumeAttributesClassName != nil:
		return fmt.Sprintf("%s, PV %s of %s in VolumeAttributesClass %s", state, pv.Name, describeSource(pv), *pv.Spec.VolumeAttributesClassName)
	case pv != nil:
		return fmt.Sprintf("%s, PV %s of %s", state, pv.Name, describeSource(pv))
	}
	return string(state)
}

// describeSource is the volume of a PV: a CSI volume handle, or an in-tree
// source (CSI migration).
func describeSource(pv *v1.PersistentVolume) string {
	switch src := pv.Spec.PersistentVolumeSource; {
	case src.CSI != nil:
		return src.CSI.VolumeHandle
	case src.AWSElasticBlockStore != nil:
		return "in-tree EBS volume " + src.AWSElasticBlockStore.VolumeID
	}
	return "an unknown source"
}

// describeErr names an error by its cause: a volume in use (only as the
// library recognizes it, unwrapped), a refusal's reason, an ignored claim, a
// CSI status code, or the text.
func describeErr(err error) string {
	var refusedErr *RefusedError
	var ignored *controller.IgnoredError
	if inUse, ok := err.(*controller.VolumeInUseError); ok { //nolint:errorlint // as the library tests it
		return "in use: " + inUse.Reason
	}
	switch {
	case errors.As(err, &refusedErr):
		return "refused " + refusedErr.Reason
	case errors.As(err, &ignored):
		return "ignored: " + ignored.Reason
	}
	if s, ok := status.FromError(err); ok {
		return "CSI " + s.Code().String()
	}
	return "error: " + err.Error()
}
