package inflight

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

func snapshot(explicit bool) datasource.Source {
	return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap",
		ExplicitNamespace: explicit}
}

func TestRegistry(t *testing.T) {
	r := New()
	var ended []datasource.Source
	r.OnEnd(func(src datasource.Source) { ended = append(ended, src) })

	r.Begin(&Attempt{Claim: "a", Source: snapshot(true)})
	r.Begin(&Attempt{Claim: "b", Source: snapshot(false)})
	r.Begin(&Attempt{Claim: "empty"})
	if !r.Uses(snapshot(false)) || !r.Uses(snapshot(true)) {
		t.Fatal("the snapshot restored by two attempts is not in use, however its namespace is spelled")
	}
	if r.Get("a") == nil || r.Get("nobody") != nil {
		t.Error("Get does not return exactly the attempts begun")
	}

	r.End("a")
	if !r.Uses(snapshot(false)) || len(ended) != 0 {
		t.Errorf("one of two attempts ended: in use %v, ended %v; want still in use, nothing ended", r.Uses(snapshot(false)), ended)
	}
	r.End("empty")
	r.End("b")
	if r.Uses(snapshot(false)) || len(ended) != 1 || ended[0] != snapshot(false) {
		t.Errorf("both attempts ended: in use %v, ended %v; want the snapshot ended once", r.Uses(snapshot(false)), ended)
	}
	r.End("b") // ending twice is harmless
	if len(ended) != 1 {
		t.Errorf("ending an attempt twice announced its source again: %v", ended)
	}
}

func TestBeginAgainReplacesTheAttempt(t *testing.T) {
	r := New()
	r.Begin(&Attempt{Claim: "a", Source: snapshot(false)})
	r.Begin(&Attempt{Claim: "a", Source: snapshot(false)})
	r.End("a")
	if r.Uses(snapshot(false)) {
		t.Error("a claim's second Begin counted its source twice")
	}
}

func TestAnAttemptIsHeldByOneCallerAtATime(t *testing.T) {
	r := New()
	var parked []string
	r.OnPark(func(a *Attempt) { parked = append(parked, string(a.Claim)) })
	r.Begin(&Attempt{Claim: "a", Source: snapshot(false)})
	if a, busy := r.Take("a"); a != nil || !busy {
		t.Fatalf("Take of an attempt its Begin holds = %v, busy %v; want nil, busy", a, busy)
	}
	r.Park("a")
	a, busy := r.Take("a")
	if a == nil || busy {
		t.Fatalf("Take of a parked attempt = %v, busy %v; want it, not busy", a, busy)
	}
	if _, busy := r.Take("a"); !busy {
		t.Error("a taken attempt was taken again")
	}
	r.Leave("a")
	if _, busy := r.Take("a"); busy {
		t.Error("an attempt left was still held")
	}
	r.End("a")
	if a, busy := r.Take("a"); a != nil || busy {
		t.Errorf("Take of an ended attempt = %v, busy %v; want nil, not busy", a, busy)
	}
	if len(parked) != 1 || parked[0] != "a" {
		t.Errorf("parked %v, want [a]: Leave and End park nothing", parked)
	}
}

// visited lists what EachAttempt visits, sorted.
func visited(r *Registry) []string {
	var out []string
	r.EachAttempt(func(parked bool, began time.Time) {
		out = append(out, fmt.Sprintf("parked=%v began=%s", parked, began.Format(time.TimeOnly)))
	})
	slices.Sort(out)
	return out
}

// TestEachAttemptSaysWhetherItIsParkedAndWhenItBegan: an attempt is
// visited from Begin to End; it counts as parked only between Park and the
// next Take, and keeps the time of its Begin throughout.
func TestEachAttemptSaysWhetherItIsParkedAndWhenItBegan(t *testing.T) {
	r := New()
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	r.UseClock(func() time.Time { return now })
	check := func(when string, want ...string) {
		t.Helper()
		if got := visited(r); !slices.Equal(got, want) {
			t.Errorf("%s: visited %q, want %q", when, got, want)
		}
	}

	r.Begin(&Attempt{Claim: "a"})
	check("sent", "parked=false began=10:00:00")
	now = now.Add(time.Minute)
	r.Park("a")
	r.Begin(&Attempt{Claim: "b"})
	check("a's answer lost, b sent", "parked=false began=10:01:00", "parked=true began=10:00:00")
	now = now.Add(time.Minute)
	r.Take("a")
	check("a sent again", "parked=false began=10:00:00", "parked=false began=10:01:00")
	r.End("a")
	r.End("b")
	check("both answered")
}
