package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// generator creates valid VolumeSnapshotContents with dryRun=All: the
// webhook is called for them (its configuration declares sideEffects
// None), and nothing is written to etcd, so the store does not grow from
// step to step.
type generator struct {
	snaps   snapclientset.Interface
	workers int
	seq     atomic.Int64
}

// loadResult is what the client saw in one step.
type loadResult struct {
	sent, errors, dropped int
	elapsed               time.Duration
	latencies             []time.Duration // of the successful requests
	firstError            string
}

func (g *generator) create(ctx context.Context) error {
	name := fmt.Sprintf("bench-%d", g.seq.Add(1))
	content := &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{benchLabel: "true"}},
		Spec: snapv1.VolumeSnapshotContentSpec{
			Driver:            "bench.example.com",
			DeletionPolicy:    snapv1.VolumeSnapshotContentRetain,
			Source:            snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr("handle-" + name)},
			VolumeSnapshotRef: v1.ObjectReference{Name: "snap-" + name, Namespace: "default"},
		},
	}
	_, err := g.snaps.SnapshotV1().VolumeSnapshotContents().Create(ctx, content, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// run is open-loop: a request is due every 1/rate from the start whether
// or not the earlier ones have returned, and goes to the first free one of
// the workers, queueing behind at most as many more; a request due when
// the queue is full is dropped (and counted).
// Latency runs from when the request was due, so that queueing in the
// client is not hidden.
func (g *generator) run(ctx context.Context, rate int, duration time.Duration) loadResult {
	type job struct{ due time.Time }
	jobs := make(chan job, g.workers)
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	for i := 0; i < g.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				err := g.create(ctx)
				took := time.Since(j.due)
				mu.Lock()
				if err != nil {
					res.errors++
					if res.firstError == "" {
						res.firstError = err.Error()
					}
				} else {
					res.latencies = append(res.latencies, took)
				}
				mu.Unlock()
			}
		}()
	}
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	total := int(duration / interval)
	for i := 0; i < total && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		select {
		case jobs <- job{due: due}:
			res.sent++
		default:
			res.dropped++
		}
	}
	close(jobs)
	wg.Wait()
	res.elapsed = time.Since(start)
	sort.Slice(res.latencies, func(i, j int) bool { return res.latencies[i] < res.latencies[j] })
	return res
}

// admitted is the achieved rate of successful admissions.
func (r loadResult) admitted() float64 {
	return float64(len(r.latencies)) / r.elapsed.Seconds()
}

// quantile of the successful requests' latencies; 0 when there are none.
func (r loadResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.latencies))+0.5) - 1
	i = max(0, min(i, len(r.latencies)-1))
	return r.latencies[i]
}

func ptr[T any](v T) *T { return &v }
