package csi

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/metrics"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/test/csitest"
)

func TestWithMigratedLabelsTheCallsMetrics(t *testing.T) {
	tests := []struct {
		name string
		mark func(context.Context) context.Context
		want string
	}{
		{name: "a call for a migrated volume is labeled migrated", mark: func(ctx context.Context) context.Context { return WithMigrated(ctx, true) },
			want: `migrated="true"`},
		{name: "a call for a CSI volume is labeled not migrated", mark: func(ctx context.Context) context.Context { return WithMigrated(ctx, false) },
			want: `migrated="false"`},
		{name: "an unmarked call counts as not migrated", mark: func(ctx context.Context) context.Context { return ctx },
			want: `migrated="false"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			driver := csitest.Start(t)
			mm := metrics.NewCSIMetricsManagerWithOptions(csitest.DefaultName, metrics.WithProcessStartTime(false), metrics.WithMigration())
			client, err := Connect(ctx, Config{Address: driver.Address(), Timeout: testTimeout, MetricsManager: mm})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			t.Cleanup(func() { _ = client.Close() })
			if err := client.DeleteVolume(tt.mark(ctx), &csi.DeleteVolumeRequest{VolumeId: "vol-1"}); err != nil {
				t.Fatalf("DeleteVolume: %v", err)
			}
			families, err := mm.GetRegistry().Gather()
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range families {
				for _, m := range f.GetMetric() {
					var labels []string
					for _, l := range m.GetLabel() {
						labels = append(labels, l.GetName()+"="+strconv.Quote(l.GetValue()))
					}
					lines = append(lines, f.GetName()+"{"+strings.Join(labels, ",")+"}")
				}
			}
			out := strings.Join(lines, "\n")
			if !strings.Contains(out, "DeleteVolume") || !strings.Contains(out, tt.want) {
				t.Errorf("metrics of the DeleteVolume call do not carry %s:\n%s", tt.want, out)
			}
		})
	}
}
