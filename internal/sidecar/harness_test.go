package sidecar

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	libmetrics "sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller/metrics"

	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
	linkfake "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/test/csitest"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// The component tests run the real sidecar wiring (ProvisionController,
// informers, ReferenceGrant and snapshot caches, source protection) against
// client-go fake clientsets and a CSI driver on a real unix socket.

const (
	driverName = csitest.DefaultName
	className  = "fast"
	// eventually is how long a test waits for an asynchronous outcome. It is
	// a generous bound, never a speed assertion.
	eventually = 30 * time.Second
)

// env is one running sidecar and its world.
type env struct {
	t        *testing.T
	ctx      context.Context
	kube     *kubefake.Clientset
	snaps    *snapfake.Clientset
	gateway  *gatewayfake.Clientset
	driver   *csitest.Driver
	registry *prometheus.Registry
	grantAPI *discoveryStub
	// links and linkAPI are the VolumeSnapshotLink client and discovery
	// (--cross-namespace-snapshot, see withLinks).
	links   *linkfake.Clientset
	linkAPI *discoveryStub
	// releases counts snapshot finalizer removals (see recordReleases).
	releases atomic.Int32
	// protectionWorkers is the number of source-protection workers;
	// barriers counts the objects the barriers created.
	protectionWorkers int
	barriers          int
}

type envConfig struct {
	crossNamespace    bool
	grantAPIServed    bool
	snapshotLinks     bool
	linkAPIServed     bool
	driverOpts        []csitest.Option
	timeout           time.Duration
	backoff           time.Duration
	workers           int
	protectionWorkers int
	beforeStart       []func(*env)
	// configure change the options and the build configuration last (see
	// capacity_test.go).
	configure []func(*env, *Options, *buildConfig)
}

type envOption func(*envConfig)

// withLinks sets --cross-namespace-snapshot, with the VolumeSnapshotLink
// CRD served unless linkCRDAbsent.
func withLinks() envOption     { return func(c *envConfig) { c.snapshotLinks = true } }
func linkCRDAbsent() envOption { return func(c *envConfig) { c.linkAPIServed = false } }

func gateOff() envOption                   { return func(c *envConfig) { c.crossNamespace = false } }
func grantCRDAbsent() envOption            { return func(c *envConfig) { c.grantAPIServed = false } }
func csiTimeout(d time.Duration) envOption { return func(c *envConfig) { c.timeout = d } }

// oneProvisioningWorker and oneProtectionWorker let the provisioning and
// the source-protection queues be worked by one worker each, in order, so
// that a barrier (see barriers_test.go) shows what was queued before it is
// done.
func oneProvisioningWorker() envOption { return func(c *envConfig) { c.workers = 1 } }
func oneProtectionWorker() envOption   { return func(c *envConfig) { c.protectionWorkers = 1 } }

// beforeStart runs f on the environment before the sidecar starts, e.g. to
// add reactors to the fake clientsets.
func beforeStart(f func(*env)) envOption {
	return func(c *envConfig) { c.beforeStart = append(c.beforeStart, f) }
}

// retryBackoff replaces the one-hour retry backoff of startEnv.
func retryBackoff(d time.Duration) envOption { return func(c *envConfig) { c.backoff = d } }
func driverWith(o ...csitest.Option) envOption {
	return func(c *envConfig) { c.driverOpts = append(c.driverOpts, o...) }
}

// startEnv starts the sidecar. Its retry backoff starts at one hour, so any
// claim that provisions after a refusal was re-queued by an event.
func startEnv(t *testing.T, options ...envOption) *env {
	t.Helper()
	cfg := envConfig{crossNamespace: true, grantAPIServed: true, linkAPIServed: true, timeout: 5 * time.Second, backoff: time.Hour,
		workers: 4, protectionWorkers: 4}
	for _, o := range options {
		o(&cfg)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, kube: kubefake.NewClientset(), snaps: snapfake.NewSimpleClientset(),
		gateway: gatewayfake.NewSimpleClientset(), registry: prometheus.NewRegistry(),
		grantAPI: &discoveryStub{discoverytest.New()}, links: linkfake.NewSimpleClientset(), linkAPI: &discoveryStub{discoverytest.New()},
		protectionWorkers: cfg.protectionWorkers}
	if cfg.grantAPIServed {
		e.grantAPI.serve(grantResources)
	}
	if cfg.linkAPIServed {
		e.linkAPI.serve(linkResources)
	}
	e.driver = csitest.Start(t, cfg.driverOpts...)
	for _, f := range cfg.beforeStart {
		f(e)
	}
	e.createClass(className, nil)

	e.runSidecar(cfg, e.driver, e.registry)
	return e
}

// runSidecar builds and runs a sidecar for driver on the environment's
// clients until the test ends, its metrics in registry.
func (e *env) runSidecar(cfg envConfig, driver *csitest.Driver, registry *prometheus.Registry) {
	t := e.t
	ctx, cancel := context.WithCancel(e.ctx)
	opts := NewOptions()
	opts.WorkerThreads, opts.FinalizerThreads, opts.ResyncPeriod = cfg.workers, cfg.protectionWorkers, 0
	opts.RetryIntervalStart, opts.RetryIntervalMax = cfg.backoff, cfg.backoff
	opts.Timeout = cfg.timeout
	opts.CrossNamespaceSnapshot = cfg.snapshotLinks
	if cfg.crossNamespace {
		if err := opts.FeatureGate.Set("CrossNamespaceSourceProvisioning=true"); err != nil {
			t.Fatal(err)
		}
	}
	client, err := csiclient.Connect(ctx, csiclient.Config{Address: driver.Address(), Timeout: opts.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	identity, err := probeDriver(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	own, err := metrics.New(registry)
	if err != nil {
		t.Fatal(err)
	}
	libM := libmetrics.New("controller")
	bc := buildConfig{opts: opts, kube: e.kube, snapshots: e.snaps, gateway: e.gateway,
		driver: client, identity: identity, metrics: own, provisionMetrics: &libM,
		snapshotDiscovery: discoverytest.New(snapshotResources), gatewayDiscovery: e.grantAPI,
		links: e.links, linkDiscovery: e.linkAPI, pollInterval: 50 * time.Millisecond, sourceLinger: 50 * time.Millisecond}
	for _, f := range cfg.configure {
		f(e, opts, &bc)
	}
	run, _, err := build(ctx, bc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = client.Close()
	})
}

// --- objects ---------------------------------------------------------------

func (e *env) createClass(name string, params map[string]string) {
	e.t.Helper()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: driverName, Parameters: params}
	if _, err := e.kube.StorageV1().StorageClasses().Create(e.ctx, class, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

type claimOption func(*v1.PersistentVolumeClaim)

func fromSnapshot(namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		group := "snapshot.storage.k8s.io"
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: name}
		if namespace != "" {
			c.Spec.DataSourceRef.Namespace = &namespace
		} else {
			c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: name}
		}
	}
}

func fromRef(group, kind, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: &group, Kind: kind, Name: name}
	}
}

func withSize(size string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	}
}

// createClaim creates a claim as the PV controller hands it over: with the
// storage-provisioner annotation set.
func (e *env) createClaim(namespace, name string, opts ...claimOption) *v1.PersistentVolumeClaim {
	e.t.Helper()
	class := className
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(fmt.Sprintf("uid-%s-%s", namespace, name)),
			ResourceVersion: "1", Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": driverName}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	for _, o := range opts {
		o(claim)
	}
	created, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Create(e.ctx, claim, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// createSnapshot creates a ready snapshot ns/name of this driver, whose
// content points at a snapshot the CSI driver knows.
func (e *env) createSnapshot(namespace, name string, ready bool) {
	e.t.Helper()
	snap, content := snapshotPair(namespace, name, ready)
	if _, err := e.snaps.SnapshotV1().VolumeSnapshotContents().Create(e.ctx, content, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots(namespace).Create(e.ctx, snap, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func snapshotHandle(namespace, name string) string { return "snap-" + namespace + "-" + name }

func snapshotPair(namespace, name string, ready bool) (*snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent) {
	contentName := "content-" + namespace + "-" + name
	handle := snapshotHandle(namespace, name)
	size := resource.MustParse("1Gi")
	snap := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("snap-uid-" + name), ResourceVersion: "1"},
		Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: &contentName, ReadyToUse: &ready,
			RestoreSize: &size},
	}
	content := &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: contentName, ResourceVersion: "1"},
		Spec: snapv1.VolumeSnapshotContentSpec{Driver: driverName,
			VolumeSnapshotRef: v1.ObjectReference{Namespace: namespace, Name: name, UID: snap.UID}},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: &handle, ReadyToUse: &ready},
	}
	return snap, content
}

// grant allows claims in fromNamespace to use snapshot name in namespace
// ("" = every snapshot there).
func (e *env) createGrant(namespace, grantName, fromNamespace, snapshot string) {
	e.t.Helper()
	to := gatewayv1.ReferenceGrantTo{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}
	if snapshot != "" {
		n := gatewayv1.ObjectName(snapshot)
		to.Name = &n
	}
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: gatewayv1.Namespace(fromNamespace)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		},
	}
	if _, err := e.gateway.GatewayV1().ReferenceGrants(namespace).Create(e.ctx, g, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteGrant(namespace, name string) {
	e.t.Helper()
	if err := e.gateway.GatewayV1().ReferenceGrants(namespace).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// --- observations ----------------------------------------------------------

func pvName(claim *v1.PersistentVolumeClaim) string { return "pvc-" + string(claim.UID) }

// volumeName is the CSI volume name the sidecar asks for; with the default
// --volume-name-prefix and --volume-name-uuid-length it is the PV's name.
func volumeName(claim *v1.PersistentVolumeClaim) string { return pvName(claim) }

// waitForPV waits until the claim's PV exists and returns it.
func (e *env) waitForPV(claim *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	e.t.Helper()
	var pv *v1.PersistentVolume
	e.waitFor("PV of claim "+claim.Namespace+"/"+claim.Name, func() bool {
		var err error
		pv, err = e.kube.CoreV1().PersistentVolumes().Get(e.ctx, pvName(claim), metav1.GetOptions{})
		return err == nil
	})
	return pv
}

// noPV asserts the claim has no PV.
func (e *env) noPV(claim *v1.PersistentVolumeClaim) {
	e.t.Helper()
	_, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, pvName(claim), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		e.t.Fatalf("claim %s/%s has a PV (err=%v), want none", claim.Namespace, claim.Name, err)
	}
}

// waitForEvent waits for an event on the claim whose type, reason and
// message contain the given strings, and returns it.
func (e *env) waitForEvent(claim *v1.PersistentVolumeClaim, eventType, reason, messagePart string) v1.Event {
	e.t.Helper()
	var found []v1.Event
	e.waitFor(fmt.Sprintf("%s event %s %q on %s", eventType, reason, messagePart, claim.Name), func() bool {
		found = e.events(claim, eventType, reason, messagePart)
		return len(found) > 0
	})
	return found[0]
}

// eventCount returns how many times the events on the claim whose type,
// reason and message contain the given strings were recorded (repeated
// events are counted in one event's count).
func (e *env) eventCount(claim *v1.PersistentVolumeClaim, eventType, reason, messagePart string) int32 {
	var n int32
	for _, ev := range e.events(claim, eventType, reason, messagePart) {
		n += max(ev.Count, 1)
	}
	return n
}

// events returns the events on the claim whose type, reason and message
// contain the given strings.
func (e *env) events(claim *v1.PersistentVolumeClaim, eventType, reason, messagePart string) []v1.Event {
	events, err := e.kube.CoreV1().Events(claim.Namespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []v1.Event
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == claim.Name && ev.Type == eventType && ev.Reason == reason && strings.Contains(ev.Message, messagePart) {
			out = append(out, ev)
		}
	}
	return out
}

// createRequests returns the CreateVolume requests the driver got for the
// claim.
func (e *env) createRequests(claim *v1.PersistentVolumeClaim) []*csispec.CreateVolumeRequest {
	var out []*csispec.CreateVolumeRequest
	for _, r := range e.driver.CreateVolumeRequests() {
		if r.GetName() == volumeName(claim) {
			out = append(out, r)
		}
	}
	return out
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 20*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		e.t.Fatalf("timed out waiting for %s", what)
	}
}

// --- discovery -------------------------------------------------------------

var (
	grantResources    = discoverytest.Resources("gateway.networking.k8s.io/v1", "referencegrants")
	snapshotResources = discoverytest.Resources("snapshot.storage.k8s.io/v1", "volumesnapshots", "volumesnapshotcontents")
	linkResources     = discoverytest.Resources("snapshot.storage.k8s.io/v1alpha1", "volumesnapshotlinks")
)

// discoveryStub is a discovery whose served resources tests change while
// the sidecar polls it, as when a CRD is installed.
type discoveryStub struct{ *discoverytest.Discovery }

// serve replaces what the API server serves.
func (d *discoveryStub) serve(served ...*metav1.APIResourceList) { d.Serve(served...) }

// knownSnapshots makes the CSI driver know the snapshots "ns/name" that the
// test creates with createSnapshot.
func knownSnapshots(refs ...string) envOption {
	var opts []csitest.Option
	for _, ref := range refs {
		ns, name, _ := strings.Cut(ref, "/")
		opts = append(opts, csitest.WithSnapshot(snapshotHandle(ns, name), 1<<30))
	}
	return driverWith(opts...)
}

// metric returns the value of a counter with the given label from the
// sidecar's registry, 0 when absent.
func (e *env) metric(name, label, value string) float64 {
	e.t.Helper()
	families, err := e.registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// blockFirstCreate is a CreateVolume hook that signals entered on the first
// call and holds that call until release is closed (or the call is
// canceled); every call then proceeds normally.
func blockFirstCreate(entered, release chan struct{}) csitest.CreateVolumeHook {
	var once sync.Once
	return func(ctx context.Context, _ *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		once.Do(func() { close(entered) })
		select {
		case <-release:
			return nil, nil, false
		case <-ctx.Done():
			return nil, ctx.Err(), true
		}
	}
}

// await waits for ch to be closed, failing the test rather than hanging.
func (e *env) await(ch <-chan struct{}, what string) {
	e.t.Helper()
	select {
	case <-ch:
	case <-time.After(eventually):
		e.t.Fatalf("timed out waiting for %s", what)
	}
}

// startStory1InFlight plays KEP-3294's Story 1 up to the driver: a ready
// snapshot prod/foo-backup, Alice's grant bar, Bob's claim test/foo-testing,
// and the claim's CreateVolume held in the driver until release is closed.
func startStory1InFlight(t *testing.T) (*env, *v1.PersistentVolumeClaim, chan struct{}) {
	t.Helper()
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.await(entered, "CreateVolume")
	return e, claim, release
}
