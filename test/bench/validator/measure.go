package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/procfs"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/validator"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// contender is one of the validators under test.
type contender struct {
	id, name, binary string
	start            func(ctx context.Context, name string) (*localenv.Validator, error)
	// progress reads from the validator's metrics how far it got.
	progress func(metrics) progress
}

// progress is how many claims a validator decided, how many wait in its
// queue, and how many events it emitted.
type progress struct{ decided, queued, told float64 }

// flags are both validators' flags besides --kubeconfig and
// --http-endpoint: their defaults (10 workers, client QPS 5) otherwise.
var flags = []string{"--leader-election=false", "--v=1"}

// ours is this project's validator, with the sidecars' cross-namespace gate
// on, so that it decides claims across namespaces as sidecars that restore
// them do (upstream has no such setting: it ignores namespaces).
func ours(env *localenv.Env) contender {
	return contender{id: "ours", name: "this validator", binary: env.ValidatorBinary(),
		start: func(ctx context.Context, name string) (*localenv.Validator, error) {
			return env.StartValidator(ctx, name, append(flags, "--feature-gates=CrossNamespaceSourceProvisioning=true")...)
		},
		progress: func(m metrics) progress {
			return progress{decided: m.sum("workqueue_work_duration_seconds", "name", "claims"),
				queued: m.sum("workqueue_depth", "name", "claims"), told: m.sum("volume_data_source_validator_events_total", "", "")}
		}}
}

// theirs is the upstream validator. Its metrics count one operation per
// claim decided, by result; "invalid" ones are told with an event. It has
// no queue metrics: its queue is empty once every claim is decided.
func theirs(env *localenv.Env, version string) contender {
	return contender{id: "upstream", name: "upstream validator " + version, binary: env.UpstreamValidatorBinary(),
		start: func(ctx context.Context, name string) (*localenv.Validator, error) {
			return env.StartUpstreamValidator(ctx, name, flags...)
		},
		progress: func(m metrics) progress {
			return progress{decided: m.sum("volume_data_source_validator_operation_count", "", ""),
				told: m.sum("volume_data_source_validator_operation_count", "result", "invalid")}
		}}
}

// result is what one run of a validator measured.
type result struct {
	// Memory in MiB: peaks, and at the end, after the update round.
	peakRSS, peakAnon, endRSS, endAnon float64
	// syncSeconds is from the start until every claim is decided;
	// toldSeconds until its events are all in the API too, and syncCPU the
	// CPU time until then. updateCPU is the CPU time of the update round.
	syncSeconds, toldSeconds, syncCPU, updateCPU float64
	// syncRequests are the API requests until told, updateRequests those of
	// the update round; openWatches the watches open at the end.
	syncRequests, updateRequests requests
	openWatches                  float64
	// afterSync and afterUpdate are the validator's events then.
	afterSync, afterUpdate told
}

func (r result) String() string {
	return fmt.Sprintf("peak RSS %.1f MiB (anonymous %.1f), synced in %.1fs, told in %.1fs, CPU %.2fs, events %d on %d claims, %d after the update",
		r.peakRSS, r.peakAnon, r.syncSeconds, r.toldSeconds, r.syncCPU, r.afterSync.events, r.afterSync.claims, r.afterUpdate.events)
}

// measure runs the validator until it has decided every claim and its
// events are in the API, then updates every claim (an annotation, so
// nothing the decision reads changes) and waits again, and reports.
func (b *bench) measure(who contender, f *fixture, name string) (result, error) {
	var r result
	// Both start with their code out of the page cache, so that they map
	// it alike, as the sidecars' memory run does (docs/benchmarks.md).
	if err := cluster.EvictFromPageCache(who.binary); err != nil {
		return r, err
	}
	before, err := b.apiRequests()
	if err != nil {
		return r, err
	}
	started := time.Now()
	v, err := who.start(b.ctx, name)
	if err != nil {
		return r, err
	}
	defer v.Stop(10 * time.Second)
	proc, err := procfs.NewProc(v.PID())
	if err != nil {
		return r, err
	}
	mem := watchMemory(proc)
	p, err := b.waitDecided(v, who, 0, len(f.claims))
	if err != nil {
		return r, err
	}
	r.syncSeconds = time.Since(started).Seconds()
	if r.afterSync, err = b.waitTold(v, who); err != nil {
		return r, err
	}
	r.toldSeconds = time.Since(started).Seconds()
	r.syncCPU, err = cpuSeconds(proc)
	if err != nil {
		return r, err
	}
	synced, err := b.apiRequests()
	if err != nil {
		return r, err
	}
	r.syncRequests = synced.since(before)
	if err := b.updateClaims(f, name); err != nil {
		return r, err
	}
	if _, err := b.waitDecided(v, who, p.decided, len(f.claims)); err != nil {
		return r, err
	}
	if r.afterUpdate, err = b.waitTold(v, who); err != nil {
		return r, err
	}
	cpu, err := cpuSeconds(proc)
	if err != nil {
		return r, err
	}
	r.updateCPU = cpu - r.syncCPU
	after, err := b.apiRequests()
	if err != nil {
		return r, err
	}
	r.updateRequests, r.openWatches = after.since(synced), after.openWatches
	peaks, err := mem.stop()
	if err != nil {
		return r, err
	}
	r.peakRSS, r.peakAnon, r.endRSS, r.endAnon = peaks.peakRSS, peaks.peakAnon, peaks.endRSS, peaks.endAnon
	v.Stop(10 * time.Second)
	return r, b.deleteEvents(f)
}

// waitDecided waits until the validator has decided claims more claims
// than it had at from, and its queue is empty, and both stay so across two
// reads of its metrics.
func (b *bench) waitDecided(v *localenv.Validator, who contender, from float64, claims int) (progress, error) {
	var last progress
	err := b.poll(v, func(ctx context.Context) (bool, error) {
		m, err := scrape(ctx, v.HTTPAddr)
		if err != nil {
			return false, err
		}
		p := who.progress(m)
		done := p.decided-from >= float64(claims) && p.queued == 0 && p == last
		last = p
		return done, nil
	})
	return last, err
}

// told is the events one validator emitted on claims: claims told, the
// events (an event the recorder aggregated counts as many), the claims
// told by reason.
type told struct {
	claims, events int
	reasons        map[string]int
}

// waitTold waits until the events the validator's metrics count are all
// in the API, across two reads.
func (b *bench) waitTold(v *localenv.Validator, who contender) (told, error) {
	var last told
	lastWant := -1.0
	err := b.poll(v, func(ctx context.Context) (bool, error) {
		m, err := scrape(ctx, v.HTTPAddr)
		if err != nil {
			return false, err
		}
		want := who.progress(m).told
		t, err := b.told(ctx)
		if err != nil {
			return false, err
		}
		done := float64(t.events) == want && want == lastWant && t.events == last.events
		last, lastWant = t, want
		return done, nil
	})
	return last, err
}

// told counts the validators' events on claims in the API.
func (b *bench) told(ctx context.Context) (told, error) {
	t := told{reasons: map[string]int{}}
	seen := map[types.UID]bool{}
	opts := metav1.ListOptions{FieldSelector: "source=" + validator.Component, Limit: 500}
	for {
		list, err := b.kube.CoreV1().Events(v1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return t, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind != "PersistentVolumeClaim" {
				continue
			}
			t.events += int(max(e.Count, 1))
			if uid := e.InvolvedObject.UID; !seen[uid] {
				seen[uid] = true
				t.claims++
				t.reasons[e.Reason]++
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return t, nil
		}
	}
}

// updateClaims annotates every claim with round: an update the validators
// see, that changes nothing they decide on.
func (b *bench) updateClaims(f *fixture, round string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"bench.example.com/round": round}}})
	if err != nil {
		return err
	}
	return parallel(b.ctx, len(f.claims), func(i int) error {
		c := f.claims[i]
		_, err := b.kube.CoreV1().PersistentVolumeClaims(c.namespace).Patch(b.ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}

// deleteEvents deletes the validators' events, so that the next run starts
// without: both validators' events have the same source.
func (b *bench) deleteEvents(f *fixture) error {
	return parallel(b.ctx, f.namespaces, func(i int) error {
		return b.kube.CoreV1().Events(f.ns(i)).DeleteCollection(b.ctx, metav1.DeleteOptions{},
			metav1.ListOptions{FieldSelector: "source=" + validator.Component})
	})
}

// poll calls done every second, for up to ten minutes (the events of
// thousands of claims take minutes at the validators' client rate
// limit), until it is true; it fails at once if the validator exited.
func (b *bench) poll(v *localenv.Validator, done func(context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(b.ctx, time.Second, 10*time.Minute, false, func(ctx context.Context) (bool, error) {
		if exited, err := v.Exited(); exited {
			return false, fmt.Errorf("%s exited (%w); see %s", v.Name, err, v.LogPath())
		}
		return done(ctx)
	})
}
