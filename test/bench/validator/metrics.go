package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/procfs"
)

// metrics are the metric families of one /metrics page.
type metrics map[string]*dto.MetricFamily

func parseMetrics(r io.Reader) (metrics, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	return parser.TextToMetricFamilies(r)
}

// scraper reads the validators' metrics uncompressed: the bench reads them
// every second, and compressing them would cost the validators more than
// a Prometheus scraping every 30 seconds does.
var scraper = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}

// scrape reads a validator's metrics.
func scrape(ctx context.Context, addr string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := scraper.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// sum adds up the samples of a metric whose label has value (every
// sample when label is ""); a histogram's sample is its count.
func (m metrics) sum(name, label, value string) float64 {
	var total float64
	for _, s := range m[name].GetMetric() {
		if label != "" && labelValue(s, label) != value {
			continue
		}
		switch {
		case s.Counter != nil:
			total += s.Counter.GetValue()
		case s.Gauge != nil:
			total += s.Gauge.GetValue()
		case s.Untyped != nil:
			total += s.Untyped.GetValue()
		case s.Histogram != nil:
			total += float64(s.Histogram.GetSampleCount())
		}
	}
	return total
}

func labelValue(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// validatorResources are what the validators read. Nothing else reads
// them while a validator runs (kube-controller-manager is stopped and the
// bench only patches claims), so the API server's counts of requests for
// them are the validator's.
var validatorResources = map[string]bool{"persistentvolumeclaims": true, "volumepopulators": true,
	"referencegrants": true, "volumesnapshotlinks": true}

// request is a kind of API request: its verb as the API server counts it
// (GET, LIST, POST, PATCH, ...) and its resource.
type request struct{ verb, resource string }

func (r request) String() string { return r.verb + " " + r.resource }

// requests are the API server's counts of reads (GET, LIST) of the
// validators' resources and of writes of events: only the validators make
// them (the bench patches claims and reads and deletes events). A watch is
// counted when it ends, so watches are counted open instead
// (apiCounts.openWatches).
type requests map[request]float64

// apiCounts is what the API server counted so far.
type apiCounts struct {
	requests    requests
	openWatches float64
}

// apiRequests reads the API server's request counts
// (apiserver_request_total) and open watches
// (apiserver_longrunning_requests).
func (b *bench) apiRequests() (apiCounts, error) {
	c := apiCounts{requests: requests{}}
	raw, err := b.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(b.ctx)
	if err != nil {
		return c, err
	}
	m, err := parseMetrics(bytes.NewReader(raw))
	if err != nil {
		return c, err
	}
	for _, s := range m["apiserver_request_total"].GetMetric() {
		r := request{verb: labelValue(s, "verb"), resource: labelValue(s, "resource")}
		if validatorResources[r.resource] && r.isRead() || r.resource == "events" && !r.isRead() {
			c.requests[r] += s.GetCounter().GetValue()
		}
	}
	for _, s := range m["apiserver_longrunning_requests"].GetMetric() {
		if validatorResources[labelValue(s, "resource")] && labelValue(s, "verb") == "WATCH" {
			c.openWatches += s.GetGauge().GetValue()
		}
	}
	return c, nil
}

func (r request) isRead() bool { return r.verb == "GET" || r.verb == "LIST" }

// since is what was requested since before.
func (c apiCounts) since(before apiCounts) requests {
	out := requests{}
	for k, v := range c.requests {
		if n := v - before.requests[k]; n > 0 {
			out[k] = n
		}
	}
	return out
}

// reads are the gets and lists of the validators' resources.
func (r requests) reads() float64 {
	var n float64
	for k, v := range r {
		if k.isRead() {
			n += v
		}
	}
	return n
}

// memory is what watchMemory saw, in MiB.
type memory struct{ peakRSS, peakAnon, endRSS, endAnon float64 }

// memoryWatch samples a process's resident memory until stopped.
type memoryWatch struct {
	proc procfs.Proc
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	m    memory
	err  error
}

// watchMemory samples proc's anonymous resident memory every 20ms, for
// its peak; the kernel keeps the peak of all resident memory (VmHWM).
func watchMemory(proc procfs.Proc) *memoryWatch {
	w := &memoryWatch{proc: proc, done: make(chan struct{})}
	w.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := w.sample(); err != nil {
				return
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	})
	return w
}

func (w *memoryWatch) sample() error {
	s, err := w.proc.NewStatus()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = err
		return err
	}
	w.m.peakAnon = max(w.m.peakAnon, mib(s.RssAnon))
	w.m.peakRSS, w.m.endRSS, w.m.endAnon = mib(s.VmHWM), mib(s.VmRSS), mib(s.RssAnon)
	return nil
}

// stop samples once more and returns the figures.
func (w *memoryWatch) stop() (memory, error) {
	close(w.done)
	w.wg.Wait()
	err := w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m, err
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// cpuSeconds is a process's user and system CPU time.
func cpuSeconds(proc procfs.Proc) (float64, error) {
	s, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return s.CPUTime(), nil
}
