package sidecar

import (
	"context"
	"testing"
	"time"
)

// TestWaitSettledIsBoundedOnceForAll (adversarial review of 373dbdd):
// the optional APIs that never settle (a discovery that hangs, a list that
// never returns) hold the start for the bound once in all, not once per
// API, and a canceled context ends the wait at once; an API that settled
// costs nothing.
func TestWaitSettledIsBoundedOnceForAll(t *testing.T) {
	never := func() <-chan struct{} { return make(chan struct{}) }
	closed := make(chan struct{})
	close(closed)
	const d = 200 * time.Millisecond

	start := time.Now()
	if waitSettled(context.Background(), []<-chan struct{}{never(), never(), never(), never(), never()}, d) {
		t.Error("waitSettled reported settled APIs that never settled")
	}
	if took := time.Since(start); took > 3*d {
		t.Errorf("five unsettled APIs held the start %v, want about %v", took, d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if waitSettled(ctx, []<-chan struct{}{never()}, time.Hour) {
		t.Error("waitSettled reported settled after its context ended")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a canceled start waited %v", took)
	}

	if !waitSettled(context.Background(), []<-chan struct{}{closed, closed}, time.Hour) {
		t.Error("settled APIs not reported settled")
	}
}
