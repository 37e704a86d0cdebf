package transfer

// The explorer's search (explore_test.go): which histories it plays.

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// bound is how far the explorer goes.
type bound struct {
	// perturbations is how many steps of a systematically explored
	// history may differ from the default schedule's; preemptions how
	// many, when all are preemptions (with two requests: the other
	// request's sync instead of the default one's).
	perturbations, preemptions int
	// random histories are played besides, each with up to
	// randomPerturbations steps of its own picked by a PRNG seeded seed.
	random, randomPerturbations int
	seed                        uint64
}

func (b bound) String() string {
	s := fmt.Sprintf("every history with at most %d perturbation(s) or %d preemptions", b.perturbations, b.preemptions)
	if b.random > 0 {
		s += fmt.Sprintf(", and %d random histories with up to %d (seed %d)", b.random, b.randomPerturbations, b.seed)
	}
	return s
}

// finding is a violation and the shortest history that shows it.
type finding struct {
	name, detail string
	scenario     string
	history      []step
	// histories counts the histories that show it, by scenario.
	histories map[string]int
}

// where says how many histories show it, in which scenarios.
func (f *finding) where() string {
	var parts []string
	for sc, n := range f.histories {
		parts = append(parts, fmt.Sprintf("%s %d", sc, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// report is what an exploration found.
type report struct {
	histories, syncs int
	// distinct are the hashes of the histories played, whole.
	distinct map[uint64]bool
	found    map[string]*finding
}

func newReport() *report {
	return &report{distinct: map[uint64]bool{}, found: map[string]*finding{}}
}

// add counts an execution of the scenario whose perturbations were
// prefix.
func (rep *report) add(sc *scenario, prefix []step, e *execution) {
	rep.histories++
	rep.syncs += e.syncs
	h := fnv.New64a()
	h.Write([]byte(sc.name + ": " + historyString(e.steps)))
	rep.distinct[h.Sum64()] = true
	for name, detail := range e.found {
		f := rep.found[name]
		if f == nil {
			f = &finding{name: name, histories: map[string]int{}}
			rep.found[name] = f
		}
		if f.detail == "" || len(prefix) < len(f.history) {
			f.detail, f.scenario, f.history = detail, sc.name, slices.Clone(prefix)
		}
		f.histories[sc.name]++
	}
}

// names are the violations found, sorted.
func (rep *report) names() []string {
	var out []string
	for name := range rep.found {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// explore plays every history of sc within b into rep.
func explore(ctx context.Context, sc *scenario, b bound, rep *report) {
	r := newRunner(ctx, sc)
	played := map[string]bool{}
	var walk func(prefix []step, budget int, only func(step) bool)
	walk = func(prefix []step, budget int, only func(step) bool) {
		e := r.execute(prefix)
		if key := historyString(prefix); !played[key] {
			played[key] = true
			rep.add(sc, prefix, e)
		}
		if budget == 0 {
			return
		}
		for _, o := range e.offers {
			for _, s := range o.steps {
				if only(s) {
					walk(append(slices.Clone(e.steps[:o.index]), s), budget-1, only)
				}
			}
		}
	}
	walk(nil, b.perturbations, func(step) bool { return true })
	if len(sc.requests) > 1 {
		walk(nil, b.preemptions, func(s step) bool { return s.request != "" })
	}
	rng := rand.New(rand.NewPCG(b.seed, uint64(len(sc.name))))
	for range b.random {
		var prefix []step
		for range 1 + rng.IntN(b.randomPerturbations) {
			e := r.execute(prefix)
			var choices []step
			var at []int
			for _, o := range e.offers {
				for _, s := range o.steps {
					choices, at = append(choices, s), append(at, o.index)
				}
			}
			if len(choices) == 0 {
				break
			}
			i := rng.IntN(len(choices))
			prefix = append(slices.Clone(e.steps[:at[i]]), choices[i])
		}
		rep.add(sc, prefix, r.execute(prefix))
	}
}

// replay plays one history of the scenario named and returns its log.
func replay(ctx context.Context, scenarioName string, prefix []step) (*execution, error) {
	for _, sc := range scenarios() {
		if sc.name == scenarioName {
			r := newRunner(ctx, sc)
			r.verbose = true
			return r.execute(prefix), nil
		}
	}
	return nil, fmt.Errorf("no scenario %q", scenarioName)
}
