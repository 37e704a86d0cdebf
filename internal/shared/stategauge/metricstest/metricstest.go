// Package metricstest reads metrics the way the tests of the state gauges
// compare them: one line per series, `name{label="value",...} value`, in
// the Prometheus text format, without the HELP and TYPE lines, sorted; and
// lints them with promlint.
package metricstest

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
	return Gather(t, reg, names...)
}

// Gather returns the series g gathers of the metrics named names, every
// metric when names is empty, as Lines does.
func Gather(t testing.TB, g prometheus.Gatherer, names ...string) []string {
	t.Helper()
	families, err := g.Gather()
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

// Expect fails the test unless got holds exactly the series want, in any
// order.
func Expect(t testing.TB, got []string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("series:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Lint fails the test for each problem promlint, the linter of
// client_golang, finds in what c collects.
func Lint(t testing.TB, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
