package nodedeployment

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Upstream's "distributed immediate, no node selected": the node claims the
// claim after the first wait with one update of the annotation, and
// provisions it when it comes back assigned.
func TestANodeClaimsAnUnassignedClaimAfterItsWait(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, newClaim(), immediate)
	a := w.addNode("node-a")

	done := a.owns(ctx, w.informed("default", "claim"))
	w.clock.awaitWaiters(2)
	w.clock.Step(firstWait - poll) // the polls find no other owner
	w.clock.Step(poll)
	if r := <-done; r.owned || r.err != nil {
		t.Fatalf("Owns = %v, %v; want false (the claim comes back assigned), nil", r.owned, r.err)
	}

	wantCalls := []string{
		"node-a: get default/claim",
		"node-a: update default/claim rv=1 selected-node=node-a: ok",
	}
	if got := w.apiCalls(false); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("API calls %q, want %q", got, wantCalls)
	}
	stored := w.stored("default", "claim")
	if SelectedNode(stored) != "node-a" {
		t.Errorf("selected node %q, want node-a", SelectedNode(stored))
	}
	if stored.Annotations[lastApplied] == "" {
		t.Error("the update erased the annotation the claim cache drops: it must start from the API's copy")
	}
	if got := w.clock.timerDurations(); !reflect.DeepEqual(got, []time.Duration{firstWait}) {
		t.Errorf("waits %v, want %v", got, []time.Duration{firstWait})
	}
	if a.d.attempts.len() != 0 {
		t.Error("the winner still counts attempts")
	}

	owned, err := a.d.Owns(ctx, w.informed("default", "claim"), nil)
	if !owned || err != nil {
		t.Errorf("the claim back with this node selected: Owns = %v, %v; want true", owned, err)
	}
	if len(w.apiCalls(false)) != len(wantCalls) {
		t.Errorf("more API calls: %q", w.apiCalls(false))
	}
}

// Upstream's README: "Only one update request can succeed, all others get a
// conflict error and then know that some other instance was faster."
func TestTwoNodesRaceForAClaimAndExactlyOneWins(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, newClaim(), immediate)
	a, b := w.addNode("node-a"), w.addNode("node-b")
	w.raceGets(2) // both read the claim unassigned before either writes

	claim := w.informed("default", "claim")
	doneA, doneB := a.owns(ctx, claim), b.owns(ctx, claim)
	w.clock.awaitWaiters(4)
	w.clock.Step(firstWait)
	var first, second result
	select { // the winner returns; the loser waits again, longer
	case first = <-doneA:
		w.clock.awaitWaiters(2)
		w.clock.Step(poll) // its first poll sees the winner
		second = <-doneB
	case first = <-doneB:
		w.clock.awaitWaiters(2)
		w.clock.Step(poll)
		second = <-doneA
	}
	for _, r := range []result{first, second} {
		if r.owned || r.err != nil {
			t.Errorf("%s: Owns = %v, %v; want false, nil", r.node, r.owned, r.err)
		}
	}

	winner, loser := first.node, second.node
	wantCalls := []string{
		"node-a: get default/claim",
		"node-b: get default/claim",
		loser + ": update default/claim rv=1 selected-node=" + loser + ": Conflict",
		winner + ": update default/claim rv=1 selected-node=" + winner + ": ok",
	}
	sort.Strings(wantCalls)
	if got := w.apiCalls(true); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("API calls %q, want %q", got, wantCalls)
	}
	if got := SelectedNode(w.stored("default", "claim")); got != winner {
		t.Errorf("selected node %q, want the winner %q", got, winner)
	}
	if got, want := w.clock.timerDurations(), []time.Duration{firstWait, firstWait, secondWait}; !reflect.DeepEqual(got, want) {
		t.Errorf("waits %v, want %v (the loser waits longer after its conflict)", got, want)
	}
	for _, n := range []*node{a, b} {
		if n.d.attempts.len() != 0 {
			t.Errorf("%s still counts attempts: an owner was found", n.name)
		}
		owned, err := n.d.Owns(ctx, w.informed("default", "claim"), nil)
		if owned != (n.name == winner) || err != nil {
			t.Errorf("%s: the claim back assigned to %s: Owns = %v, %v", n.name, winner, owned, err)
		}
	}
	if got := len(w.apiCalls(false)); got != len(wantCalls) {
		t.Errorf("%d API calls after the race, want %d", got, len(wantCalls))
	}
}

// Upstream's "distributed immediate, no capacity": a node without room does
// not claim; its next try waits longer (doubling up to the maximum); a win
// resets the wait for the next time the claim is unassigned.
func TestWaitsGrowWhileANodeHasNoRoomAndResetOnceItWins(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, newClaim(), immediate)
	room := []bool{false, false, false, true, true}
	a := w.addNode("node-a", func(c *Config) {
		c.Capacity = func(context.Context, *v1.PersistentVolumeClaim, *storagev1.StorageClass) (bool, error) {
			ok := room[0]
			room = room[1:]
			return ok, nil
		}
	})

	try := func() {
		t.Helper()
		done := a.owns(ctx, w.informed("default", "claim"))
		w.clock.awaitWaiters(2)
		w.clock.Step(maxDelay)
		if r := <-done; r.owned || r.err != nil {
			t.Fatalf("Owns = %v, %v; want false, nil", r.owned, r.err)
		}
	}
	for range 3 {
		try()
	}
	if calls := w.apiCalls(false); len(calls) != 0 || SelectedNode(w.stored("default", "claim")) != "" {
		t.Fatalf("a node without room wrote %q", calls)
	}
	try()
	if got := SelectedNode(w.stored("default", "claim")); got != "node-a" {
		t.Fatalf("selected node %q once there is room, want node-a", got)
	}
	w.reschedule("default", "claim") // e.g. CreateVolume ran out of space after all
	try()

	want := []time.Duration{firstWait, secondWait, thirdWait, thirdWait, firstWait}
	if got := w.clock.timerDurations(); !reflect.DeepEqual(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

func TestAFailedCapacityCheckDoesNotStopClaiming(t *testing.T) {
	w := newWorld(t, newClaim(), immediate)
	a := w.addNode("node-a", func(c *Config) {
		c.Capacity = func(context.Context, *v1.PersistentVolumeClaim, *storagev1.StorageClass) (bool, error) {
			return false, errors.New("GetCapacity: unavailable")
		}
	})
	done := a.owns(context.Background(), w.informed("default", "claim"))
	w.clock.awaitWaiters(2)
	w.clock.Step(firstWait)
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	if got := SelectedNode(w.stored("default", "claim")); got != "node-a" {
		t.Errorf("selected node %q, want node-a: provisioning then reports the problem", got)
	}
}

func TestAWaitingNodeStopsWhenItSeesAnotherOwner(t *testing.T) {
	w := newWorld(t, newClaim(), immediate)
	a := w.addNode("node-a")
	claim := w.informed("default", "claim")
	done := a.owns(context.Background(), claim)
	w.clock.awaitWaiters(2)

	a.setCached(t, newClaim(selectedNode("node-b"))) // node-b won meanwhile
	w.clock.Step(poll)
	if r := <-done; r.owned || r.err != nil {
		t.Fatalf("Owns = %v, %v; want false, nil", r.owned, r.err)
	}
	if calls := w.apiCalls(false); len(calls) != 0 {
		t.Errorf("API calls %q, want none", calls)
	}
	if a.d.attempts.len() != 0 {
		t.Error("attempts still counted after another node became the owner")
	}
}

// The claim-attempt failures: Owns returns the error (ShouldProvision then
// lets Provision check again and report it), and the node writes nothing.
func TestClaimAttemptFailures(t *testing.T) {
	tests := []struct {
		name      string
		meanwhile func(w *world, a *node, cancel context.CancelFunc) // while the node waits
		step      time.Duration
		wantErr   string
		wantCalls []string
	}{
		{name: "the claim deleted while waiting",
			meanwhile: func(w *world, a *node, _ context.CancelFunc) { must(w.t, a.claims.Delete(newClaim())) },
			step:      poll, wantErr: "PVC not found"},
		{name: "the claim replaced by another of the same name while waiting",
			meanwhile: func(w *world, a *node, _ context.CancelFunc) { a.setCached(w.t, newClaim(withUID("uid-2"))) },
			step:      poll, wantErr: "PVC was replaced"},
		{name: "the worker's context ends",
			meanwhile: func(_ *world, _ *node, cancel context.CancelFunc) { cancel() },
			wantErr:   "timed out waiting to become PVC owner"},
		{name: "the claim gone from the API server",
			meanwhile: func(w *world, _ *node, _ context.CancelFunc) { delete(w.claims, "default/claim") },
			step:      firstWait, wantErr: "not found",
			wantCalls: []string{"node-a: get default/claim"}},
		{name: "the update refused",
			meanwhile: func(w *world, _ *node, _ context.CancelFunc) {
				w.updateErr = apierrors.NewForbidden(v1.Resource("persistentvolumeclaims"), "claim", errors.New("RBAC"))
			},
			step: firstWait, wantErr: `selecting node "node-a" for PVC failed`,
			wantCalls: []string{"node-a: get default/claim", "node-a: update default/claim rv=1 selected-node=node-a: Forbidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := newWorld(t, newClaim(), immediate)
			a := w.addNode("node-a")
			done := a.owns(ctx, w.informed("default", "claim"))
			w.clock.awaitWaiters(2)
			w.mu.Lock()
			tt.meanwhile(w, a, cancel)
			w.mu.Unlock()
			w.clock.Step(tt.step)
			r := <-done
			if r.owned || r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Errorf("Owns = %v, %v; want false and an error with %q", r.owned, r.err, tt.wantErr)
			}
			if got := w.apiCalls(false); !reflect.DeepEqual(got, tt.wantCalls) {
				t.Errorf("API calls %q, want %q", got, tt.wantCalls)
			}
		})
	}
}
