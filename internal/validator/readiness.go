package validator

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
)

// apiState is whether one optional API can be used, and why not.
type apiState struct {
	name string
	err  error
}

// String is "<API>: available" or "<API>: <why not>".
func (s apiState) String() string {
	if s.err == nil {
		return s.name + ": available"
	}
	return s.name + ": " + s.err.Error()
}

// optionalCache is the cache of an optional API the validator reads.
type optionalCache interface {
	// APIStatus names the API and says in one word whether it can be
	// read (the availability gauges).
	stategauge.APIReporter
	// Err says why it cannot be read; nil once it can.
	Err() error
}

// optionalCaches are the caches of the optional APIs: VolumePopulators,
// ReferenceGrants and, with SnapshotLinks, VolumeSnapshotLinks.
func (c *Controller) optionalCaches() []optionalCache {
	caches := []optionalCache{c.populators, c.grants}
	if c.links != nil {
		caches = append(caches, c.links)
	}
	return caches
}

// optionalAPIs are the states of the optional APIs the validator reads.
func (c *Controller) optionalAPIs() []apiState {
	var states []apiState
	for _, cache := range c.optionalCaches() {
		for _, s := range cache.APIStatus() {
			states = append(states, apiState{s.Name, cache.Err()})
		}
	}
	return states
}

// describeOptionalAPIs is optionalAPIs as strings, for logs.
func (c *Controller) describeOptionalAPIs() []string {
	var out []string
	for _, s := range c.optionalAPIs() {
		out = append(out, s.String())
	}
	return out
}

// readiness is the /readyz handler. A replica is ready once its claim cache
// has synced and it validates claims, or, under leader election, as a
// standby (so rolling updates make progress). An optional API that cannot
// be used (CRD absent, list forbidden) does not make it unready: the
// validator runs without it, and the body says so, one line per API.
type readiness struct {
	controller *Controller
	// standby is set under leader election, before leading.
	standby atomic.Bool
}

func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	switch {
	case r.controller.synced.Load():
		var b strings.Builder
		b.WriteString("ok\n")
		for _, s := range r.controller.optionalAPIs() {
			fmt.Fprintln(&b, s)
		}
		_, _ = w.Write([]byte(b.String()))
	case r.standby.Load():
		_, _ = w.Write([]byte("ok: standby, not the leader\n"))
	default:
		http.Error(w, "claim cache not synced", http.StatusServiceUnavailable)
	}
}
