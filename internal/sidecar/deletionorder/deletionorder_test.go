package deletionorder

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// clock is a fake clock that advances one millisecond per reading.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Millisecond); return c.t }

func object(uid string, deleting bool) *metav1.ObjectMeta {
	o := &metav1.ObjectMeta{UID: types.UID(uid)}
	if deleting {
		ts := metav1.Now()
		o.DeletionTimestamp = &ts
	}
	return o
}

func TestCreatedAfterDeletion(t *testing.T) {
	tests := map[string]struct {
		// events are sent to the claim handler, or to handler's instead
		// when set, and to the source handler; the object asked about is
		// "claim" (a claim, or a link with handler LinkHandler).
		events  func(claims, sources cache.ResourceEventHandler)
		handler func(*Log) cache.ResourceEventHandler
		// listing: an initial list is still being delivered.
		listing   bool
		wantAfter bool
		wantKnown bool
	}{
		"a claim seen before the deletion arrived was created first": {
			events: func(claims, sources cache.ResourceEventHandler) {
				claims.OnAdd(object("claim", false), false)
				sources.OnUpdate(object("snap", false), object("snap", true))
			},
			wantKnown: true,
		},
		"a claim seen after the deletion arrived was created after it": {
			events: func(claims, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
				claims.OnAdd(object("claim", false), false)
			},
			wantAfter: true, wantKnown: true,
		},
		"a claim not seen yet when asked is seen now, after the deletion": {
			events: func(_, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
			},
			wantAfter: true, wantKnown: true,
		},
		"a link not seen yet while a link list is being delivered cannot be ordered: it may be listed": {
			events: func(_, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
			},
			handler: (*Log).LinkHandler, listing: true,
		},
		"a deletion already there when the source was first seen cannot be ordered": {
			events: func(claims, sources cache.ResourceEventHandler) {
				sources.OnAdd(object("snap", true), true)
				claims.OnAdd(object("claim", false), true)
			},
		},
		"an update of a source already being deleted is not its deletion request": {
			events: func(claims, sources cache.ResourceEventHandler) {
				claims.OnAdd(object("claim", false), false)
				sources.OnUpdate(object("snap", true), object("snap", true))
			},
		},
		"a deleted source is forgotten": {
			events: func(claims, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
				sources.OnDelete(cache.DeletedFinalStateUnknown{Obj: object("snap", true)})
				claims.OnAdd(object("claim", false), false)
			},
		},
		"the deletion request of a cloned claim is recorded by the claim handler": {
			events: func(claims, _ cache.ResourceEventHandler) {
				claims.OnUpdate(object("snap", false), object("snap", true))
				claims.OnAdd(object("claim", false), false)
			},
			wantAfter: true, wantKnown: true,
		},
		"a link seen before the deletion arrived was created first": {
			events: func(links, sources cache.ResourceEventHandler) {
				links.OnAdd(object("claim", false), false)
				sources.OnUpdate(object("snap", false), object("snap", true))
			},
			handler: (*Log).LinkHandler, wantKnown: true,
		},
		"a link seen after the deletion arrived was created after it": {
			events: func(links, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
				links.OnAdd(object("claim", false), false)
			},
			handler: (*Log).LinkHandler, wantAfter: true, wantKnown: true,
		},
		"a claim listed after the deletion arrived cannot be ordered: it may be older": {
			events: func(claims, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
				claims.OnAdd(object("claim", false), true)
			},
		},
		"a link listed by a link cache that synced after the deletion arrived cannot be ordered": {
			events: func(links, sources cache.ResourceEventHandler) {
				sources.OnUpdate(object("snap", false), object("snap", true))
				links.OnAdd(object("claim", false), true)
			},
			handler: (*Log).LinkHandler,
		},
		"a link deleted and re-created after the deletion arrived is seen anew": {
			events: func(links, sources cache.ResourceEventHandler) {
				links.OnAdd(object("claim", false), false)
				sources.OnUpdate(object("snap", false), object("snap", true))
				links.OnDelete(cache.DeletedFinalStateUnknown{Obj: object("claim", false)})
				links.OnAdd(object("claim", false), false)
			},
			handler: (*Log).LinkHandler, wantAfter: true, wantKnown: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
			l := New(c.now)
			if tc.listing {
				l.Delivering(object("claim", false), func() bool { return false })
			}
			handler := l.ClaimHandler()
			if tc.handler != nil {
				handler = tc.handler(l)
			}
			tc.events(handler, l.SourceHandler())
			after, known := l.CreatedAfterDeletion(object("claim", false), object("snap", true))
			if after != tc.wantAfter || known != tc.wantKnown {
				t.Errorf("CreatedAfterDeletion = (%v, %v), want (%v, %v)", after, known, tc.wantAfter, tc.wantKnown)
			}
		})
	}
}
