package inflight

import (
	"testing"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
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
