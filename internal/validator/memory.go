package validator

import (
	"runtime/debug"
	"strconv"
)

// gcPercent is the validator's garbage-collection target unless the GOGC
// environment variable sets one: a collection runs once the heap has grown
// by a quarter over what the last one left, where Go's default waits until
// it has doubled. Nearly all of the validator's heap is its caches, live
// for as long as it runs, and it is idle between changes, so the default
// would hold as much memory again as the caches for garbage that comes in
// bursts (the first sync, a relist); the price is a few more collections
// during those bursts. docs/benchmarks.md has the memory and CPU figures.
const gcPercent = 25

// setGCPercent sets gcPercent unless GOGC (read with getenv) is set: the
// runtime has then applied it, and it wins. GOMEMLIMIT, which the runtime
// reads too, applies either way. It returns the target in force as GOGC
// spells it, for the log.
func setGCPercent(getenv func(string) string) string {
	if gogc := getenv("GOGC"); gogc != "" {
		return gogc
	}
	debug.SetGCPercent(gcPercent)
	return strconv.Itoa(gcPercent)
}
