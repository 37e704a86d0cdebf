package provisioner

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
)

// The gauges of waiting claims (csi_provisioner_waiting_claims and its
// _oldest_seconds), as a scrape at the world's clock shows them: a claim
// waits from its first refusal in a row until an attempt ends otherwise,
// or it is deleted, bound or handed to another provisioner.
func TestWaitingClaimGauges(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	unready, _ := snapshot("prod", notReady)
	const (
		grantMissing   = "provision test/data: NoChange, refused ReferenceGrantMissing"
		waitsForGrant  = `gauges: waiting_claims_oldest_seconds{reason="ReferenceGrantMissing"} %s, waiting_claims{reason="ReferenceGrantMissing"} 1`
		noClaimWaits   = "gauges: no claim waits"
		notReadyWaited = `gauges: waiting_claims_oldest_seconds{reason="SnapshotNotReady"} 60, waiting_claims{reason="SnapshotNotReady"} 1`
	)
	runFramework(t, []frameworkCase{
		{
			name:    "a refused claim waits under its reason from its first refusal until it is provisioned",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps: []step{provision("test/data"), gauges(), wait(30 * time.Second), provision("test/data"), gauges(),
				update(grant()), provision("test/data", created), gauges()},
			want: []string{grantMissing, strings.Replace(waitsForGrant, "%s", "0", 1),
				"provision test/data: left alone", strings.Replace(waitsForGrant, "%s", "30", 1),
				"> grant prod/bar created", protectProdSnapshot, createFromProd, provisioned, noClaimWaits},
		},
		{
			name:    "a claim whose refusal changes waits since its first refusal, under its newest reason",
			objects: objects(ours(restoring("prod", "snap")), unready, prodContent),
			steps:   []step{provision("test/data"), wait(time.Minute), update(grant()), provision("test/data"), gauges()},
			want: []string{grantMissing, "> grant prod/bar created", "provision test/data: NoChange, refused SnapshotNotReady",
				notReadyWaited},
		},
		{
			name:    "an attempt that fails otherwise ends the wait",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps:   []step{provision("test/data"), update(grant()), provision("test/data", invalid), gauges()},
			want: []string{grantMissing, "> grant prod/bar created", protectProdSnapshot, createFromProd + " → InvalidArgument",
				"provision test/data: Finished, CSI InvalidArgument", noClaimWaits},
		},
		{
			name:    "a deleted claim waits no more",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps:   []step{provision("test/data"), claimDeleted(ours(restoring("prod", "snap"))), gauges()},
			want:    []string{grantMissing, "> persistentvolumeclaims test/data deleted", noClaimWaits},
		},
		{
			name:    "a claim bound to a volume by hand waits no more",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps: []step{provision("test/data"), claimUpdated(ours(restoring("prod", "snap"), boundTo("pv-by-hand"))),
				gauges()},
			want: []string{grantMissing, "> persistentvolumeclaims test/data updated", noClaimWaits},
		},
		{
			name:    "a claim handed to another provisioner waits no more",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps: []step{provision("test/data"),
				claimUpdated(ours(restoring("prod", "snap"), annotated(annStorageProvisioner, "other.csi.example.com"))), gauges()},
			want: []string{grantMissing, "> persistentvolumeclaims test/data updated", noClaimWaits},
		},
	})
}

// gauges logs the waiting claims' gauges, named without their
// csi_provisioner_ prefix.
func gauges() step {
	return step{run: func(w *world) string {
		state := metrics.NewState(metrics.StateSources{Claims: w.prov, Now: func() time.Time { return w.clock }})
		lines := metricstest.Collect(w.t, state)
		if len(lines) == 0 {
			return "gauges: no claim waits"
		}
		return "gauges: " + strings.ReplaceAll(strings.Join(lines, ", "), "csi_provisioner_", "")
	}}
}

// claimUpdated and claimDeleted change the claim in the caches and tell
// the provisioner, as the sidecar's claim handler does.
func claimUpdated(claim *v1.PersistentVolumeClaim) step {
	return step{run: func(w *world) string {
		line := w.update(claim)
		w.prov.ClaimChanged(claim)
		return line
	}}
}

func claimDeleted(claim *v1.PersistentVolumeClaim) step {
	return step{run: func(w *world) string {
		line := w.remove(claim)
		w.prov.ForgetClaim(claim.UID)
		return line
	}}
}
