package nodedeployment

import (
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// minPollInterval bounds how often a waiting node looks for another owner.
const minPollInterval = 10 * time.Millisecond

// Delay is how long a node waits before its attempt-th (0-based) try to
// claim a claim: base doubled per earlier attempt, at most max, minus a
// jitter of base times fraction (in [0, 1)), never below zero. It matches
// upstream's per-claim exponential rate limiter with jitter, so the first
// wait is spread over (0, base] and nodes rarely try at the same moment
// (the thundering herd upstream's README describes).
func Delay(attempt int, base, maxDelay time.Duration, fraction float64) time.Duration {
	delay := base
	for i := 0; i < attempt && delay > 0 && delay < maxDelay && delay <= math.MaxInt64/2; i++ {
		delay *= 2
	}
	delay = min(delay, maxDelay)
	jitter := time.Duration(float64(base) * fraction)
	if jitter > delay {
		return 0
	}
	return delay - jitter
}

// PollInterval is how often a waiting node checks its claim cache for
// another node that became the owner, so that it stops waiting early. A
// long base delay means fewer checks, but not fewer than every 10ms.
func PollInterval(base time.Duration) time.Duration {
	return max(base/100, minPollInterval)
}

// attempts counts, per claim, the tries to claim it since it was last
// forgotten: a try that lost a conflict or found no capacity counts, one
// that won or saw another owner resets the count. It is safe for concurrent
// use.
type attempts struct {
	mu    sync.Mutex
	count map[types.UID]int
}

// next returns the number of the attempt about to be made and counts it.
func (a *attempts) next(uid types.UID) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.count == nil {
		a.count = map[types.UID]int{}
	}
	n := a.count[uid]
	a.count[uid] = n + 1
	return n
}

// forget resets the count of a claim.
func (a *attempts) forget(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.count, uid)
}

// len returns how many claims are counted.
func (a *attempts) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.count)
}
