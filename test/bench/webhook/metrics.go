package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	requestsMetric = "snapshot_validation_webhook_admission_requests_total"
	latencyMetric  = "snapshot_validation_webhook_admission_duration_seconds"
)

// hookDelta is what the webhook's metrics counted for VolumeSnapshotContent
// creates: the requests, and the latency histogram's cumulative buckets
// (upper bound in seconds to count).
type hookDelta struct {
	requests float64
	count    float64
	buckets  map[float64]float64
}

func (d hookDelta) since(before hookDelta) hookDelta {
	out := hookDelta{requests: d.requests - before.requests, count: d.count - before.count, buckets: map[float64]float64{}}
	for le, n := range d.buckets {
		out.buckets[le] = n - before.buckets[le]
	}
	return out
}

// quantile is the upper bound of the histogram bucket holding the q-th
// quantile: the webhook's latency is at most this.
func (d hookDelta) quantile(q float64) float64 {
	if d.count == 0 {
		return 0
	}
	bounds := make([]float64, 0, len(d.buckets))
	for le := range d.buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	for _, le := range bounds {
		if d.buckets[le] >= q*d.count {
			return le
		}
	}
	return math.Inf(1)
}

// scrape reads the webhook's metrics endpoint.
func scrape(ctx context.Context, url string) (hookDelta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return hookDelta{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return hookDelta{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return hookDelta{}, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return hookDelta{}, fmt.Errorf("%s: %w", url, err)
	}
	d := hookDelta{buckets: map[float64]float64{}}
	if f := families[requestsMetric]; f != nil {
		for _, m := range f.GetMetric() {
			if contentCreate(m) {
				d.requests += m.GetCounter().GetValue()
			}
		}
	}
	if f := families[latencyMetric]; f != nil {
		for _, m := range f.GetMetric() {
			if !contentCreate(m) {
				continue
			}
			h := m.GetHistogram()
			d.count += float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				d.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
	}
	return d, nil
}

func contentCreate(m *dto.Metric) bool {
	var resource, operation string
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "resource":
			resource = l.GetValue()
		case "operation":
			operation = l.GetValue()
		}
	}
	return resource == "volumesnapshotcontents" && operation == "CREATE"
}
