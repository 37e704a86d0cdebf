package transfer

// TestExploreTransfers is a deterministic exploration of the transfer
// state machine (issue 23, "Prove the class, not only the instances"), in
// the manner of etcd's robustness tests: it drives the REAL controller
// (Controller.syncRequest: gather, match, plan.Next, take, writeStatus,
// finish) against an in-memory API server behind the client-go fakes, and
// explores to a bound the interleavings of
//
//   - the controller's syncs, one request at a time until it rests; with
//     two requests, preemptions (the other request's sync instead);
//   - crashes inside a sync (the controller dies before its write N, N >
//     0: a new Controller over the same API state, its caches listed
//     afresh), answers lost (write N is made, the controller sees an
//     error) and write conflicts (write N refused with 409);
//   - stale caches: a sync whose informer cache of one resource is one
//     sync behind (the explorer fills the informers' indexers itself, so
//     it decides what each watch has delivered); a sync before the other
//     controllers have acted;
//   - the outside world's moves, before a sync or while it runs (after
//     its caches were filled): the request, the accept, the source, or
//     the request and the source together, deleted; the source created
//     again; an object of the target name created; a quota refusing the
//     target; the target namespace deleted (gone once empty), held
//     terminating, created again; a rival accept quoting the token; a pod
//     starting to use the source claim, and ending; and, as scenarios, two
//     transfers to one target name and two transfers of one source.
//
// A crash between two syncs needs no step of its own: a new Controller
// lists its caches afresh, and so does every sync here unless a stale
// cache is explored.
//
// The other controllers are small deterministic models run to rest before
// every sync (explore_others_test.go): the namespace controller,
// pvc-protection, the PV controller (binding, Available, Released, and
// the external-provisioner deleting the backend volume of a Released PV
// under Delete), the snapshot controller (binding a pre-provisioned
// content, a deleted snapshot's content deleted under Delete and kept
// under Retain, a content under Delete whose snapshot is gone deleted)
// and the csi-snapshotter (the backend snapshot of a content deleted under
// Delete). The API server (explore_api_test.go, explore_patch_test.go) has
// resourceVersion and UID preconditions, finalizers, status subresources,
// namespaces, admission, dry runs and patches.
//
// A history is a scenario (explore_scenarios_test.go) and the steps that
// differ from the default schedule (a perturbation each); the default
// schedule plays the rest until the world rests. When the controller
// deletes a source, and at rest, and again after the owners deleted every
// request, the invariants are checked (explore_invariants_test.go): no
// point of no return is passed, and nothing handed over, without both
// consents (the request not being deleted, a matching accept), nor to a
// namespace other than the accepting one; no backend volume or snapshot
// is destroyed unless a user deleted its owner, nor leaked (left Retain
// after its owner deleted it), nor stranded without an owner, nor named
// once destroyed; exactly one object owns each datum, with the policy its
// owner chose once no transfer is under way; no step deletes data; a
// transfer at rest that has not ended says why (not "Transferring") and
// never advises deleting an object that owns data; no lock or transfer
// finalizer is left behind; every history comes to rest.
//
// THE KNOWN-DEFECTS TABLE. Today's code has defects (issue 23), so the
// explorer finds violations on it. So that CI stays green until the fixes
// land, knownDefects below lists each violation the default bound finds on
// today's code, by name; the test fails on a violation not in the table
// (a regression, or a defect nobody knew of: its history is printed step
// by step, with how to replay it) and on an entry it no longer finds.
// Whoever fixes a defect deletes its entries: the explorer then proves
// the fix, for every history within the bound.
//
// Bounds: by default every history with at most one perturbation, and in
// the scenarios with two requests every one with at most two preemptions
// (about 2200 histories, a few seconds; under -race about 10 s).
// TRANSFER_EXPLORE_PERTURBATIONS=2 explores every history with two (about
// 330 000 histories, 11 to 16 minutes on two busy cores);
// TRANSFER_EXPLORE_PREEMPTIONS sets the preemptions;
// TRANSFER_EXPLORE_RANDOM=n adds n random histories per scenario with up
// to TRANSFER_EXPLORE_DEPTH perturbations (3) from the seed
// TRANSFER_EXPLORE_SEED (1); TRANSFER_EXPLORE_SCENARIOS=claim,snapshot
// explores only the scenarios named. Only the default bound is held to
// the table: another one reports what it finds.
//
// Replaying: TRANSFER_EXPLORE_REPLAY='<scenario>: <step>; <step>; ...'
// plays that history with its log (go test -run TestExploreReplay -v
// ./internal/transfer/). Every failure prints the line to use.

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// knownDefects are the violations the explorer finds on today's code, by
// name, with the defect of issue 23 each is an instance of. Delete an
// entry with the fix that removes it.
var knownDefects = map[string]string{}

func TestExploreTransfers(t *testing.T) {
	b, held := exploreBound(t)
	held = held && os.Getenv("TRANSFER_EXPLORE_SCENARIOS") == ""
	rep := newReport()
	start := time.Now()
	only := os.Getenv("TRANSFER_EXPLORE_SCENARIOS")
	for _, sc := range scenarios() {
		if only == "" || slices.Contains(strings.Split(only, ","), sc.name) {
			explore(t.Context(), sc, b, rep)
		}
	}
	t.Logf("Explored %s: %d histories (%d distinct), %d controller syncs, in %v",
		b, rep.histories, len(rep.distinct), rep.syncs, time.Since(start).Round(time.Millisecond))
	for _, name := range rep.names() {
		f := rep.found[name]
		if why, known := knownDefects[name]; known {
			t.Logf("Known violation %s (%s), in histories of %s; the shortest: %s", name, why, f.where(), replayLine(f))
			continue
		}
		if !held {
			t.Logf("Violation %s, in histories of %s: %s\nthe shortest: %s", name, f.where(), f.detail, replayLine(f))
			continue
		}
		t.Errorf("Violation %s, not in knownDefects, in histories of %s: %s\n%s", name, f.where(), f.detail, replayLog(t, f))
	}
	if !held {
		return
	}
	for name, why := range knownDefects {
		if rep.found[name] == nil {
			t.Errorf("Known violation %s (%s) is no longer found: delete it from knownDefects", name, why)
		}
	}
}

// TestExploreReplay plays the history TRANSFER_EXPLORE_REPLAY with its
// log.
func TestExploreReplay(t *testing.T) {
	line := os.Getenv("TRANSFER_EXPLORE_REPLAY")
	if line == "" {
		t.Skip("TRANSFER_EXPLORE_REPLAY is not set")
	}
	name, history, _ := strings.Cut(line, ":")
	steps, err := parseHistory(history)
	if err != nil {
		t.Fatal(err)
	}
	e, err := replay(t.Context(), strings.TrimSpace(name), steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("History %s:\n%s", line, strings.Join(e.log, "\n"))
	for name, detail := range e.found {
		t.Logf("Violation %s: %s", name, detail)
	}
}

// exploreBound is the bound from the environment, and whether it is the
// default one (held to knownDefects).
func exploreBound(t *testing.T) (bound, bool) {
	b := bound{perturbations: 1, preemptions: 2, randomPerturbations: 3, seed: 1}
	held := true
	for _, v := range []struct {
		env string
		to  *int
	}{
		{"TRANSFER_EXPLORE_PERTURBATIONS", &b.perturbations},
		{"TRANSFER_EXPLORE_PREEMPTIONS", &b.preemptions},
		{"TRANSFER_EXPLORE_RANDOM", &b.random},
		{"TRANSFER_EXPLORE_DEPTH", &b.randomPerturbations},
	} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				t.Fatalf("%s=%q is not a count", v.env, s)
			}
			*v.to, held = n, false
		}
	}
	if s := os.Getenv("TRANSFER_EXPLORE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TRANSFER_EXPLORE_SEED=%q is not a seed", s)
		}
		b.seed, held = n, false
	}
	return b, held
}

// replayLine is how to replay a finding.
func replayLine(f *finding) string {
	return "TRANSFER_EXPLORE_REPLAY='" + f.scenario + ": " + historyString(f.history) + "'"
}

// replayLog is a finding's history played again, step by step.
func replayLog(t *testing.T, f *finding) string {
	e, err := replay(t.Context(), f.scenario, f.history)
	if err != nil {
		return err.Error()
	}
	return "Replay with " + replayLine(f) + " go test -run TestExploreReplay -v ./internal/transfer/\n" + strings.Join(e.log, "\n")
}
