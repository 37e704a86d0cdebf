package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// latency creates n cross-namespace claims one after the other and
// measures each from its creation to its PV.
func (b *bench) latency(s *setup, n int) ([]time.Duration, error) {
	ns := "bench-latency"
	if err := b.namespace(ns); err != nil {
		return nil, err
	}
	if err := b.grant(s.srcNS, "allow-"+ns, ns); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // let the grant reach the sidecar's cache
	var all []time.Duration
	for i := range n {
		created := map[string]time.Time{}
		if err := b.createClaimsTimed(ns, s.class, []string{fmt.Sprintf("claim-%03d", i)}, snapshotRef(s.srcNS, "snap"),
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

// grantLatency lets n claims wait for a grant each, then creates the grants
// one after the other and measures from each grant to its claim's PV.
func (b *bench) grantLatency(s *setup, n int) ([]time.Duration, error) {
	pvOf := map[int]string{}
	for i := range n {
		ns := fmt.Sprintf("bench-grant-%02d", i)
		if err := b.namespace(ns); err != nil {
			return nil, err
		}
		if err := b.createClaimsTimed(ns, s.class, []string{"waiting"}, snapshotRef(s.srcNS, "snap"),
			func(pv string, _ time.Time) { pvOf[i] = pv }); err != nil {
			return nil, err
		}
	}
	time.Sleep(5 * time.Second) // every claim has been refused at least once
	var all []time.Duration
	for i := range n {
		start := time.Now()
		if err := b.grant(s.srcNS, fmt.Sprintf("late-%02d", i), fmt.Sprintf("bench-grant-%02d", i)); err != nil {
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
// rest_client_requests_total) during a run of n cross-namespace claims.
func (b *bench) apiCost(s *setup, n int) (costRow, error) {
	before, err := requests(s.sidecar.HTTPAddr)
	if err != nil {
		return costRow{}, err
	}
	row, err := b.throughput(s, true, n)
	if err != nil {
		return costRow{}, err
	}
	time.Sleep(2 * time.Second) // trailing events and finalizer removals
	after, err := requests(s.sidecar.HTTPAddr)
	if err != nil {
		return costRow{}, err
	}
	c := costRow{claims: row.n}
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
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		i := strings.Index(line, `method="`)
		if i < 0 {
			continue
		}
		method := line[i+8:]
		method = method[:strings.Index(method, `"`)]
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			out[method] += v
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
