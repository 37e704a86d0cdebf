package snapshotwebhook

// Adversarial review of issue 26 (state gauges): the DELETE guard's
// held-snapshot gauges and what a scrape costs.

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// BenchmarkReview26WebhookScrape measures one scrape of the webhook's state
// gauges with n pending claims restoring from n snapshots of another
// namespace (granted), as eachHeld evaluates the guard for each: the
// admission server's process pays it at every scrape.
func BenchmarkReview26WebhookScrape(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t := &testing.T{}
			claims := make([]*v1.PersistentVolumeClaim, 0, n)
			for i := range n {
				c := restoring("prod", fmt.Sprintf("restore-%d", i), datasource.SnapshotKind, fmt.Sprintf("snap-%d", i))
				c.UID = types.UID(fmt.Sprintf("uid-%d", i))
				c.CreationTimestamp = metav1.NewTime(now.Add(-time.Duration(i) * time.Second))
				claims = append(claims, c)
			}
			g := guardOf(t, granted, nil, true, claims)
			c := newStateCollector(stateSources{now: func() time.Time { return now }, guard: g})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if got := metricstest.Collect(b, c); len(got) != 2 {
					b.Fatalf("scrape: %q", got)
				}
			}
		})
	}
}
