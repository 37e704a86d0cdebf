package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

type throughputRow struct {
	setup, kind        string
	n, done            int // claims created, and provisioned within the time limit
	seconds, perSecond float64
	cpu                []float64 // % of one core, per cpuProcesses
	sidecarCPU         float64   // the sidecar's CPU seconds over the run
}

func (r throughputRow) String() string {
	cpu := make([]string, len(r.cpu))
	for i, c := range r.cpu {
		cpu[i] = fmt.Sprintf("%.0f%%", c)
	}
	n := strconv.Itoa(r.n)
	if r.done < r.n {
		n += fmt.Sprintf(" (%d provisioned in the time limit)", r.done)
	}
	perPV := "-"
	if r.done > 0 {
		perPV = fmt.Sprintf("%.1f", 1000*r.sidecarCPU/float64(r.done))
	}
	return fmt.Sprintf("| %s | %s | %s | %.1f | %.1f | %s | %s |", r.setup, r.kind, n, r.seconds, r.perSecond, strings.Join(cpu, " / "), perPV)
}

type costRow struct {
	setup         string
	kind          restore
	claims        int
	reads, writes float64
	byMethod      []string
}

func (r costRow) String() string {
	n := float64(r.claims)
	return fmt.Sprintf("| %s | %s | %d | %.2f | %.2f | %s |", r.setup, r.kind, r.claims, r.reads/n, r.writes/n, strings.Join(sortedCopy(r.byMethod), ", "))
}

// latencyRow is one latency measurement of claims of a kind.
type latencyRow struct {
	setup  string
	what   string
	kind   restore
	sorted []time.Duration
}

func (r latencyRow) String() string {
	return fmt.Sprintf("| %s | %s | %s | %d | %s | %s | %s |", r.what, r.setup, r.kind, len(r.sorted), pct(r.sorted, 50), pct(r.sorted, 95), pct(r.sorted, 99))
}

// memoryRow is one sidecar started with objects of each kind in the
// cluster.
type memoryRow struct {
	sidecar                               string
	upstream                              bool // the upstream csi-provisioner
	objects                               int
	peakMiB, anonMiB, fileMiB, cpuSeconds float64
	// readySeconds runs from the process's start until its /readyz
	// answered 200 (NaN: it has none); firstPVSeconds until the PV of the
	// claim created before it started existed.
	readySeconds, firstPVSeconds float64
}

func (r memoryRow) String() string {
	return fmt.Sprintf("| %s | %d | %.1f | %.1f | %.1f | %.2f | %s | %.2f |", r.sidecar, r.objects, r.peakMiB, r.anonMiB, r.fileMiB, r.cpuSeconds,
		orDash(r.readySeconds, "%.2f"), r.firstPVSeconds)
}

// slopeRow is how much each sidecar's peak RSS grows between two sizes,
// in MiB per 10,000 objects of each kind.
type slopeRow struct {
	from, to       int
	ours, upstream float64
}

func (r slopeRow) String() string {
	ratio := math.NaN()
	if r.upstream > 0 {
		ratio = r.ours / r.upstream
	}
	return fmt.Sprintf("| %d -> %d | %.1f | %s | %s |", r.from, r.to, r.ours, orDash(r.upstream, "%.1f"), orDash(ratio, "%.2f"))
}

// memorySlopes are the slopes of peak RSS between consecutive sizes that
// both sidecars were measured at, and between the first and the last if
// there are more than two. Without a row of upstream's (-upstream=false)
// they are this sidecar's, upstream's NaN.
func memorySlopes(rows []memoryRow) []slopeRow {
	peaks := map[bool]map[int]float64{false: {}, true: {}}
	for _, r := range rows {
		peaks[r.upstream][r.objects] = r.peakMiB
	}
	withUpstream := len(peaks[true]) > 0
	var sizes []int
	for n := range peaks[false] {
		if _, ok := peaks[true][n]; ok || !withUpstream {
			sizes = append(sizes, n)
		}
	}
	slices.Sort(sizes)
	slope := func(upstream bool, from, to int) float64 {
		if upstream && !withUpstream {
			return math.NaN()
		}
		return (peaks[upstream][to] - peaks[upstream][from]) / float64(to-from) * 10000
	}
	between := func(from, to int) slopeRow {
		return slopeRow{from: from, to: to, ours: slope(false, from, to), upstream: slope(true, from, to)}
	}
	var out []slopeRow
	for i := 1; i < len(sizes); i++ {
		out = append(out, between(sizes[i-1], sizes[i]))
	}
	if len(sizes) > 2 {
		out = append(out, between(sizes[0], sizes[len(sizes)-1]))
	}
	return out
}

// heapProfile is this sidecar's heap at the end of its first run's window
// with objects of each kind, and its top 15 (empty if pprof failed).
type heapProfile struct {
	objects   int
	path, top string
}

// orDash formats v, or "-" if it is NaN.
func orDash(v float64, format string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func (r capacityRow) String() string {
	perMinute := func(n float64) float64 { return 60 * n / r.window }
	n := strconv.Itoa(r.claims)
	if r.provisioned < r.claims {
		n += fmt.Sprintf(" (%d provisioned)", r.provisioned)
	}
	calls := "-"
	if r.getCapacity >= 0 {
		calls = fmt.Sprintf("%.1f", perMinute(r.getCapacity))
	}
	writes := r.created + r.updated + r.deleted
	return fmt.Sprintf("| %s | %s | %.1f | %.1f | %.0f | %.1f (%d / %d / %d) | %s | %.2f | %s |", r.sidecar, n,
		r.provisionSeconds, float64(r.provisioned)/r.provisionSeconds, r.window, perMinute(float64(writes)), r.created, r.updated, r.deleted,
		calls, float64(r.requests.reads())/float64(r.claims), r.requests.byVerb())
}

// results are the figures of one run.
type results struct {
	throughput []throughputRow
	latency    []latencyRow
	cost       []costRow
	capacity   []capacityRow
	memory     []memoryRow
	// heapProfiles are this sidecar's, one per size of the memory
	// measurement.
	heapProfiles []heapProfile
	upstream     string // version of the upstream sidecar in the throughput runs
	// withoutUpstream: the upstream csi-provisioner was not run
	// (-upstream=false), so no row is its.
	withoutUpstream bool
}

func (r *results) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# csi-provisioner benchmark (%s, %d CPUs, %s)\n\n", runtime.GOARCH, runtime.NumCPU(), time.Now().Format("2006-01-02"))
	if r.withoutUpstream {
		b.WriteString("This sidecar alone: the upstream csi-provisioner was not measured (-upstream=false), so no row or column is its.\n\n")
	}
	if r.throughput != nil {
		b.WriteString("## Throughput: claims created at once until each has its PV\n\n")
		b.WriteString("| sidecar flags | claims | N | seconds | PVCs/s | CPU: sidecar / kube-apiserver / etcd / kube-controller-manager | sidecar CPU ms per PV |\n|---|---|---|---|---|---|---|\n")
		for _, row := range r.throughput {
			b.WriteString(row.String() + "\n")
		}
		b.WriteString("\n`default` = --kube-api-qps=5 --kube-api-burst=10 (the upstream defaults); `qps200` = --kube-api-qps=200 --kube-api-burst=400; both with --cross-namespace-snapshot")
		if slices.ContainsFunc(r.throughput, func(row throughputRow) bool { return row.setup == "upstream" }) {
			fmt.Fprintf(&b, "; `upstream` = the upstream csi-provisioner %s at its defaults (qps 5, burst 10), each run stopped after %s", r.upstream, upstreamLimit)
		}
		b.WriteString(".\n")
	}
	if r.latency != nil || r.cost != nil {
		r.writeLatencyAndCost(&b)
	}
	if r.capacity != nil {
		r.writeCapacity(&b)
	}
	if r.memory != nil {
		r.writeMemory(&b)
	}
	return b.String()
}

func (r *results) writeMemory(b *strings.Builder) {
	b.WriteString("\n## Memory, CPU and start-up time of a sidecar starting with many objects in the cluster\n\n")
	fmt.Fprintf(b, "| sidecar | PVCs, VolumeSnapshots, ReferenceGrants each | peak RSS (MiB) | of it anonymous, peak | file-backed (code), peak | CPU seconds in the first %s | seconds from start to /readyz 200 | seconds from start to the first PV |\n|---|---|---|---|---|---|---|---|\n", memoryWindow)
	for _, row := range r.memory {
		b.WriteString(row.String() + "\n")
	}
	fmt.Fprintf(b, "\nMedian of %d runs each (the run of median peak RSS; each start-up time its own median), one sidecar at a time and in turns, from a quiet control plane after each fill, each started with its binary out of the page cache. ", memoryRuns)
	fmt.Fprintf(b, "The sizes are filled in turn, each adding to the last, over %d namespaces; the claims belong to another driver. ", memoryNamespaces)
	fmt.Fprintf(b, "Before each run a claim of the sidecar's own driver (no data source) is created; the times run from the process's start to its /readyz answering 200 (upstream has none: -) and to that claim's PV, polled every %s. The claim and its PV are deleted after each run.\n", startPoll)
	if slopes := memorySlopes(r.memory); slopes != nil {
		ours, upstream := "this sidecar", "upstream"
		for _, row := range r.memory {
			if row.upstream {
				upstream = row.sidecar
			} else {
				ours = row.sidecar
			}
		}
		b.WriteString("\n### Peak RSS growth: MiB per 10,000 objects of each kind\n\n")
		fmt.Fprintf(b, "| objects of each kind | %s | %s | %s / upstream |\n|---|---|---|---|\n", ours, upstream, ours)
		for _, row := range slopes {
			b.WriteString(row.String() + "\n")
		}
		b.WriteString("\nThe slope of the median peak RSS between two sizes (and, with more than two, from the first to the last); the ratio is - where upstream's does not grow.\n")
	}
	if r.heapProfiles != nil {
		fmt.Fprintf(b, "\n### Heap of this sidecar at the end of its first run's %s window (go tool pprof -top -nodecount=15)\n", memoryWindow)
		for _, p := range r.heapProfiles {
			fmt.Fprintf(b, "\n%d objects of each kind: %s\n", p.objects, p.path)
			if p.top != "" {
				b.WriteString("\n```\n" + strings.TrimRight(p.top, "\n") + "\n```\n")
			}
		}
	}
}

func (r *results) writeLatencyAndCost(b *strings.Builder) {
	b.WriteString("\n## Latency\n\n| measurement | sidecar flags | claims | N | p50 | p95 | p99 |\n|---|---|---|---|---|---|---|\n")
	for _, row := range r.latency {
		b.WriteString(row.String() + "\n")
	}
	b.WriteString("\n## API cost per provisioned claim (client-go rest_client_requests_total)\n\n")
	b.WriteString("| sidecar flags | claims | N | reads/claim | writes/claim | by method (total) |\n|---|---|---|---|---|---|\n")
	for _, row := range r.cost {
		b.WriteString(row.String() + "\n")
	}
	b.WriteString("\n`cross-namespace` claims name the snapshot in spec.dataSourceRef.namespace; `link` claims name a VolumeSnapshotLink in their own namespace.\n")
}

func (r *results) writeCapacity(b *strings.Builder) {
	b.WriteString("\n## Capacity tracking: claims created at once, CSIStorageCapacity writes and API requests in a fixed window\n\n")
	b.WriteString("| sidecar | claims | seconds to the last PV | PVCs/s | window (s) | CSIStorageCapacity writes/min (created / updated / deleted) | GetCapacity calls/min | API reads/claim (get + list) | API requests in the window by verb |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.capacity {
		b.WriteString(row.String() + "\n")
	}
	fmt.Fprintf(b, "\nBoth sidecars with %s and NAMESPACE=%s, otherwise at their defaults (capacity poll every 1m, qps 5, burst 10; for capacity objects qps 1, burst 5), each with a driver of its own whose %d GiB of storage is in zone-a of %d zones (%d nodes, with their CSINodes); %d WaitForFirstConsumer classes, so %d objects. ",
		strings.Join(capacityArgs[1:], " "), localenv.CapacityNamespace, capacityBytes>>30, capacityZones(), len(capacityNodes), capacityClasses, capacityClasses*capacityZones())
	b.WriteString("The claims alternate between the classes and between zone-a's two nodes as their selected node. ")
	b.WriteString("The window starts at the first claim and lasts a fixed time (or until the last PV, if later); writes are the events of a watch on the driver's objects, API requests are counted by a proxy in front of each sidecar.\n")
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[i].Round(time.Millisecond).String()
}

func sorted(d []time.Duration) []time.Duration { slices.Sort(d); return d }

func sortedCopy(s []string) []string { c := slices.Clone(s); slices.Sort(c); return c }
