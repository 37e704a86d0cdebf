package transfer

// The explorer's histories (explore_test.go): the steps a history is made
// of, written so that a developer can replay one.

import (
	"fmt"
	"strconv"
	"strings"
)

// step is one step of a history: a move of the outside world, or a sync
// of the controller (by default the default schedule's, with fresh
// caches, after the other controllers have acted, without fault).
type step struct {
	// move is the name of a move; empty for a sync.
	move string
	// request is the request synced when not the default schedule's (a
	// preemption: the other request runs from now on).
	request string
	// stale is the resource whose cache is one sync behind.
	stale string
	// early: the sync comes before the other controllers act.
	early bool
	// during is a move made while the sync runs: after the caches were
	// filled, before the sync's first write.
	during string
	fault  fault
}

func (s step) String() string {
	if s.move != "" {
		return "move " + s.move
	}
	parts := []string{"sync"}
	if s.request != "" {
		parts = append(parts, "request="+s.request)
	}
	if s.stale != "" {
		parts = append(parts, "stale="+s.stale)
	}
	if s.early {
		parts = append(parts, "before-others")
	}
	if s.during != "" {
		parts = append(parts, "during="+s.during)
	}
	if s.fault.kind != faultNone {
		parts = append(parts, s.fault.kind+"="+strconv.Itoa(s.fault.at))
	}
	return strings.Join(parts, " ")
}

// parseStep reads a step as String writes it.
func parseStep(s string) (step, error) {
	s = strings.TrimSpace(s)
	if name, ok := strings.CutPrefix(s, "move "); ok {
		return step{move: name}, nil
	}
	fields := strings.Fields(s)
	if len(fields) == 0 || fields[0] != "sync" {
		return step{}, fmt.Errorf("step %q is neither \"move <name>\" nor \"sync [options]\"", s)
	}
	var st step
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "request":
			st.request = v
		case "stale":
			st.stale = v
		case "before-others":
			st.early = true
		case "during":
			st.during = v
		case faultCrash, faultLost, faultConflict:
			at, err := strconv.Atoi(v)
			if err != nil {
				return step{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.fault = fault{kind: k, at: at}
		default:
			return step{}, fmt.Errorf("step %q: unknown option %q", s, f)
		}
	}
	return st, nil
}

// offer is what the explorer may do at a point of a history instead of
// its default sync: the history's steps up to index, then one of steps.
type offer struct {
	index int
	steps []step
}

// historyString writes a history so that parseHistory reads it back; a
// history's trailing default syncs are left out (the default schedule
// plays them).
func historyString(steps []step) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, "; ")
}

func parseHistory(s string) ([]step, error) {
	var out []step
	for _, part := range strings.Split(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		st, err := parseStep(part)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
