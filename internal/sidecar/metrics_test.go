package sidecar

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	csimetrics "github.com/kubernetes-csi/csi-lib-utils/metrics"

	"github.com/xns-csi/csi-provisioner/internal/shared/leader/leadertest"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// withStateGauges registers the state gauges with the sidecar's registry,
// as Run does.
func withStateGauges() envOption {
	return func(c *envConfig) {
		c.configure = append(c.configure, func(e *env, _ *Options, bc *buildConfig) { bc.registerer = e.registry })
	}
}

// TestMetricsEndpointShowsAClaimWaitingForAGrant scrapes the sidecar's
// /metrics over HTTP, served as Run serves it: a claim waiting for its
// grant is there under its reason, next to the other state gauges and the
// leader-election status, and leaves once the grant arrives.
func TestMetricsEndpointShowsAClaimWaitingForAGrant(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"), withStateGauges())
	opts := NewOptions()
	csiMetrics := csimetrics.NewCSIMetricsManagerWithOptions("",
		csimetrics.WithSubsystem(csimetrics.SubsystemSidecar), csimetrics.WithProcessStartTime(false))
	server := httptest.NewServer(newMux(opts, csiMetrics, e.registry, &readiness{}))
	defer server.Close()
	leadertest.Elect(t, driverName) // as leader.Run does under --leader-election
	scrape := func() []string { return metricstest.Lines(get(t, server.URL+opts.MetricsPath)) }

	e.createSnapshot("prod", "foo-backup", true)
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	const waiting = `csi_provisioner_waiting_claims{reason="ReferenceGrantMissing"} 1`
	e.waitFor("/metrics to show the claim waiting for a grant", func() bool { return slices.Contains(scrape(), waiting) })
	lines := scrape()
	for _, want := range []string{
		`csi_provisioner_optional_api_available{api="ReferenceGrant"} 1`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="available"} 1`,
		`csi_provisioner_inflight_create_volumes{state="parked"} 0`,
		`csi_provisioner_protected_sources{kind="VolumeSnapshot"} 0`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="PersistentVolumeClaim"} 0`,
		`leader_election_master_status{name=""} 0`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, `csi_provisioner_waiting_claims_oldest_seconds{reason="ReferenceGrantMissing"} `)
	}) {
		t.Error("/metrics has no age of the claim waiting for a grant")
	}

	e.createGrant("prod", "bar", "test", "foo-backup")
	e.waitForPV(claim)
	e.waitFor("/metrics to show no claim waiting", func() bool {
		return !slices.ContainsFunc(scrape(), func(l string) bool { return strings.HasPrefix(l, "csi_provisioner_waiting_claims") })
	})
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}
