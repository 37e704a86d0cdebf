package nodedeployment

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// fakeClock is a manual clock: its timers and tickers fire only when Step
// moves time past them. (k8s.io/utils/clock/testing is not vendored.)
type fakeClock struct {
	mu      sync.Mutex
	changed *sync.Cond // broadcast when a waiter is added or removed
	now     time.Time
	waiters map[*fakeWaiter]bool
	timers  []time.Duration // every timer's duration, in creation order
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Unix(0, 0), waiters: map[*fakeWaiter]bool{}}
	c.changed = sync.NewCond(&c.mu)
	return c
}

type fakeWaiter struct {
	clock  *fakeClock
	at     time.Time
	period time.Duration // 0 for a timer
	ch     chan time.Time
}

type fakeTimer struct{ *fakeWaiter }
type fakeTicker struct{ *fakeWaiter }

func (c *fakeClock) add(d, period time.Duration) *fakeWaiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &fakeWaiter{clock: c, at: c.now.Add(d), period: period, ch: make(chan time.Time, 1)}
	c.waiters[w] = true
	c.changed.Broadcast()
	return w
}

func (c *fakeClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers = append(c.timers, d)
	c.mu.Unlock()
	return fakeTimer{c.add(d, 0)}
}

func (c *fakeClock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic(fmt.Sprintf("non-positive ticker interval %v", d))
	}
	return fakeTicker{c.add(d, d)}
}

func (w *fakeWaiter) C() <-chan time.Time { return w.ch }

func (w *fakeWaiter) stop() bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	active := w.clock.waiters[w]
	delete(w.clock.waiters, w)
	w.clock.changed.Broadcast()
	return active
}

func (t fakeTimer) Stop() bool { return t.stop() }

func (t fakeTimer) Reset(time.Duration) bool { panic("not used") }

func (t fakeTicker) Stop() { t.stop() }

// Step moves time forward by d and fires what is due: a timer once, a
// ticker once however many periods passed (its channel holds one tick).
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for w := range c.waiters {
		if w.at.After(c.now) {
			continue
		}
		select {
		case w.ch <- c.now:
		default:
		}
		if w.period == 0 {
			delete(c.waiters, w)
			continue
		}
		for !w.at.After(c.now) {
			w.at = w.at.Add(w.period)
		}
	}
	c.changed.Broadcast()
}

// awaitWaiters blocks until exactly n timers and tickers are active: the
// code under test has started (or finished) waiting.
func (c *fakeClock) awaitWaiters(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waiters) != n {
		c.changed.Wait()
	}
}

// timerDurations returns every timer's duration so far.
func (c *fakeClock) timerDurations() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.timers...)
}
