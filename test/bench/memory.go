package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// Each sidecar is watched this long from its start: both sync thousands of
// objects within a few seconds.
const (
	memoryWindow = 20 * time.Second
	memoryRuns   = 3 // per sidecar; the median run (by peak RSS) is reported
)

// memory fills the cluster with objects, then starts this sidecar and the
// upstream csi-provisioner one at a time, memoryRuns times each, and reports
// each one's median peak memory and CPU time.
func (b *bench) memory(objects int) ([]memoryRow, error) {
	upstream, err := b.env.UpstreamVersion(b.ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream csi-provisioner (make tools builds it): %w", err)
	}
	if err := b.fillForMemory(objects); err != nil {
		return nil, err
	}
	stack, err := b.env.StartStack(b.ctx, "bench-mem.csi.example.com", nil)
	if err != nil {
		return nil, err
	}
	contenders := []struct {
		name, binary string
		profile      bool // save a heap profile of the first run
		start        func(id string) (*localenv.Sidecar, error)
	}{
		{"this sidecar", b.env.SidecarBinary(), true, func(id string) (*localenv.Sidecar, error) {
			return b.env.StartSidecar(b.ctx, stack, id, "--v=1", "--enable-pprof")
		}},
		{"upstream csi-provisioner " + upstream, b.env.UpstreamBinary(), false, func(id string) (*localenv.Sidecar, error) {
			return b.env.StartUpstreamSidecar(b.ctx, stack, id, "--v=1")
		}},
	}
	var rows []memoryRow
	for _, c := range contenders {
		var runs []memoryRow
		for i := range memoryRuns {
			// Both start with their code out of the page cache, so that they
			// map it alike (see docs/benchmarks.md).
			if err := cluster.EvictFromPageCache(c.binary); err != nil {
				return nil, err
			}
			sc, err := c.start(fmt.Sprintf("mem%d", i))
			if err != nil {
				return nil, err
			}
			row, err := watchMemory(b.ctx, sc.PID(), memoryWindow)
			if i == 0 && c.profile {
				if err := saveProfile("http://"+sc.HTTPAddr+"/debug/pprof/heap", filepath.Join(b.env.Work, "sidecar-heap.pprof")); err != nil {
					logf("no heap profile: %v", err)
				}
			}
			sc.Stop(10 * time.Second)
			if err != nil {
				return nil, err
			}
			row.sidecar, row.objects = c.name, objects
			logf("memory: %s run %d: %s", c.name, i+1, row)
			runs = append(runs, row)
		}
		slices.SortFunc(runs, func(a, b memoryRow) int { return cmp.Compare(a.peakMiB, b.peakMiB) })
		rows = append(rows, runs[len(runs)/2])
	}
	return rows, nil
}

// fillForMemory creates objects claims, snapshots and grants over 50
// namespaces. The claims belong to a provisioner that is not running, as
// most claims in a cluster belong to some other driver or are bound.
func (b *bench) fillForMemory(objects int) error {
	const namespaces = 50
	class := "bench-other"
	if err := b.storageClass(class, "other.example.com", storagev1.VolumeBindingImmediate); err != nil {
		return err
	}
	per := objects / namespaces
	for i := range namespaces {
		ns := fmt.Sprintf("bench-mem-%02d", i)
		if err := b.namespace(ns); err != nil {
			return err
		}
		names := make([]string, per)
		for j := range names {
			names[j] = fmt.Sprintf("claim-%04d", j)
		}
		if err := b.createClaims(ns, class, names, namespaced.source("bench-src-default")); err != nil {
			return err
		}
		for j := range per {
			content := "absent"
			if _, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(ns).Create(b.ctx, &snapv1.VolumeSnapshot{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("snap-%04d", j), Namespace: ns},
				Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: &content}}},
				metav1.CreateOptions{}); err != nil {
				return err
			}
			name := gatewayv1.ObjectName(fmt.Sprintf("snap-%04d", j))
			if _, err := b.env.Gateway.GatewayV1().ReferenceGrants(ns).Create(b.ctx, &gatewayv1.ReferenceGrant{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("grant-%04d", j), Namespace: ns},
				Spec: gatewayv1.ReferenceGrantSpec{
					From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: "somewhere"}},
					To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot", Name: &name}},
				}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		logf("memory run: %d/%d namespaces filled", i+1, namespaces)
	}
	return nil
}

// watchMemory samples a process's resident memory every 10ms for window
// and returns its peak RSS (the kernel's VmHWM), the peaks of its
// anonymous and file-backed parts, and its CPU time.
func watchMemory(ctx context.Context, pid int, window time.Duration) (memoryRow, error) {
	var row memoryRow
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		status, err := readStatus(pid)
		if err != nil {
			return row, err
		}
		row.anonMiB = max(row.anonMiB, status["RssAnon"])
		row.fileMiB = max(row.fileMiB, status["RssFile"])
		row.peakMiB = status["VmHWM"]
		select {
		case <-ctx.Done():
			return row, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	var err error
	row.cpuSeconds, err = cpuSeconds(pid)
	return row, err
}

// readStatus returns the memory figures of /proc/<pid>/status in MiB.
func readStatus(pid int) (map[string]float64, error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if f := strings.Fields(value); ok && len(f) == 2 && f[1] == "kB" {
			kb, _ := strconv.ParseFloat(f[0], 64)
			out[key] = kb / 1024
		}
	}
	return out, nil
}

// cpuSeconds is a process's user and system CPU time.
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(stat[strings.LastIndex(string(stat), ")")+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil // USER_HZ
}
