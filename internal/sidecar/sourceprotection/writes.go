package sourceprotection

import (
	"slices"
	"strings"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// writes serializes Protect and release per source and remembers, for each
// source, what this protector's decisions read of the object its last write
// returned (its resourceVersion, finalizers and deletionTimestamp; never
// the object itself, whose annotations and managed fields could be
// kilobytes), until the cache shows a version after the one that write was
// computed from, or the source is deleted.
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

// write is what the last patch returned, and the versions it and the
// writes before it replaced that the cache may still show.
type write struct {
	replaced []string
	written  writtenMeta
}

// writtenMeta is the part of a written object that Protect and release
// decide with: the finalizers to add to or remove from, the
// resourceVersion their patch tests, and whether the source's deletion is
// requested (datasource.ServesDespiteDeletion). The strings are copies, so
// nothing of the API server's answer is kept.
type writtenMeta struct {
	resourceVersion string
	finalizers      []string
	deletion        *metav1.Time
}

func metaOf(obj metav1.Object) writtenMeta {
	m := writtenMeta{resourceVersion: strings.Clone(obj.GetResourceVersion())}
	for _, f := range obj.GetFinalizers() {
		m.finalizers = append(m.finalizers, strings.Clone(f))
	}
	if d := obj.GetDeletionTimestamp(); d != nil {
		m.deletion = d.DeepCopy()
	}
	return m
}

// over returns cached, the same object in an older version, as written:
// its identity (namespace, name, UID, creation) with the written metadata.
func (m writtenMeta) over(cached metav1.Object) metav1.Object {
	return &metav1.ObjectMeta{Namespace: cached.GetNamespace(), Name: cached.GetName(), UID: cached.GetUID(),
		CreationTimestamp: cached.GetCreationTimestamp(), ResourceVersion: m.resourceVersion,
		Finalizers: m.finalizers, DeletionTimestamp: m.deletion}
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

// newest returns src as last written if the cache (cached) still shows a
// version that write replaced, else cached (and forgets the write). Call
// with src locked.
func (w *writes) newest(src datasource.Source, cached metav1.Object) metav1.Object {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.last[src]
	if !ok {
		return cached
	}
	if slices.Contains(last.replaced, cached.GetResourceVersion()) {
		return last.written.over(cached)
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
	if last, ok := w.last[src]; ok && last.written.resourceVersion == from.GetResourceVersion() {
		replaced = last.replaced // from is this protector's own write: extend its chain
	}
	w.last[src] = write{replaced: append(replaced, strings.Clone(from.GetResourceVersion())), written: metaOf(written)}
}

// seen forgets the last write to src once the cache has shown it (an
// informer event carrying its resourceVersion): the cache then holds that
// version or a later one, and newest would answer with the cache anyway.
// An event of an older version (informers deliver events after the cache
// has moved on) keeps it.
func (w *writes) seen(src datasource.Source, resourceVersion string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.last[src]; ok && last.written.resourceVersion == resourceVersion {
		delete(w.last, src)
	}
}

// forget drops the last write to src. Call with src locked.
func (w *writes) forget(src datasource.Source) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, src)
}

// sourceSeen is called with each new version of a snapshot or claim the
// informers show (see writes.seen).
func (p *Protector) sourceSeen(obj any) {
	if target, resourceVersion, ok := sourceOf(obj); ok {
		p.writes.seen(target, resourceVersion)
	}
}

// sourceGone forgets the last write to a snapshot or claim the informers
// saw deleted, so that sources restored or cloned once and then deleted
// leave nothing behind. It waits for a write of the source in progress, so
// that the write's record is not made after it.
func (p *Protector) sourceGone(obj any) {
	target, _, ok := sourceOf(unwrap(obj))
	if !ok {
		return
	}
	unlock := p.writes.lock(target)
	defer unlock()
	p.writes.forget(target)
}

// sourceOf names a snapshot or claim of the informers as the target of
// writes (datasource.Source.Target), with its resourceVersion.
func sourceOf(obj any) (target datasource.Source, resourceVersion string, ok bool) {
	switch o := obj.(type) {
	case *snapv1.VolumeSnapshot:
		return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: o.Namespace, Name: o.Name},
			o.ResourceVersion, true
	case *v1.PersistentVolumeClaim:
		return datasource.Source{Kind: datasource.ClaimKind, Namespace: o.Namespace, Name: o.Name}, o.ResourceVersion, true
	}
	return datasource.Source{}, "", false
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
