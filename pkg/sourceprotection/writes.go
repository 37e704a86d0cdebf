package sourceprotection

import (
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// writes serializes Protect and release per source and remembers, for each
// source, the object this protector's last write returned, until the cache
// shows a version after the one that write was computed from.
//
// Watch events arrive in order, and every write tests the resourceVersion it
// was computed from, so this protector's writes to a source form a chain of
// versions nobody else wrote in between. While the cache shows a version of
// that chain other than the last, the written object is the newest; once it
// shows any other version, the cache has caught up. A hundred claims restoring one snapshot at once thus
// send one patch, and a Protect right after a release sees the finalizer
// gone rather than the cache's stale copy of it.
type writes struct {
	mu    sync.Mutex
	locks map[datasource.Source]*sourceLock
	last  map[datasource.Source]write
}

type sourceLock struct {
	sync.Mutex
	users int
}

// write is the object the last patch returned, and the versions it and
// the writes before it replaced that the cache may still show.
type write struct {
	replaced []string
	written  metav1.Object
}

// lock locks src and returns the unlock function.
func (w *writes) lock(src datasource.Source) func() {
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[datasource.Source]*sourceLock{}
	}
	l, ok := w.locks[src]
	if !ok {
		l = &sourceLock{}
		w.locks[src] = l
	}
	l.users++
	w.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		w.mu.Lock()
		if l.users--; l.users == 0 {
			delete(w.locks, src)
		}
		w.mu.Unlock()
	}
}

// newest returns the object last written for src if the cache still shows
// the version it was computed from, else cached (and forgets the write).
// Call with src locked.
func (w *writes) newest(src datasource.Source, cached metav1.Object) metav1.Object {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.last[src]
	if !ok {
		return cached
	}
	if slices.Contains(last.replaced, cached.GetResourceVersion()) {
		return last.written
	}
	delete(w.last, src)
	return cached
}

// wrote records that a patch computed from the version from returned
// written. Call with src locked.
func (w *writes) wrote(src datasource.Source, from, written metav1.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[datasource.Source]write{}
	}
	var replaced []string
	if last, ok := w.last[src]; ok && last.written.GetResourceVersion() == from.GetResourceVersion() {
		replaced = last.replaced // from is this protector's own write: extend its chain
	}
	w.last[src] = write{replaced: append(replaced, from.GetResourceVersion()), written: written}
}

// idleSince remembers since when each source (one use of an object: see
// datasource.Source.Object) has been found unused, for Config.Linger.
type idleSince struct {
	mu    sync.Mutex
	since map[datasource.Source]time.Time
}

// used records that src is in use again.
func (i *idleSince) used(src datasource.Source) { i.forget(src) }

// forget drops what is known of src.
func (i *idleSince) forget(src datasource.Source) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.since, src)
}

// remaining returns how much longer unused src is to linger, now that it
// was found unused (again).
func (i *idleSince) remaining(src datasource.Source, now time.Time, linger time.Duration) time.Duration {
	if linger <= 0 {
		return 0
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	since, ok := i.since[src]
	if !ok {
		if i.since == nil {
			i.since = map[datasource.Source]time.Time{}
		}
		i.since[src], since = now, now
	}
	return linger - now.Sub(since)
}
