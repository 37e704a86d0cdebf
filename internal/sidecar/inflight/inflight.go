// Package inflight remembers the CreateVolume calls whose outcome is not
// known yet: sent, and answered with a timeout or another error after which
// the driver may still be creating the volume.
//
// Once CreateVolume may have run, the source checks must not run again: a
// grant revoked or a snapshot deleted meanwhile would refuse the retry, the
// volume would never be reported, and it would leak. Instead the provisioner
// re-sends the same request (with the source it validated) until the driver
// answers for good, or, when the claim is gone, gets the volume back by name
// and deletes it. Source protection counts every attempt here as a use of
// its source, also after the claim was deleted.
//
// An attempt is held by one caller at a time, from Begin or Take until Park
// or End: the controller library's provisioning of the claim, or the
// sidecar's own settling of attempts whose claims the library no longer
// hands to the provisioner (see provisioner.Settle). Neither depends on
// the other's queue, and they never send the attempt's requests at once.
package inflight

import (
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Attempt is one CreateVolume whose outcome is unknown.
type Attempt struct {
	// Claim is the UID of the claim being provisioned; Namespace and Name
	// identify it for logs and to tell whether it still exists.
	Claim           types.UID
	Namespace, Name string
	// Source is the snapshot or claim the volume is filled from, the zero
	// Source for an empty volume.
	Source datasource.Source
	// Request is exactly what was sent; it is sent again unchanged.
	Request *csi.CreateVolumeRequest
	// Volume is the name of the PV the claim gets from this attempt.
	Volume string
}

// Registry holds the attempts in progress. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	attempts map[types.UID]*Attempt
	held     map[types.UID]bool
	// began is when each attempt began, for the in-flight gauges.
	began   map[types.UID]time.Time
	sources map[datasource.Source]int
	onEnd   func(datasource.Source)
	onPark  func(*Attempt)
	now     func() time.Time
}

// New returns an empty Registry.
func New() *Registry {
	return &Registry{attempts: map[types.UID]*Attempt{}, held: map[types.UID]bool{}, began: map[types.UID]time.Time{},
		sources: map[datasource.Source]int{}, now: time.Now}
}

// UseClock sets the clock that times when attempts begin (time.Now by
// default), e.g. a fake one in tests. Call it before the first Begin.
func (r *Registry) UseClock(now func() time.Time) { r.now = now }

// OnPark sets a function called with an attempt each time it is parked,
// e.g. to have it settled if its claim stops qualifying. Call it before
// the first Begin.
func (r *Registry) OnPark(f func(*Attempt)) { r.onPark = f }

// OnEnd sets a function called with an attempt's source when the last
// attempt using it ends, e.g. to let source protection release it. Call it
// before the first Begin.
func (r *Registry) OnEnd(f func(datasource.Source)) { r.onEnd = f }

// Begin records a, held by the caller until Park or End. It must be called
// before CreateVolume is sent, so the source stays protected from the
// moment the driver may use it.
func (r *Registry) Begin(a *Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.attempts[a.Claim]; ok {
		r.release(old)
	}
	r.attempts[a.Claim] = a
	r.held[a.Claim] = true
	r.began[a.Claim] = r.now()
	if src := a.Source.Object(); src.Type() != datasource.None {
		r.sources[src]++
	}
}

// Get returns the claim's attempt in progress, nil if there is none.
func (r *Registry) Get(claim types.UID) *Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts[claim]
}

// Take returns the claim's attempt held by the caller until Park or End,
// nil if there is none; busy is true (and the attempt nil) when another
// caller holds it.
func (r *Registry) Take(claim types.UID) (a *Attempt, busy bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.attempts[claim]
	switch {
	case !ok:
		return nil, false
	case r.held[claim]:
		return nil, true
	}
	r.held[claim] = true
	return a, false
}

// Park lets go of the claim's attempt: its outcome is still unknown, and
// the next Take resumes or undoes it.
func (r *Registry) Park(claim types.UID) {
	r.mu.Lock()
	a, ok := r.attempts[claim]
	delete(r.held, claim)
	r.mu.Unlock()
	if ok && r.onPark != nil {
		r.onPark(a)
	}
}

// Leave lets go of the claim's attempt taken without sending anything for
// it: nothing about it changed, and OnPark's function is not called.
func (r *Registry) Leave(claim types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, claim)
}

// End forgets the claim's attempt: the driver answered for good, or the
// volume it may have created was deleted.
func (r *Registry) End(claim types.UID) {
	r.mu.Lock()
	a, ok := r.attempts[claim]
	var released datasource.Source
	if ok {
		delete(r.attempts, claim)
		delete(r.held, claim)
		delete(r.began, claim)
		released = r.release(a)
	}
	r.mu.Unlock()
	if released.Type() != datasource.None && r.onEnd != nil {
		r.onEnd(released)
	}
}

// Uses reports whether an attempt in progress restores or clones src.
func (r *Registry) Uses(src datasource.Source) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sources[src.Object()] > 0
}

// EachAttempt calls visit with each attempt in progress: whether it is
// parked (its outcome unknown, nobody sending it now: the next Take
// resumes or undoes it) or held (its CreateVolume being sent, or its claim
// being checked), and when it began. It holds the registry's lock while
// visiting: visit must not call the registry.
func (r *Registry) EachAttempt(visit func(parked bool, began time.Time)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for claim := range r.attempts {
		visit(!r.held[claim], r.began[claim])
	}
}

// release drops a's use of its source and returns the source when no
// attempt uses it any more.
func (r *Registry) release(a *Attempt) datasource.Source {
	src := a.Source.Object()
	if src.Type() == datasource.None {
		return datasource.Source{}
	}
	if r.sources[src]--; r.sources[src] > 0 {
		return datasource.Source{}
	}
	delete(r.sources, src)
	return src
}
