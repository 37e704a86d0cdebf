// Package metricstest reads metrics the way the tests of the state gauges
// compare them: one line per series, `name{label="value",...} value`, in
// the Prometheus text format, without the HELP and TYPE lines, sorted.
package metricstest

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Lines returns the series in text (the Prometheus text format) of the
// metrics named names, every metric when names is empty, sorted.
func Lines(text []byte, names ...string) []string {
	var out []string
	scanner := bufio.NewScanner(bytes.NewReader(text))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		if len(names) == 0 || slices.Contains(names, name) {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// Collect returns the series c collects of the metrics named names, every
// metric when names is empty, as Lines does. c is collected by a pedantic
// registry, which fails the test if c collects what it does not describe.
func Collect(t testing.TB, c prometheus.Collector, names ...string) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return Lines(text.Bytes(), names...)
}
