package transfer

// The explorer's runner (explore_test.go): it plays one history of a
// scenario, step by step, against the real Controller: before each sync
// it hands the controller's informer caches what the explorer decides
// their watches have delivered, then calls Controller.syncRequest.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
)

// execution is a history played to rest: its steps (the prefix asked
// for, then the default schedule's), the offers of its default part, the
// violations found, and its log when kept.
type execution struct {
	steps  []step
	offers []offer
	found  map[string]string
	syncs  int
	log    []string
}

// maxSyncs bounds the default part of a history: a history that does not
// come to rest within it is a violation (a livelock).
const maxSyncs = 80

// worldClock is the controller's clock: the world's time, which moves
// only when the world rests (a day passes, so that whatever the
// controller waits for with a timeout happens). A completed transfer is
// retired at its next sync (the retention is 0).
type worldClock struct {
	clock.RealClock
	r *runner
}

func (c worldClock) Now() time.Time                  { return c.r.w.now.Time }
func (c worldClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// eventLog is the controller's event recorder: events go to the log.
type eventLog struct{ r *runner }

func (e eventLog) Event(obj runtime.Object, typ, reason, message string) {
	e.r.w.logf("event on %s: %s %s: %s", keyOf(obj), typ, reason, message)
}

func (e eventLog) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

func (e eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

// runner plays histories of one scenario.
type runner struct {
	sc      *scenario
	ctx     context.Context
	kube    *kubefake.Clientset
	snap    *snapfake.Clientset
	api     *fake.Clientset
	verbose bool

	// The current history's world, controller and schedule.
	w *world
	c *Controller
	// cached is what each informer cache was given at the last sync.
	cached  map[string][]any
	current int
	idle    int
	// waited is set once a day passed at rest, and unset by a change.
	waited  bool
	lastErr map[string]error
	e       *execution
	// logged counts the steps logged.
	logged int
}

func newRunner(ctx context.Context, sc *scenario) *runner {
	checkEveryCacheIsFilled()
	r := &runner{sc: sc, ctx: klog.NewContext(ctx, klog.Logger{}),
		kube: kubefake.NewClientset(), snap: snapfake.NewSimpleClientset(), api: fake.NewSimpleClientset()}
	react := func(a clienttesting.Action) (bool, runtime.Object, error) { return r.w.react(a) }
	r.kube.PrependReactor("*", "*", react)
	r.snap.PrependReactor("*", "*", react)
	r.api.PrependReactor("*", "*", react)
	return r
}

// start begins a history: a new world, a new controller.
func (r *runner) start() {
	r.e = &execution{found: map[string]string{}}
	r.w = newWorld()
	r.sc.build(r.w)
	r.w.violated = func(name, detail string) {
		if _, ok := r.e.found[name]; !ok {
			r.e.found[name] = detail
		}
	}
	if r.verbose {
		r.w.note = func(format string, args ...any) { r.e.log = append(r.e.log, "      "+fmt.Sprintf(format, args...)) }
	}
	r.current, r.idle, r.waited, r.lastErr, r.logged = 0, 0, false, map[string]error{}, 0
	r.restart()
}

// restart replaces the controller by a new one over the same API state,
// as after a crash: its caches are listed afresh.
func (r *runner) restart() {
	if r.c != nil {
		r.c.queue.ShutDown()
	}
	c, err := New(Config{Kube: r.kube, Snapshot: r.snap, API: r.api, Recorder: eventLog{r},
		Clock: worldClock{r: r}, Token: func() (string, error) { return testToken, nil },
		Admit: func(_ context.Context, s *snapv1.VolumeSnapshot) error {
			_, _, err := r.w.react(dryRunCreate(s))
			return err
		}})
	if err != nil {
		panic(err)
	}
	r.c, r.cached = c, map[string][]any{}
}

// filledCache is one of the controller's informer caches the explorer
// fills, and the resource it holds.
type filledCache struct {
	res string
	inf cache.SharedIndexInformer
}

// informers are the controller's caches, by resource.
func (r *runner) informers() []filledCache {
	return []filledCache{
		{resRequests, r.c.requests}, {resAccepts, r.c.accepts}, {resSnapshots, r.c.snapshots}, {resContents, r.c.contents},
		{resClaims, r.c.claims}, {resVolumes, r.c.volumes}, {resPods, r.c.pods},
	}
}

// checkEveryCacheIsFilled fails loudly when the Controller has an informer
// cache that informers does not list (it would stay empty).
func checkEveryCacheIsFilled() {
	known := map[string]bool{"requests": true, "accepts": true, "snapshots": true, "contents": true, "claims": true, "volumes": true, "pods": true}
	t := reflect.TypeFor[Controller]()
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == reflect.TypeFor[cache.SharedIndexInformer]() && !known[f.Name] {
			panic("Controller." + f.Name + " is a cache the explorer does not fill: add it to runner.informers (explore_run_test.go)")
		}
	}
}

// view is the world's objects of resource as a watch delivers them.
func (r *runner) view(res string) []any {
	var out []any
	for _, obj := range r.w.list(res, "") {
		out = append(out, obj.DeepCopyObject())
	}
	return out
}

// behind reports whether the cache of res would be behind the world if
// it were not refreshed.
func (r *runner) behind(res string) bool {
	cached, ok := r.cached[res]
	if !ok {
		return false
	}
	now := r.w.list(res, "")
	if len(cached) != len(now) {
		return true
	}
	for i, obj := range now {
		if metaOf(cached[i].(runtime.Object)).GetResourceVersion() != metaOf(obj).GetResourceVersion() {
			return true
		}
	}
	return false
}

// deliver fills the caches: every watch delivers all it has, except the
// one of stale, which stays as the last sync saw it.
func (r *runner) deliver(stale string) {
	for _, i := range r.informers() {
		if _, ok := r.cached[i.res]; i.res != stale || !ok {
			r.cached[i.res] = r.view(i.res)
		}
		if err := i.inf.GetIndexer().Replace(r.cached[i.res], ""); err != nil {
			panic(err)
		}
	}
}

// live are the requests that exist, in schedule order.
func (r *runner) live() []string {
	var out []string
	for _, key := range r.sc.requests {
		ns, name, _ := strings.Cut(key, "/")
		if r.w.get(storeKey{resRequests, ns, name}) != nil {
			out = append(out, key)
		}
	}
	return out
}

// pick is the request a sync takes: the one asked for (which the default
// schedule then keeps), or the default schedule's: the current request
// until it rests, then the next one.
func (r *runner) pick(asked string) string {
	if asked != "" {
		r.current = slices.Index(r.sc.requests, asked)
		return asked
	}
	for i := range r.sc.requests {
		key := r.sc.requests[(r.current+i)%len(r.sc.requests)]
		if slices.Contains(r.live(), key) {
			r.current = (r.current + i) % len(r.sc.requests)
			return key
		}
	}
	return ""
}

// rest reports whether the history is at rest: every live request's
// last sync changed nothing, nor did the other controllers.
func (r *runner) rest() bool {
	return r.idle >= max(1, len(r.live()))
}

// do plays one step. For a default sync it returns what the explorer may
// do instead.
func (r *runner) do(s step) []step {
	if s.move != "" {
		r.logStep(s, "")
		r.makeMove(s.move)
		r.idle = 0
		return nil
	}
	return r.sync(s)
}

// makeMove makes the move named.
func (r *runner) makeMove(name string) {
	for _, m := range r.sc.moves {
		if m.name == name && m.can(r.w) {
			m.do(r.w)
			return
		}
	}
	panic(fmt.Sprintf("move %q cannot be made here", name))
}

// sync is one sync of the controller, and its variants when it is the
// default one.
func (r *runner) sync(s step) []step {
	start := r.w.rv
	isDefault := s == step{}
	if !s.early {
		r.w.runOthers()
	}
	key := r.pick(s.request)
	r.logStep(s, key)
	var variants []step
	if isDefault {
		variants = r.variants(key, r.w.rv != start)
	}
	if key != "" {
		r.deliver(s.stale)
		if s.during != "" {
			r.w.logf("while the controller syncs:")
			r.makeMove(s.during)
		}
		writes, err := r.call(key, s.fault)
		if isDefault {
			variants = append(variants, faultsOf(writes)...)
		}
		r.logSync(key, err)
	}
	r.settle(start, isDefault)
	return variants
}

// variants are what may happen instead of the default sync of key, as the
// world is before it: the sync before the other controllers (when they
// acted), another request's sync, a sync with one cache one sync behind
// (when it is), a move while the sync runs.
func (r *runner) variants(key string, othersActed bool) []step {
	var out []step
	if othersActed {
		out = append(out, step{early: true})
	}
	if key == "" {
		return out
	}
	for _, other := range r.live() {
		if other != key {
			out = append(out, step{request: other})
		}
	}
	for _, i := range r.informers() {
		if r.behind(i.res) {
			out = append(out, step{stale: i.res})
		}
	}
	for _, m := range r.moves() {
		out = append(out, step{during: m.move})
	}
	return out
}

// faultsOf are the faults a sync that made writes writes may meet: a
// crash before each write but the first (a crash before the first is no
// sync at all), a lost answer or a conflict at each.
func faultsOf(writes int) []step {
	var out []step
	for at := range writes {
		if at > 0 {
			out = append(out, step{fault: fault{faultCrash, at}})
		}
		out = append(out, step{fault: fault{faultLost, at}}, step{fault: fault{faultConflict, at}})
	}
	return out
}

// call calls Controller.syncRequest for key under the fault f, and
// returns how many writes it made (or tried) and its error. After a
// crash, a new controller takes over.
func (r *runner) call(key string, f fault) (int, error) {
	r.w.syncing, r.w.fault, r.w.writes, r.w.crashed = key, f, 0, false
	_, err := r.c.syncRequest(r.ctx, key)
	r.e.syncs++
	r.lastErr[key] = err
	writes := r.w.writes
	r.w.fault, r.w.crashed = fault{}, false
	if f.kind == faultCrash {
		r.restart()
	}
	return writes, err
}

// settle counts a default sync that changed nothing towards rest, and
// moves the default schedule to the next request. A perturbed sync never
// counts: what it saw or did not do is retried by a default one (the
// controller's queue retries a failed sync).
func (r *runner) settle(start int64, isDefault bool) {
	if r.w.rv != start || !isDefault {
		r.idle, r.waited = 0, false
		return
	}
	r.idle++
	r.current = (r.current + 1) % max(1, len(r.sc.requests))
}

// moves are the moves the outside world can make now.
func (r *runner) moves() []step {
	var out []step
	for _, m := range r.sc.moves {
		if m.can(r.w) {
			out = append(out, step{move: m.name})
		}
	}
	return out
}

// execute plays prefix, then the default schedule until the world rests;
// checks the invariants at rest; then lets the owners delete the
// requests, plays to rest again and checks again.
func (r *runner) execute(prefix []step) *execution {
	r.start()
	defer r.c.queue.ShutDown()
	for _, s := range prefix {
		r.do(s)
		r.e.steps = append(r.e.steps, s)
	}
	r.playToRest(true)
	r.e.offers = append(r.e.offers, offer{index: len(r.e.steps), steps: r.moves()})
	r.check("at rest")
	r.logf("  the owners delete the requests")
	for _, obj := range r.w.list(resRequests, "") {
		_ = r.w.del("user", keyOf(obj), nil, false)
	}
	r.idle, r.waited = 0, false
	r.playToRest(false)
	r.check("at rest after the requests were deleted")
	return r.e
}

// playToRest plays the default schedule until the world rests, keeping
// the steps and their offers when explored.
func (r *runner) playToRest(explored bool) {
	for n := 0; ; n++ {
		if r.rest() && r.waited {
			return
		}
		if r.rest() {
			r.w.now = metav1.NewTime(r.w.now.Add(24 * time.Hour))
			r.idle, r.waited = 0, true
			r.logf("  a day passes")
		}
		if n == maxSyncs {
			r.w.violated("no-rest", fmt.Sprintf("the world does not come to rest within %d syncs", maxSyncs))
			return
		}
		at := len(r.e.steps)
		moves := r.moves()
		variants := r.sync(step{})
		if explored {
			r.e.offers = append(r.e.offers, offer{index: at, steps: append(moves, variants...)})
			r.e.steps = append(r.e.steps, step{})
		}
	}
}

// check checks the invariants of a world at rest.
func (r *runner) check(when string) {
	r.logf("  %s: checking the invariants", when)
	r.w.checkQuiescent(r.lastErr)
}

func (r *runner) logf(format string, args ...any) {
	if r.verbose {
		r.e.log = append(r.e.log, fmt.Sprintf(format, args...))
	}
}

func (r *runner) logStep(s step, key string) {
	if !r.verbose {
		return
	}
	what := s.String()
	if key != "" {
		what += " (" + key + ")"
	}
	r.logged++
	r.logf("%3d. %s", r.logged, what)
}

// logSync logs what the sync left in the request's status.
func (r *runner) logSync(key string, err error) {
	if !r.verbose {
		return
	}
	ns, name, _ := strings.Cut(key, "/")
	req, _ := r.w.get(storeKey{resRequests, ns, name}).(*transferv1alpha1.StorageTransferRequest)
	switch {
	case req == nil:
		r.logf("      request %s is gone", key)
	default:
		s := "phase " + string(req.Status.Phase)
		if c := meta.FindStatusCondition(req.Status.Conditions, transferv1alpha1.ConditionTransferred); c != nil {
			s += ", " + c.Reason + ": " + c.Message
		}
		if rec := req.Status.Record; rec != nil {
			s += fmt.Sprintf(" [record: step %s, rolling back %t]", rec.Step, rec.RollingBack)
		}
		r.logf("      request %s: %s", key, s)
	}
	if err != nil {
		r.logf("      the sync failed: %v", err)
	}
}

// dryRunCreate is the action of a server-side dry run of the creation of
// s (the generated fake clientsets drop a create's options).
func dryRunCreate(s *snapv1.VolumeSnapshot) clienttesting.CreateActionImpl {
	return clienttesting.NewCreateActionWithOptions(snapv1.SchemeGroupVersion.WithResource("volumesnapshots"), s.Namespace, s,
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}
