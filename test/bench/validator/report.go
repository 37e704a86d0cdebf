package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// medians returns each contender's median run by peak RSS.
func medians(runs [][]result) []result {
	var out []result
	for _, rs := range runs {
		rs = slices.SortedFunc(slices.Values(rs), func(a, b result) int { return cmp.Compare(a.peakRSS, b.peakRSS) })
		out = append(out, rs[len(rs)/2])
	}
	return out
}

// report is the markdown table of the contenders' median runs: ours, and
// upstream's with the ratio of the two when it was measured.
func report(f *fixture, who []contender, rs []result, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### volume-data-source-validator with %d claims and %d ReferenceGrants\n\n", len(f.claims), f.grants)
	fmt.Fprintf(&b, "Claims, all Pending, over %d namespaces, by data source: %s. Median run of %d by peak RSS.\n\n",
		f.namespaces, joinCounts(f.kinds), runs)
	ours, theirs := rs[0], result{}
	if len(rs) == 1 {
		b.WriteString("This validator alone: the upstream validator was not measured (-upstream=false).\n\n")
		fmt.Fprintf(&b, "| | %s |\n|---|---:|\n", who[0].name)
	} else {
		theirs = rs[1]
		fmt.Fprintf(&b, "| | %s | %s | this ÷ upstream |\n|---|---:|---:|---:|\n", who[0].name, who[1].name)
	}
	// line writes a row: ours, then upstream's and the ratio if measured.
	line := func(name, a, z, ratio string) {
		if len(rs) == 1 {
			fmt.Fprintf(&b, "| %s | %s |\n", name, a)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, a, z, ratio)
		}
	}
	for _, row := range []struct {
		name     string
		of       func(result) float64
		decimals int
	}{
		{"peak RSS (VmHWM), MiB", func(r result) float64 { return r.peakRSS }, 1},
		{"peak anonymous RSS (RssAnon), MiB", func(r result) float64 { return r.peakAnon }, 1},
		{"RSS at the end (VmRSS), MiB", func(r result) float64 { return r.endRSS }, 1},
		{"anonymous RSS at the end, MiB", func(r result) float64 { return r.endAnon }, 1},
		{"file-backed RSS (code) at the end, MiB", func(r result) float64 { return r.endRSS - r.endAnon }, 1},
		{"seconds until every claim is decided", func(r result) float64 { return r.syncSeconds }, 1},
		{"seconds until its events are in the API", func(r result) float64 { return r.toldSeconds }, 1},
		{"CPU seconds until then", func(r result) float64 { return r.syncCPU }, 2},
		{"CPU seconds for the update of every claim", func(r result) float64 { return r.updateCPU }, 2},
	} {
		a, z := row.of(ours), row.of(theirs)
		ratio := "–"
		if z > 0 {
			ratio = fmt.Sprintf("%.2f×", a/z)
		}
		line(row.name, fmt.Sprintf("%.*f", row.decimals, a), fmt.Sprintf("%.*f", row.decimals, z), ratio)
	}
	claims := float64(len(f.claims))
	for _, row := range []struct {
		name string
		of   func(result) string
	}{
		{"API requests until its events are in the API", func(r result) string { return r.syncRequests.String() }},
		{"watches open at the end", func(r result) string { return fmt.Sprintf("%.0f", r.openWatches) }},
		{"API reads during the update of every claim (per claim)", func(r result) string {
			return fmt.Sprintf("%.0f (%.3f)", r.updateRequests.reads(), r.updateRequests.reads()/claims)
		}},
		{"API requests during the update of every claim", func(r result) string { return r.updateRequests.String() }},
		{"claims told, by reason", func(r result) string {
			return fmt.Sprintf("%d: %s", r.afterSync.claims, joinCounts(r.afterSync.reasons))
		}},
		{"events per claim told, once synced", func(r result) string { return perClaim(r.afterSync) }},
		{"events per claim told, after the update of every claim (same state)", func(r result) string { return perClaim(r.afterUpdate) }},
	} {
		line(row.name, row.of(ours), row.of(theirs), "")
	}
	return b.String()
}

func perClaim(t told) string {
	if t.claims == 0 {
		return "no claim told"
	}
	return fmt.Sprintf("%.2f (%d in all)", float64(t.events)/float64(t.claims), t.events)
}

// String lists the requests by kind, "LIST persistentvolumeclaims 1, ...".
func (r requests) String() string {
	counts := map[string]int{}
	for k, v := range r {
		counts[k.String()] = int(v)
	}
	return joinCounts(counts)
}

// joinCounts lists counts sorted by key, "a 1, b 2", or says "none".
func joinCounts(counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(parts)
	return cmp.Or(strings.Join(parts, ", "), "none")
}
