// Package fanout registers several event handlers with an informer as one.
//
// A shared informer hands each registered handler every notification
// through a channel and a goroutine of its own, and counts as synced only
// once it has handed over its whole initial list: at start-up, with 50,000
// claims and six handlers on the claim informer, it spent longer passing
// the list from goroutine to goroutine than indexing it
// (docs/benchmarks.md). Handlers that only queue work or update a map in
// memory can share one registration and one goroutine: each notification
// then costs one channel send and one wake-up, whatever their number.
package fanout

import "k8s.io/client-go/tools/cache"

// Handlers delivers each notification to every handler in turn, in their
// order. Each must return without waiting (on a lock held through an API
// call, say): one that waits delays the others' events. A handler that
// may wait keeps a registration of its own.
type Handlers []cache.ResourceEventHandler

var _ cache.ResourceEventHandler = Handlers(nil)

// OnAdd delivers an addition to every handler.
func (hs Handlers) OnAdd(obj any, isInInitialList bool) {
	for _, h := range hs {
		h.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate delivers an update to every handler.
func (hs Handlers) OnUpdate(oldObj, newObj any) {
	for _, h := range hs {
		h.OnUpdate(oldObj, newObj)
	}
}

// OnDelete delivers a deletion to every handler.
func (hs Handlers) OnDelete(obj any) {
	for _, h := range hs {
		h.OnDelete(obj)
	}
}
