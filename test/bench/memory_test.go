package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseObjects(t *testing.T) {
	tests := []struct {
		name, list string
		want       []int
		err        bool
	}{
		{"one count is one size", "5000", []int{5000}, false},
		{"increasing counts are filled in turn", "5000,20000,50000", []int{5000, 20000, 50000}, false},
		{"0 alone is no memory run", "0", nil, false},
		{"counts that do not increase cannot be filled in turn", "20000,5000", nil, true},
		{"a repeated count does not increase", "5000,5000", nil, true},
		{"0 among others is refused", "0,5000", nil, true},
		{"a word is refused", "many", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseObjects(tt.list)
			if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
				t.Errorf("parseObjects(%q) = %v, %v; want %v (error: %v)", tt.list, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestFillAddsExactlyWhatEachSizeLacks: filling size after size creates
// each object once, and the cluster then holds exactly each size.
func TestFillAddsExactlyWhatEachSizeLacks(t *testing.T) {
	for _, sizes := range [][]int{{5000}, {2000, 4000}, {5000, 20000, 50000}, {49, 101, 1234}} {
		created := map[[2]int]int{} // (namespace, index) -> times created
		from := 0
		for _, to := range sizes {
			for i := range memoryNamespaces {
				for j := perNamespace(from, i); j < perNamespace(to, i); j++ {
					created[[2]int{i, j}]++
				}
			}
			if len(created) != to {
				t.Errorf("sizes %v: %d objects after filling to %d", sizes, len(created), to)
			}
			from = to
		}
		for key, n := range created {
			if n != 1 {
				t.Errorf("sizes %v: object %v created %d times", sizes, key, n)
			}
		}
	}
}

func TestMemorySlopes(t *testing.T) {
	row := func(upstream bool, objects int, peak float64) memoryRow {
		return memoryRow{upstream: upstream, objects: objects, peakMiB: peak}
	}
	tests := []struct {
		name string
		rows []memoryRow
		want []slopeRow
	}{
		{"one size has no slope", []memoryRow{row(false, 5000, 60), row(true, 5000, 70)}, nil},
		{"two sizes have one slope, per 10,000 objects",
			[]memoryRow{row(false, 5000, 60), row(true, 5000, 70), row(false, 10000, 65), row(true, 10000, 80)},
			[]slopeRow{{from: 5000, to: 10000, ours: 10, upstream: 20}}},
		{"three sizes add the slope from the first to the last",
			[]memoryRow{row(false, 10000, 60), row(true, 10000, 70), row(false, 20000, 70), row(true, 20000, 90), row(false, 50000, 100), row(true, 50000, 150)},
			[]slopeRow{{from: 10000, to: 20000, ours: 10, upstream: 20}, {from: 20000, to: 50000, ours: 10, upstream: 20}, {from: 10000, to: 50000, ours: 10, upstream: 20}}},
		{"a size only one sidecar reached is left out",
			[]memoryRow{row(false, 5000, 60), row(true, 5000, 70), row(false, 10000, 65)}, nil},
		{"without upstream measured, this sidecar's slopes alone",
			[]memoryRow{row(false, 5000, 60), row(false, 10000, 65)},
			[]slopeRow{{from: 5000, to: 10000, ours: 10, upstream: math.NaN()}}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 || math.IsNaN(a) && math.IsNaN(b) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := memorySlopes(tt.rows)
			if !slices.EqualFunc(got, tt.want, func(a, b slopeRow) bool {
				return a.from == b.from && a.to == b.to && near(a.ours, b.ours) && near(a.upstream, b.upstream)
			}) {
				t.Errorf("memorySlopes() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMedianRunTakesEachStartTimeOnItsOwn(t *testing.T) {
	runs := []memoryRow{
		{peakMiB: 70, readySeconds: 1.0, firstPVSeconds: 3.0},
		{peakMiB: 60, readySeconds: 3.0, firstPVSeconds: 1.0},
		{peakMiB: 65, readySeconds: 2.0, firstPVSeconds: 9.0},
	}
	got := medianRun(runs)
	if got.peakMiB != 65 || got.readySeconds != 2 || got.firstPVSeconds != 3 {
		t.Errorf("medianRun() = %+v, want peak 65 (that run's), ready 2 and first PV 3 (the medians)", got)
	}
	upstream := medianRun([]memoryRow{{readySeconds: math.NaN()}, {readySeconds: math.NaN()}, {readySeconds: math.NaN()}})
	if !strings.Contains(upstream.String(), "| - |") {
		t.Errorf("a sidecar without /readyz shows %q, want a dash", upstream.String())
	}
}

func TestSlopeRowWithoutUpstreamShowsDashes(t *testing.T) {
	got := slopeRow{from: 20, to: 40, ours: 12.5, upstream: math.NaN()}.String()
	if want := "| 20 -> 40 | 12.5 | - | - |"; got != want {
		t.Errorf("slopeRow.String() = %q, want %q", got, want)
	}
}
