package transfer

// The explorer's search assumes that a history's prefix always plays the
// same: a controller that decides from a map's order, or writes from a
// copy it has just made stale, breaks that (and its replays).

import (
	"os"
	"slices"
	"strconv"
	"testing"
)

// TestExploreIsDeterministic walks the histories of one scenario as
// explore does (TRANSFER_EXPLORE_DETERMINISM=<scenario>, to
// TRANSFER_EXPLORE_PERTURBATIONS, 2 by default) and stops at the first
// history whose replay cannot make a move its first play offered: the
// explorer's search assumes a prefix always plays the same.
func TestExploreIsDeterministic(t *testing.T) {
	name := os.Getenv("TRANSFER_EXPLORE_DETERMINISM")
	if name == "" {
		t.Skip("TRANSFER_EXPLORE_DETERMINISM is not set")
	}
	depth := 2
	if s := os.Getenv("TRANSFER_EXPLORE_PERTURBATIONS"); s != "" {
		depth, _ = strconv.Atoi(s)
	}
	var sc *scenario
	for _, s := range scenarios() {
		if s.name == name {
			sc = s
		}
	}
	if sc == nil {
		t.Fatalf("no scenario %q", name)
	}
	r := newRunner(t.Context(), sc)
	var failed []step
	var why any
	play := func(prefix []step) (e *execution) {
		defer func() {
			if p := recover(); p != nil && failed == nil {
				failed, why = slices.Clone(prefix), p
			}
		}()
		return r.execute(prefix)
	}
	var walk func(prefix []step, budget int)
	walk = func(prefix []step, budget int) {
		if failed != nil {
			return
		}
		e := play(prefix)
		if e == nil || budget == 0 {
			return
		}
		for _, o := range e.offers {
			for _, s := range o.steps {
				walk(append(slices.Clone(e.steps[:o.index]), s), budget-1)
			}
		}
	}
	walk(nil, depth)
	if failed != nil {
		t.Errorf("%v: the history %s: %s plays differently from the history it was offered in", why, name, historyString(failed))
	}
}
