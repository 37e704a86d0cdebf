package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/test/cluster"
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

// memory fills the cluster with objects, starts a fresh sidecar and reads
// its peak RSS and CPU time once its caches have synced.
func (b *bench) memory(objects int) (memoryRow, error) {
	const namespaces = 50
	class := "bench-other"
	if err := b.storageClass(class, "other.example.com"); err != nil { // claims no sidecar provisions
		return memoryRow{}, err
	}
	per := objects / namespaces
	for i := range namespaces {
		ns := fmt.Sprintf("bench-mem-%02d", i)
		if err := b.namespace(ns); err != nil {
			return memoryRow{}, err
		}
		names := make([]string, per)
		for j := range names {
			names[j] = fmt.Sprintf("claim-%04d", j)
		}
		if err := b.createClaims(ns, class, names, snapshotRef("bench-src-default", "snap")); err != nil {
			return memoryRow{}, err
		}
		for j := range per {
			content := "absent"
			if _, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(ns).Create(b.ctx, &snapv1.VolumeSnapshot{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("snap-%04d", j), Namespace: ns},
				Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: &content}}},
				metav1.CreateOptions{}); err != nil {
				return memoryRow{}, err
			}
			name := gatewayv1.ObjectName(fmt.Sprintf("snap-%04d", j))
			if _, err := b.env.Gateway.GatewayV1().ReferenceGrants(ns).Create(b.ctx, &gatewayv1.ReferenceGrant{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("grant-%04d", j), Namespace: ns},
				Spec: gatewayv1.ReferenceGrantSpec{
					From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: "somewhere"}},
					To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot", Name: &name}},
				}}, metav1.CreateOptions{}); err != nil {
				return memoryRow{}, err
			}
		}
		logf("memory run: %d/%d namespaces filled", i+1, namespaces)
	}
	stack, err := b.env.StartStack(b.ctx, "bench-mem.csi.example.com", nil)
	if err != nil {
		return memoryRow{}, err
	}
	sc, err := b.env.StartSidecar(b.ctx, stack, "mem", "--v=1", "--enable-pprof")
	if err != nil {
		return memoryRow{}, err
	}
	if err := cluster.WaitHealthy(b.ctx, "http://"+sc.HTTPAddr+"/readyz", "", sc.Process); err != nil {
		return memoryRow{}, err
	}
	time.Sleep(10 * time.Second) // the optional caches (grants, snapshots) sync too
	if err := saveProfile("http://"+sc.HTTPAddr+"/debug/pprof/heap", filepath.Join(b.env.Work, "sidecar-heap.pprof")); err != nil {
		logf("no heap profile: %v", err)
	}
	return readProc(sc.PID(), objects)
}

// readProc reads peak RSS (VmHWM) and CPU seconds of a process.
func readProc(pid, objects int) (memoryRow, error) {
	row := memoryRow{objects: objects}
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return row, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			row.peakMiB = kb / 1024
		}
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return row, err
	}
	fields := strings.Fields(string(stat[strings.LastIndex(string(stat), ")")+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	row.cpuSeconds = (utime + stime) / 100 // USER_HZ
	return row, nil
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
