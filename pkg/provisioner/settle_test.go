package provisioner

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
)

// Scenarios of the sidecar settling parked CreateVolume attempts
// (Settle, abandon). Each case is played with the framework's world, and
// must end with no DeleteVolume of a volume some PV names or is about to
// name: deleting it destroys that claim's data, and its PV then names a
// volume that no longer exists.

// settle runs provisioner.Settle for the claim with uid, as the sidecar's
// settler does when the claim changes or goes, or its backoff comes round.
func settle(uid string, answers ...answer) step {
	return step{answers: answers, run: func(w *world) string {
		settled, err := w.prov.Settle(w.ctx, apitypes.UID(uid))
		w.flushRefresh()
		if err != nil {
			return fmt.Sprintf("settle %s: settled=%v, %s", uid, settled, describeErr(err))
		}
		return fmt.Sprintf("settle %s: settled=%v", uid, settled)
	}}
}

// savedOnly saves obj in the API server, which the caches have not shown
// yet (their watch is behind).
func savedOnly(obj runtime.Object) step {
	return step{run: func(w *world) string {
		must(w.t, w.kube.Tracker().Add(obj))
		m := mustMeta(w.t, obj)
		return "> " + gvrOf(obj).Resource + " " + key(m.GetNamespace(), m.GetName()) + " saved, not in the cache yet"
	}}
}

// boundTo is the claim as the PV controller leaves it once bound to pv.
func boundTo(pv string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName, c.Status.Phase = pv, v1.ClaimBound }
}

// noDeleteVolume plays the cases and fails any whose transcript has a
// DeleteVolume: the volume that call deletes is one a PV names (or is
// being saved to name).
func noDeleteVolume(t *testing.T, cases []frameworkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc)
			for _, s := range tc.steps {
				w.answers = s.answers
				if line := s.run(w); line != "" {
					w.log("%s", line)
				}
				w.drainEvents()
			}
			for _, line := range w.transcript {
				if strings.HasPrefix(line, "DeleteVolume ") {
					t.Errorf("%q deletes a volume a PV names or is about to name; transcript:\n  %s", line, strings.Join(w.transcript, "\n  "))
					return
				}
			}
		})
	}
}

// TestSettleKeepsTheVolumeOfTheClaimsOwnPV: a claim's first
// CreateVolume succeeds and the library saves its PV, but the PV cache has
// not shown the PV yet, so the library hands the claim to Provision again
// on its next event (as upstream; CreateVolume is idempotent by name). That
// CreateVolume's answer is lost: the attempt is parked. The PV controller
// binds the claim to its PV (pvc-<uid>, saved in the API server), and the
// claim cache shows that before the PV cache shows the PV (two watches,
// not in step). The settler then abandons the attempt
// ("names volume pvc-<uid>"), gets the volume back by name and, finding no
// PV naming it in the stale PV cache, deletes it: the volume of a bound
// claim is gone and its PV names nothing. A claim naming the attempt's own
// PV got the attempt's volume; nothing is to be undone.
func TestSettleKeepsTheVolumeOfTheClaimsOwnPV(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	claim := ours(restoring("prod", "snap"))
	bound := ours(restoring("prod", "snap"), boundTo(pvName))
	noDeleteVolume(t, []frameworkCase{
		{
			name:    "the PV cache is behind the claim cache",
			objects: objects(claim, prodSnap, prodContent, grant()),
			steps: []step{
				provision("test/data", created),
				provisionUnfiltered("test/data", timedOut),
				savedOnly(boundVolume()),
				update(bound),
				settle(claimUID, created, deleted),
			},
		},
		{
			// The same story with the PV in the cache; only the cache's
			// lag differs.
			name:    "the PV cache shows the PV",
			objects: objects(claim, prodSnap, prodContent, grant()),
			steps: []step{
				provision("test/data", created),
				provisionUnfiltered("test/data", timedOut),
				savedOnly(boundVolume()),
				update(boundVolume()),
				update(bound),
				settle(claimUID, created, deleted),
			},
		},
	})
}

// boundVolume is the PV the library saved for test/data, bound to it.
func boundVolume() *v1.PersistentVolume {
	pv := provisionedVolume()
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "test", Name: "data", UID: claimUID}
	pv.Status.Phase = v1.VolumeBound
	return pv
}
