package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// latencyAndCost measures, for each kind of claim that crosses
// namespaces and with each of this sidecar's setups, the latency of claims
// created one at a time and of claims waiting for their grant (and, through
// a link, for their link); and, with the first setup, the API requests per
// claim.
func (b *bench) latencyAndCost(r *results, setups []*setup) error {
	var crossing []restore
	for _, kind := range b.restores {
		if kind.crossesNamespaces() {
			crossing = append(crossing, kind)
		}
	}
	ours := slices.DeleteFunc(slices.Clone(setups), func(s *setup) bool { return s.upstream })
	for _, s := range ours {
		if err := b.latencies(r, s, crossing); err != nil {
			return err
		}
	}
	if len(ours) == 0 {
		return nil
	}
	for _, kind := range crossing {
		c, err := b.apiCost(ours[0], kind, b.counts.cost)
		if err != nil {
			return err
		}
		r.cost = append(r.cost, c)
	}
	return nil
}

// latencies adds the setup's latency rows for the kinds of claim to r.
func (b *bench) latencies(r *results, s *setup, kinds []restore) error {
	measure := func(what string, kind restore, d []time.Duration, err error) error {
		if err == nil {
			row := latencyRow{setup: s.name, what: what, kind: kind, sorted: d}
			r.latency = append(r.latency, row)
			logf("%s", row)
		}
		return err
	}
	for _, kind := range kinds {
		d, err := b.latency(s, kind, b.counts.oneAtATime)
		if err := measure("PVC created -> PV created (one at a time)", kind, d, err); err != nil {
			return err
		}
	}
	for _, kind := range kinds {
		d, err := b.createdLater(s, kind, "grant", b.counts.later)
		if err := measure("grant created after the PVC -> PV created", kind, d, err); err != nil {
			return err
		}
	}
	if slices.Contains(kinds, viaLink) {
		d, err := b.createdLater(s, viaLink, "link", b.counts.later)
		if err := measure("link created after the grant and the PVC -> PV created", viaLink, d, err); err != nil {
			return err
		}
	}
	return nil
}

// latency creates n claims of a kind one after the other and measures
// each from its creation to its PV.
func (b *bench) latency(s *setup, kind restore, n int) ([]time.Duration, error) {
	ns := "bench-latency-" + s.name + "-" + kind.short()
	if err := b.namespace(ns); err != nil {
		return nil, err
	}
	if err := b.allow(s, kind, ns); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // let the grant and link reach the sidecar's caches
	var all []time.Duration
	for i := range n {
		created := map[string]time.Time{}
		if err := b.createClaimsTimed(ns, s.class, []string{fmt.Sprintf("claim-%03d", i)}, kind.source(s.srcNS),
			func(pv string, at time.Time) { created[pv] = at }); err != nil {
			return nil, err
		}
		l, err := b.waitPVs(created, time.Minute)
		if err != nil {
			return nil, err
		}
		all = append(all, l...)
	}
	return sorted(all), nil
}

// createdLater lets n claims of a kind wait, each in a namespace of its
// own, for the one object they lack, late ("grant" or, through a link,
// "link"). Then it creates those objects one after the other and measures
// from each to its claim's PV.
func (b *bench) createdLater(s *setup, kind restore, late string, n int) ([]time.Duration, error) {
	steps := map[string]func(*setup, restore, string) error{"grant": b.grant, "link": b.link}
	namespace := func(i int) string { return fmt.Sprintf("bench-%s-%s-later-%s-%02d", s.name, late, kind.short(), i) }
	pvOf := map[int]string{}
	for i := range n {
		ns := namespace(i)
		if err := b.namespace(ns); err != nil {
			return nil, err
		}
		for name, create := range steps {
			if name == late {
				continue
			}
			if err := create(s, kind, ns); err != nil {
				return nil, err
			}
		}
		if err := b.createClaimsTimed(ns, s.class, []string{"waiting"}, kind.source(s.srcNS),
			func(pv string, _ time.Time) { pvOf[i] = pv }); err != nil {
			return nil, err
		}
	}
	time.Sleep(5 * time.Second) // every claim has been refused at least once
	var all []time.Duration
	for i := range n {
		start := time.Now()
		if err := steps[late](s, kind, namespace(i)); err != nil {
			return nil, err
		}
		l, err := b.waitPVs(map[string]time.Time{pvOf[i]: start}, time.Minute)
		if err != nil {
			return nil, err
		}
		all = append(all, l...)
	}
	return sorted(all), nil
}

// apiCost counts the sidecar's API requests (client-go's
// rest_client_requests_total) during a run of n claims of a kind.
func (b *bench) apiCost(s *setup, kind restore, n int) (costRow, error) {
	before, err := requests(s.sidecar.HTTPAddr)
	if err != nil {
		return costRow{}, err
	}
	row, err := b.throughput(s, kind, n)
	if err != nil {
		return costRow{}, err
	}
	time.Sleep(2 * time.Second) // trailing events and finalizer removals
	after, err := requests(s.sidecar.HTTPAddr)
	if err != nil {
		return costRow{}, err
	}
	c := costRow{setup: s.name, kind: kind, claims: row.n}
	for method, v := range after {
		d := v - before[method]
		switch method {
		case "GET", "LIST", "WATCH":
			c.reads += d
		default:
			c.writes += d
		}
		c.byMethod = append(c.byMethod, fmt.Sprintf("%s %.0f", method, d))
	}
	return c, nil
}

// requests sums rest_client_requests_total by method.
func requests(addr string) (map[string]float64, error) {
	return scrape(addr, "rest_client_requests_total", "method")
}

// scrape sums the samples of a metric on a sidecar's /metrics by the value
// of one label.
func scrape(addr, metric, label string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // local endpoint
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		i := strings.Index(line, label+`="`)
		if i < 0 {
			continue
		}
		value := line[i+len(label)+2:]
		value = value[:strings.Index(value, `"`)]
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			out[value] += v
		}
	}
	return out, scanner.Err()
}

// saveProfile downloads a pprof profile (inspect with go tool pprof).
func saveProfile(url, path string) error {
	resp, err := http.Get(url) //nolint:noctx // local endpoint
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}
