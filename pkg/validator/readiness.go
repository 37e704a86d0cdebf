package validator

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
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

// optionalAPIs are the states of the optional APIs the validator reads.
func (c *Controller) optionalAPIs() []apiState {
	states := []apiState{{popv1beta1.Kind, c.populators.Err()}, {"ReferenceGrant", c.grants.Err()}}
	if c.links != nil {
		states = append(states, apiState{snapv1alpha1.Kind, c.links.Err()})
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
