// Package deletionorder orders a claim's creation against the deletion
// request of the snapshot or claim it is provisioned from, within the
// second that the API's timestamps cannot split: creationTimestamp and
// deletionTimestamp have whole seconds, so a claim created in the second
// of a snapshot's deletion request looked as if it came first, and was
// restored from a snapshot whose deletion had been requested (found by the
// fault-injection suite, test/faults TestSnapshotDeletedMidRestore).
//
// A Log orders them by what this process saw arrive: it records when each
// claim (and each VolumeSnapshotLink, as new as the restores through it)
// was first seen and when each source's deletion request was seen
// arriving (an update that set its deletionTimestamp). A claim first seen
// after the deletion arrived was created after it. A deletion that was
// already there when the source was first seen (the process started, or
// its cache relisted, after it) cannot be ordered, and neither can a claim
// the Log has forgotten, nor one that came with its informer's initial list
// (a cache that synced after the deletion arrived, such as a
// VolumeSnapshotLink cache that could not be read until then, lists
// objects created at any time before): datasource.ServesDespiteDeletion
// then keeps its rule of whole seconds. What remains is the difference between the delays
// of two watches, milliseconds instead of up to a second.
package deletionorder

import (
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Log records sightings. It is safe for concurrent use.
type Log struct {
	now func() time.Time

	mu sync.Mutex
	// claims: when each claim was first seen, zero when it came with an
	// initial list. deletions: when each source's deletion request was
	// seen arriving.
	claims, deletions map[types.UID]time.Time
	// delivering reports, by the Go type of the objects, whether the
	// handler that feeds the Log those objects has been handed its
	// informer's initial list (see Delivering).
	delivering map[reflect.Type]func() bool
}

// Delivering tells the Log that its handler of objects of kind's Go type
// (e.g. &v1.PersistentVolumeClaim{}) is being handed an informer's initial
// list until delivered reports true (the handler registration's
// HasSynced). The informer's cache shows an object before its handlers see
// it: until its list is delivered, an object of that kind not seen yet may
// be one of the list, created at any time before, and cannot be ordered.
// Objects of other kinds are not held up by it. Call it before the
// informer starts.
func (l *Log) Delivering(kind any, delivered func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.delivering == nil {
		l.delivering = map[reflect.Type]func() bool{}
	}
	l.delivering[reflect.TypeOf(kind)] = delivered
}

var _ datasource.DeletionOrder = (*Log)(nil)

// New returns an empty Log that reads the time from now (time.Now when
// nil).
func New(now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{now: now, claims: map[types.UID]time.Time{}, deletions: map[types.UID]time.Time{}}
}

// CreatedAfterDeletion reports whether claim was first seen after the
// deletion request of source was seen arriving. known is false when the
// deletion's arrival was not seen, or the claim came with an initial list.
// A claim not seen yet (its handler has not run) is seen now, unless an
// initial list is still being delivered (see Delivering): then it is not
// known.
func (l *Log) CreatedAfterDeletion(claim, source metav1.Object) (after, known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	deleted, ok := l.deletions[source.GetUID()]
	if !ok {
		return false, false
	}
	if _, seen := l.claims[claim.GetUID()]; !seen && !l.delivered(claim) {
		return false, false
	}
	seen := l.sawClaim(claim.GetUID(), false)
	if seen.IsZero() {
		return false, false
	}
	return seen.After(deleted), true
}

// delivered reports whether the initial list of obj's kind has been
// handed to the Log's handler (true for a kind without one). The caller
// holds mu.
func (l *Log) delivered(obj any) bool {
	d, ok := l.delivering[reflect.TypeOf(obj)]
	return !ok || d()
}

// sawClaim records the first sighting of a claim, listed or not, and
// returns it (zero when listed). The caller holds mu.
func (l *Log) sawClaim(uid types.UID, listed bool) time.Time {
	if t, ok := l.claims[uid]; ok {
		return t
	}
	var t time.Time
	if !listed {
		t = l.now()
	}
	l.claims[uid] = t
	return t
}

// sawUpdate records a deletion request arriving on a source.
func (l *Log) sawUpdate(old, obj metav1.Object) {
	if old.GetDeletionTimestamp() != nil || obj.GetDeletionTimestamp() == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.deletions[obj.GetUID()]; !ok {
		l.deletions[obj.GetUID()] = l.now()
	}
}

func (l *Log) forget(obj metav1.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.claims, obj.GetUID())
	delete(l.deletions, obj.GetUID())
}

// ClaimHandler records claims as they are first seen, and the deletion
// requests of claims (the sources of clones); add it to the claim
// informer.
func (l *Log) ClaimHandler() cache.ResourceEventHandler {
	return sightings{log: l, updates: true}
}

// LinkHandler records VolumeSnapshotLinks as they are first seen, as
// claims are: a restore through a link is as new as the later of its
// claim and its link (datasource.ServesUseDespiteDeletion), and a link
// created in the second of a snapshot's deletion request is ordered as a
// claim would be. A link deleted and re-created is seen anew. Add it to
// the link informer.
func (l *Log) LinkHandler() cache.ResourceEventHandler {
	return sightings{log: l}
}

// sightings feeds the Log the claims (with updates: also their deletion
// requests) or links an informer delivers, telling those of its initial
// list apart.
type sightings struct {
	log     *Log
	updates bool
}

func (s sightings) OnAdd(obj any, isInInitialList bool) { s.log.add(obj, isInInitialList) }

func (s sightings) OnUpdate(oldObj, newObj any) {
	if s.updates {
		s.log.update(oldObj, newObj)
	}
}

func (s sightings) OnDelete(obj any) { s.log.delete(obj) }

// SourceHandler records the deletion requests of sources; add it to the
// VolumeSnapshot informer.
func (l *Log) SourceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{UpdateFunc: l.update, DeleteFunc: l.delete}
}

func (l *Log) add(obj any, listed bool) {
	if o, ok := obj.(metav1.Object); ok {
		l.mu.Lock()
		l.sawClaim(o.GetUID(), listed)
		l.mu.Unlock()
	}
}

func (l *Log) update(oldObj, newObj any) {
	old, ok1 := oldObj.(metav1.Object)
	obj, ok2 := newObj.(metav1.Object)
	if ok1 && ok2 {
		l.sawUpdate(old, obj)
	}
}

func (l *Log) delete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		l.forget(o)
	}
}
