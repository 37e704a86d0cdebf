package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
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
	families, err := parse(url, resp.Body)
	if err != nil {
		return hookDelta{}, err
	}
	d := histogramOf(families[latencyMetric], contentCreate)
	if f := families[requestsMetric]; f != nil {
		for _, m := range f.GetMetric() {
			if contentCreate(m) {
				d.requests += m.GetCounter().GetValue()
			}
		}
	}
	return d, nil
}

// apiServerLatencyMetric is kube-apiserver's own timing of its calls to
// admission webhooks: what a webhook adds to a request, network and TLS
// included, measured where the request is served.
const apiServerLatencyMetric = "apiserver_admission_webhook_admission_duration_seconds"

// scrapeAPIServer reads kube-apiserver's timing of its CREATE calls to the
// webhook hook; requests is the number of calls.
func scrapeAPIServer(ctx context.Context, kube kubernetes.Interface, hook string) (hookDelta, error) {
	body, err := kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return hookDelta{}, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	families, err := parse("kube-apiserver /metrics", bytes.NewReader(body))
	if err != nil {
		return hookDelta{}, err
	}
	d := histogramOf(families[apiServerLatencyMetric], func(m *dto.Metric) bool {
		return label(m, "name") == hook && label(m, "operation") == "CREATE" && label(m, "type") == "validating"
	})
	d.requests = d.count
	return d, nil
}

func parse(source string, r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return families, nil
}

// histogramOf sums the histograms of f's metrics that match.
func histogramOf(f *dto.MetricFamily, match func(*dto.Metric) bool) hookDelta {
	d := hookDelta{buckets: map[float64]float64{}}
	for _, m := range f.GetMetric() {
		if !match(m) {
			continue
		}
		h := m.GetHistogram()
		d.count += float64(h.GetSampleCount())
		for _, b := range h.GetBucket() {
			d.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	return d
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func contentCreate(m *dto.Metric) bool {
	return label(m, "resource") == "volumesnapshotcontents" && label(m, "operation") == "CREATE"
}
