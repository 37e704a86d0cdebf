package sourceprotection

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// What a process knows of its CreateVolume calls in flight (Config.InFlight)
// is its own, and a claim deleted while its call runs no longer says the
// source is in use. So that no other process releases such a source (the
// sidecar of another node with --node-deployment, another driver's;
// issue 21, defect 6), a process that protects a source for a call also
// marks it: the annotation datasource.InUseAnnotationPrefix + its holder
// name, valued with the time until which it holds (RFC 3339). It renews the mark
// while a call of its own may read the source and removes it when none
// does; every other process keeps the source's finalizers while the mark
// has not expired. The holder name is the driver's and, with
// --node-deployment, the node's: a sidecar that restarts takes its
// predecessor's marks for its own and drops them when it releases (the
// predecessor's calls were lost to it anyway, see docs/guarantees.md, "Not (yet)
// guaranteed"), and another process's mark that has expired, its process
// gone, is removed by the next release.

// DefaultInUseTTL is how long a mark holds unless renewed; it is renewed
// every third of it, so a clock skew between nodes of up to two thirds of
// it cannot end a mark early.
const DefaultInUseTTL = 5 * time.Minute

// inUseKey is the annotation key of the holder's mark: a hash, as the name
// of an annotation key is at most 63 characters and a holder name (a
// process's identity) may be longer.
func inUseKey(holder string) string {
	sum := sha256.Sum256([]byte(holder))
	return datasource.InUseAnnotationPrefix + "h-" + hex.EncodeToString(sum[:10])
}

// marksOn returns the keys of the in-use marks on obj (of target), split
// into those of other processes that hold now and those that may go: other
// processes' that have expired, and this process's own key when this
// process has not marked target (its predecessor did). A mark whose time
// cannot be read holds: it cannot be told to have expired.
func (p *Protector) marksOn(target datasource.Source, obj metav1.Object) (holding, stale []string) {
	own := inUseKey(p.cfg.Holder)
	_, marked := p.marks.get(target)
	for k, v := range obj.GetAnnotations() {
		switch {
		case !strings.HasPrefix(k, datasource.InUseAnnotationPrefix):
		case k == own:
			if !marked {
				stale = append(stale, k)
			}
		case expired(v, p.cfg.Now()):
			stale = append(stale, k)
		default:
			holding = append(holding, k)
		}
	}
	return holding, stale
}

// expired reports whether a mark valued until has expired at now.
func expired(until string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339, until)
	return err == nil && !t.After(now)
}

// marks is what this process has marked: for each object (a Target), the
// time its mark holds until.
type marks struct {
	mu    sync.Mutex
	until map[datasource.Source]time.Time
}

func (m *marks) get(target datasource.Source) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	until, ok := m.until[target]
	return until, ok
}

func (m *marks) set(target datasource.Source, until time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.until == nil {
		m.until = map[datasource.Source]time.Time{}
	}
	m.until[target] = until
}

func (m *marks) forget(target datasource.Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.until, target)
}

// marking reports whether this process marks the sources it protects.
func (p *Protector) marking() bool { return p.cfg.Holder != "" }

// mark makes sure target carries this process's mark for more than two
// thirds of the TTL, before a CreateVolume that reads it, and schedules its
// renewal. Call with target locked.
func (p *Protector) mark(ctx context.Context, target datasource.Source, obj metav1.Object) error {
	now := p.cfg.Now()
	if until, ok := p.marks.get(target); ok && until.Sub(now) > p.cfg.InUseTTL*2/3 {
		return nil
	}
	until := now.Add(p.cfg.InUseTTL).UTC()
	if err := p.setMark(ctx, target, obj, until.Format(time.RFC3339Nano)); err != nil {
		return err
	}
	p.marks.set(target, until)
	p.markQueue.AddAfter(target, until.Sub(now)-p.cfg.InUseTTL*2/3)
	return nil
}

// setMark writes this process's mark on target (value "" removes it) with
// a merge patch of that one key, which needs no precondition: no one else
// writes it. Call with target locked.
func (p *Protector) setMark(ctx context.Context, target datasource.Source, obj metav1.Object, value string) error {
	key := inUseKey(p.cfg.Holder)
	return p.patchMarks(ctx, target, obj, marksPatch("", map[string]string{key: value}), func(o metav1.Object) bool {
		return editAnnotation(o, key, value)
	})
}

// patchMarks applies a merge patch of in-use marks to target, computed
// from obj; with upstream's RBAC, which allows no patch, it updates the
// object read afresh with edit instead. Call with target locked.
func (p *Protector) patchMarks(ctx context.Context, target datasource.Source, obj metav1.Object, patch []byte, edit func(metav1.Object) bool) error {
	if _, err := p.patchOrUpdate(ctx, target, obj, types.MergePatchType, patch, edit); err != nil {
		return fmt.Errorf("writing the in-use marks of %s: %w", target, err)
	}
	return nil
}

// marksPatch is the merge patch that sets the marks of edits (a value of
// "" removes the mark), guarded by resourceVersion unless "".
func marksPatch(resourceVersion string, edits map[string]string) []byte {
	annotations := map[string]any{}
	for k, v := range edits {
		annotations[k] = nil
		if v != "" {
			annotations[k] = v
		}
	}
	meta := map[string]any{"annotations": annotations}
	if resourceVersion != "" {
		meta["resourceVersion"] = resourceVersion
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return patch
}

// editAnnotation sets obj's annotation key to value ("" removes it) and
// reports whether that changed it.
func editAnnotation(obj metav1.Object, key, value string) bool {
	annotations := obj.GetAnnotations()
	old, had := annotations[key]
	switch {
	case value == "" && had:
		delete(annotations, key)
	case value != "" && old != value:
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[key] = value
	default:
		return false
	}
	obj.SetAnnotations(annotations)
	return true
}

// usedHere reports whether a CreateVolume of this process may read target,
// in any use.
func (p *Protector) usedHere(target datasource.Source) bool {
	if p.cfg.InFlight == nil {
		return false
	}
	for _, use := range target.Uses() {
		if p.cfg.InFlight.Uses(use) {
			return true
		}
	}
	return false
}

// runMarks renews and removes this process's marks until ctx is done.
func (p *Protector) runMarks(ctx context.Context) {
	for {
		target, shutdown := p.markQueue.Get()
		if shutdown {
			return
		}
		if err := p.renewOrUnmark(ctx, target); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot renew or remove the in-use mark", "source", target.String())
			p.markQueue.AddAfter(target, time.Second)
		}
		p.markQueue.Done(target)
	}
}

// renewOrUnmark renews target's mark while a call of this process may read
// it, and removes it once none does.
func (p *Protector) renewOrUnmark(ctx context.Context, target datasource.Source) error {
	unlock := p.writes.lock(target)
	defer unlock()
	until, ok := p.marks.get(target)
	if !ok {
		return nil
	}
	obj, err := p.current(target)
	if err != nil {
		return err
	}
	if obj == nil {
		p.marks.forget(target)
		return nil
	}
	if p.usedHere(target) {
		if wait := until.Sub(p.cfg.Now()) - p.cfg.InUseTTL*2/3; wait > 0 {
			p.markQueue.AddAfter(target, wait)
			return nil
		}
		return p.mark(ctx, target, obj)
	}
	err = p.setMark(ctx, target, obj, "")
	if err == nil || apierrors.IsNotFound(err) {
		p.marks.forget(target)
		return nil
	}
	return err
}

// newMarkQueue returns the queue of the marks to renew or remove.
func newMarkQueue() workqueue.TypedDelayingInterface[datasource.Source] {
	return workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[datasource.Source]{Name: "source-in-use-marks"})
}

// marksOf returns the object to read the in-use marks of target from: obj
// (as last seen), unless it is this protector's own write that the cache
// has not caught up with, whose annotations it does not keep; then the
// object read afresh. Call with target locked.
func (p *Protector) marksOf(ctx context.Context, target datasource.Source, obj metav1.Object) (metav1.Object, error) {
	cached, err := p.cached(target)
	if err == nil && cached != nil && cached.GetResourceVersion() == obj.GetResourceVersion() {
		return cached, nil
	}
	return p.getObject(ctx, target)
}

// dropStaleMarks removes the stale marks (see marksOn) from target (as
// read: marked) before src's finalizer is released, guarded by the
// resourceVersion they were read at (or, updating, by reading them stale
// again), and returns the object and finalizer patch after it (nil: no
// finalizer left to remove). Call with target locked.
func (p *Protector) dropStaleMarks(ctx context.Context, target, src datasource.Source, marked metav1.Object, stale []string) (metav1.Object, []byte, error) {
	edits := map[string]string{}
	for _, k := range stale {
		edits[k] = ""
	}
	err := p.patchMarks(ctx, target, marked, marksPatch(marked.GetResourceVersion(), edits), func(o metav1.Object) bool {
		_, still := p.marksOn(target, o)
		changed := false
		for _, k := range still {
			changed = editAnnotation(o, k, "") || changed
		}
		return changed
	})
	if err != nil {
		return nil, nil, err
	}
	obj, err := p.current(target)
	if err != nil || obj == nil {
		return nil, nil, err
	}
	return obj, removePatch(obj, src.Finalizer()), nil
}
