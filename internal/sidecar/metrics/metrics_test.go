package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

func TestObserveCountsCrossNamespaceAttemptsByClass(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cross := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "s", ExplicitNamespace: true}
	local := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "test", Name: "s"}
	link := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.LinkKind, Namespace: "test", Name: "l"}
	m.Observe("fast", cross, true, errors.New("no grant"))
	m.Observe("fast", cross, true, errors.New("no grant"))
	m.Observe("fast", cross, true, nil)
	m.Observe("slow", local, false, nil)
	m.Observe("fast", link, true, nil)
	m.Observe("slow", link, false, nil)
	m.Observe("slow", datasource.Source{}, false, nil)

	want := `
# HELP cross_namespace_persistentvolumeclaim_provision_failed_total Number of failed attempts to provision a volume from a data source in another namespace, grant refusals included, by storage class.
# TYPE cross_namespace_persistentvolumeclaim_provision_failed_total counter
cross_namespace_persistentvolumeclaim_provision_failed_total{storage_class="fast"} 2
# HELP cross_namespace_persistentvolumeclaim_provision_total Number of volumes provisioned successfully from a data source in another namespace, by storage class.
# TYPE cross_namespace_persistentvolumeclaim_provision_total counter
cross_namespace_persistentvolumeclaim_provision_total{storage_class="fast"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"cross_namespace_persistentvolumeclaim_provision_total", "cross_namespace_persistentvolumeclaim_provision_failed_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.bySourceTotal.WithLabelValues("VolumeSnapshot", "false")); got != 1 {
		t.Errorf("same-namespace snapshot successes = %v, want 1", got)
	}
	for _, cross := range []string{"true", "false"} {
		if got := testutil.ToFloat64(m.bySourceTotal.WithLabelValues("VolumeSnapshotLink", cross)); got != 1 {
			t.Errorf("link successes with cross_namespace=%s = %v, want 1", cross, got)
		}
	}
	if got := testutil.ToFloat64(m.bySourceTotal.WithLabelValues("None", "false")); got != 1 {
		t.Errorf("empty-volume successes = %v, want 1", got)
	}
}

func TestNilMetricsCountNothing(t *testing.T) {
	var m *Metrics
	m.Observe("c", datasource.Source{}, false, nil) // must not panic
}
