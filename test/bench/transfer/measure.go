package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	generated "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/pkg/generated/informers"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// eventually bounds each wait of the bench: 50 transfers at once take
// about a minute on a loaded machine.
const eventually = 10 * time.Minute

// conflictReasons are the request conditions that mean a transfer ran into
// another one, or into an object it did not expect.
var conflictReasons = []string{plan.ReasonSourceLocked, plan.ReasonTargetConflict, plan.ReasonTargetNameTaken,
	plan.ReasonBoundElsewhere, plan.ReasonNeedsAttention, plan.ReasonSourceChanged}

// phaseFailed is the trouble of a request that failed: it will not
// complete.
const phaseFailed = "phase Failed"

// bench holds the clients, the classes and what the watch of the requests
// has seen.
type bench struct {
	env                  *localenv.Env
	api                  generated.Interface
	class, snapshotClass string

	mu sync.Mutex
	// completed is when each request ("namespace/name") was first seen in
	// phase Completed; trouble is what went wrong with one, if anything.
	completed map[string]time.Time
	trouble   map[string]string
}

// newBench creates a StorageClass and a VolumeSnapshotClass of the local
// driver, and starts watching the requests of every namespace.
func newBench(ctx context.Context, env *localenv.Env) (*bench, error) {
	config, err := env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = 1000, 2000
	api, err := generated.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	b := &bench{env: env, api: api, class: "transfer-bench", snapshotClass: "transfer-bench",
		completed: map[string]time.Time{}, trouble: map[string]string{}}
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: b.class}, Provisioner: env.Local.Name}
	if _, err := env.Kube.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	snapClass := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: b.snapshotClass}, Driver: env.Local.Name,
		DeletionPolicy: snapv1.VolumeSnapshotContentDelete}
	if _, err := env.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(ctx, snapClass, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(api, 0)
	requests := factory.Transfer().V1alpha1().StorageTransferRequests().Informer()
	if _, err := requests.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    b.observe,
		UpdateFunc: func(_, obj any) { b.observe(obj) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), requests.HasSynced) {
		return nil, fmt.Errorf("the watch of StorageTransferRequests did not sync")
	}
	return b, nil
}

// observe notes when a request is first seen Completed, and a failure or a
// conflict condition.
func (b *bench) observe(obj any) {
	r, ok := obj.(*transferv1alpha1.StorageTransferRequest)
	if !ok {
		return
	}
	now, key := time.Now(), r.Namespace+"/"+r.Name
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.completed[key]; !seen && r.Status.Phase == transferv1alpha1.PhaseCompleted {
		b.completed[key] = now
	}
	if r.Status.Phase == transferv1alpha1.PhaseFailed {
		b.trouble[key] = phaseFailed
	}
	for _, c := range r.Status.Conditions {
		if slices.Contains(conflictReasons, c.Reason) {
			b.trouble[key] = c.Reason + ": " + c.Message
		}
	}
}

// snapshots transfers n snapshots of one claim at once, each from its own
// request to its own accept, and checks that each target names the backend
// snapshot of its own source.
func (b *bench) snapshots(ctx context.Context, label string, n int) (row, error) {
	src, dst, err := b.namespaces(ctx, label)
	if err != nil {
		return row{}, err
	}
	logf("%s: %d snapshots of one claim", label, n)
	if _, err := b.boundClaim(ctx, src, "data"); err != nil {
		return row{}, err
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("snap-%03d", i)
		claim := "data"
		snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: src},
			Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim}, VolumeSnapshotClassName: &b.snapshotClass}}
		if _, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(src).Create(ctx, snap, metav1.CreateOptions{}); err != nil {
			return row{}, err
		}
	}
	handles := map[string]string{} // snapshot name -> backend snapshot
	err = poll(ctx, "every snapshot of "+label+" to be ready", func(ctx context.Context) (bool, error) {
		snaps, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(src).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, s := range snaps.Items {
			if s.Status == nil || s.Status.ReadyToUse == nil || !*s.Status.ReadyToUse || s.Status.BoundVolumeSnapshotContentName == nil {
				return false, nil
			}
			content, err := b.env.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *s.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
			if err != nil || content.Status == nil || content.Status.SnapshotHandle == nil {
				return false, nil
			}
			handles[s.Name] = *content.Status.SnapshotHandle
		}
		return len(handles) == n, nil
	})
	if err != nil {
		return row{}, err
	}
	latencies, err := b.transfer(ctx, src, dst, transferv1alpha1.KindVolumeSnapshot, names)
	if err != nil {
		return row{}, err
	}
	for _, name := range names {
		target, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(dst).Get(ctx, "moved-"+name, metav1.GetOptions{})
		if err != nil {
			return row{}, err
		}
		content, err := b.env.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *target.Spec.Source.VolumeSnapshotContentName, metav1.GetOptions{})
		if err != nil {
			return row{}, err
		}
		if h := content.Spec.Source.SnapshotHandle; h == nil || *h != handles[name] {
			return row{}, fmt.Errorf("%s/moved-%s names backend snapshot %v, want %s's own %s", dst, name, h, name, handles[name])
		}
	}
	return b.row(ctx, transferv1alpha1.KindVolumeSnapshot, src, dst, latencies)
}

// claim transfers one bound claim that no pod uses, and checks that the
// target claim is bound to the same volume.
func (b *bench) claim(ctx context.Context, label string) (row, error) {
	src, dst, err := b.namespaces(ctx, label)
	if err != nil {
		return row{}, err
	}
	logf("%s: one claim", label)
	pv, err := b.boundClaim(ctx, src, "data")
	if err != nil {
		return row{}, err
	}
	latencies, err := b.transfer(ctx, src, dst, transferv1alpha1.KindPersistentVolumeClaim, []string{"data"})
	if err != nil {
		return row{}, err
	}
	moved, err := b.waitBound(ctx, dst, "moved-data")
	if err != nil {
		return row{}, err
	}
	if moved != pv {
		return row{}, fmt.Errorf("%s/moved-data is bound to %s, want the source's volume %s", dst, moved, pv)
	}
	return b.row(ctx, transferv1alpha1.KindPersistentVolumeClaim, src, dst, latencies)
}

// transfer creates a request in src for each source, waits for their
// tokens, creates all the accepts in dst at once and waits until every
// request is Completed. It returns the time from each accept's creation
// to its request's phase Completed, sorted.
func (b *bench) transfer(ctx context.Context, src, dst, kind string, sources []string) ([]time.Duration, error) {
	requests := b.api.TransferV1alpha1().StorageTransferRequests(src)
	for _, s := range sources {
		r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "move-" + s, Namespace: src},
			Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: kind, Name: s},
				AcceptName: "accept-" + s, TargetName: "moved-" + s}}
		if _, err := requests.Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	tokens := map[string]string{}
	err := poll(ctx, "every token in "+src, func(ctx context.Context) (bool, error) {
		list, err := requests.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, r := range list.Items {
			if r.Spec.Token != "" {
				tokens[r.Name] = r.Spec.Token
			}
		}
		return len(tokens) == len(sources), nil
	})
	if err != nil {
		return nil, err
	}
	created := make([]time.Time, len(sources))
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-" + s, Namespace: dst},
				Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: src, RequestName: "move-" + s, RequestToken: tokens["move-"+s]}}
			created[i] = time.Now()
			_, errs[i] = b.api.TransferV1alpha1().StorageTransferAccepts(dst).Create(ctx, a, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	latencies := make([]time.Duration, len(sources))
	err = poll(ctx, fmt.Sprintf("%d transfers from %s to complete", len(sources), src), func(context.Context) (bool, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		done := 0
		for i, s := range sources {
			key := src + "/move-" + s
			if trouble := b.trouble[key]; trouble == phaseFailed {
				return false, fmt.Errorf("%s: %s", key, trouble)
			}
			if at, ok := b.completed[key]; ok {
				latencies[i] = at.Sub(created[i])
				done++
			}
		}
		return done == len(sources), nil
	})
	slices.Sort(latencies)
	return latencies, err
}

// row counts the requests of src that met a conflict and the Warning
// events of both namespaces.
func (b *bench) row(ctx context.Context, kind, src, dst string, latencies []time.Duration) (row, error) {
	var warnings []string
	for _, ns := range []string{src, dst} {
		events, err := b.env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=" + v1.EventTypeWarning})
		if err != nil {
			return row{}, err
		}
		for _, ev := range events.Items {
			warnings = append(warnings, fmt.Sprintf("%s on %s %s", ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name))
			logf("  warning: %s %s/%s: %s: %s", ev.InvolvedObject.Kind, ns, ev.InvolvedObject.Name, ev.Reason, ev.Message)
		}
	}
	conflicts := 0
	b.mu.Lock()
	for key := range b.trouble {
		if strings.HasPrefix(key, src+"/") {
			conflicts++
		}
	}
	b.mu.Unlock()
	return row{kind: kind, latencies: latencies, warnings: warnings, conflicts: conflicts}, nil
}

// namespaces creates the source and the target namespace of a run.
func (b *bench) namespaces(ctx context.Context, label string) (src, dst string, err error) {
	src, dst = "xfer-"+label+"-src", "xfer-"+label+"-dst"
	for _, name := range []string{src, dst} {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := b.env.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return "", "", err
		}
	}
	return src, dst, nil
}

// boundClaim creates a claim of 10Mi and waits until it is bound.
func (b *bench) boundClaim(ctx context.Context, namespace, name string) (string, error) {
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &b.class,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Mi")}}}}
	if _, err := b.env.Kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	return b.waitBound(ctx, namespace, name)
}

// waitBound waits until the claim is bound and returns its volume's name.
func (b *bench) waitBound(ctx context.Context, namespace, name string) (string, error) {
	claims := b.env.Kube.CoreV1().PersistentVolumeClaims(namespace)
	var volume string
	err := poll(ctx, "claim "+namespace+"/"+name+" to be bound", func(ctx context.Context) (bool, error) {
		claim, err := claims.Get(ctx, name, metav1.GetOptions{})
		if err != nil || claim.Status.Phase != v1.ClaimBound {
			return false, nil
		}
		volume = claim.Spec.VolumeName
		return true, nil
	})
	return volume, err
}

// poll checks condition every 50 ms until it holds, fails, or eventually
// passes.
func poll(ctx context.Context, what string, condition wait.ConditionWithContextFunc) error {
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, eventually, true, condition); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
