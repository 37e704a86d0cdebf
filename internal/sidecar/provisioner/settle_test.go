package provisioner

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
)

// Scenarios of the sidecar settling parked CreateVolume attempts
// (Settle, abandon), played with the framework's world. None may delete a
// volume a PV names: that destroys the PV's data.

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

// TestSettleKeepsTheVolumeOfTheClaimsOwnPV: a claim's first
// CreateVolume succeeded in a sidecar that then stopped; the library saved
// its PV, but the PV cache of the sidecar that took over has not shown the
// PV yet when the claim is handed to Provision. That CreateVolume's answer
// is lost: the attempt is parked. The PV controller
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
	runFramework(t, []frameworkCase{
		{
			name:    "the PV cache is behind the claim cache",
			objects: objects(claim, prodSnap, prodContent, grant()),
			steps: []step{
				provisionUnfiltered("test/data", timedOut),
				savedOnly(boundVolume()),
				update(bound),
				settle(claimUID, created),
			},
			want: ownPVKept("> persistentvolumes " + pvName + " saved, not in the cache yet"),
		},
		{
			// The same story with the PV in the cache; only the cache's
			// lag differs.
			name:    "the PV cache shows the PV",
			objects: objects(claim, prodSnap, prodContent, grant()),
			steps: []step{
				provisionUnfiltered("test/data", timedOut),
				savedOnly(boundVolume()),
				update(boundVolume()),
				update(bound),
				settle(claimUID, created),
			},
			want: ownPVKept("> persistentvolumes "+pvName+" saved, not in the cache yet", "> persistentvolumes "+pvName+" updated"),
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

// ownPVKept is the transcript of both cases: a CreateVolume's answer is
// lost, the PV shows as saved, the claim is
// bound to it, and settling gets the volume back by name and ends the
// attempt without a DeleteVolume.
func ownPVKept(saved ...string) []string {
	want := []string{protectProdSnapshot, createFromProd + " → DeadlineExceeded", "provision test/data: Background, CSI DeadlineExceeded"}
	want = append(want, saved...)
	return append(want, "> persistentvolumeclaims test/data updated", createFromProd, "settle "+claimUID+": settled=true")
}

// TestSettleKeepsAVolumeWhosePVIsBeingSaved: with a short
// --volume-name-uuid-length, claims test/a and test/b share the CSI name
// pvc-aaaa. a's CreateVolume answer is lost; b's CreateVolume returns the
// volume and the library saves b's PV in the background. a is deleted, and
// the settler gets the volume back by name to delete it: the volume is b's,
// and its PV, not in the cache yet, is on its way to the API server.
// Deleting it would leave b bound to a volume that is gone.
func TestSettleKeepsAVolumeWhosePVIsBeingSaved(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	a, b := ours(named("a", "aaaa1111"), restoring("prod", "snap")), ours(named("b", "aaaa2222"), restoring("prod", "snap"))
	const create = "CreateVolume pvc-aaaa from snapshot handle-prod"
	runFramework(t, []frameworkCase{{
		name:    "short CSI names",
		options: func(o *Options) { o.VolumeNameUUIDLength = 4 },
		objects: objects(a, b, prodSnap, prodContent, grant()),
		steps: []step{
			provision("test/a", timedOut),
			provision("test/b", created),
			remove(a),
			settle("aaaa1111", created),
		},
		want: []string{protectProdSnapshot, create + " → DeadlineExceeded", "provision test/a: Background, CSI DeadlineExceeded",
			create, "provision test/b: Finished, PV pvc-aaaa2222 of id-pvc-aaaa",
			"> persistentvolumeclaims test/a deleted",
			create, "settle aaaa1111: settled=true"},
	}})
}
