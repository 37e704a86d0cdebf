package nodedeployment

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		name      string
		attempt   int
		base, max time.Duration
		fraction  float64
		want      time.Duration
	}{
		{"the first wait without jitter is the base delay", 0, 20 * time.Second, time.Minute, 0, 20 * time.Second},
		{"jitter shortens the first wait by a fraction of the base delay", 0, 20 * time.Second, time.Minute, 0.5, 10 * time.Second},
		{"the first wait can be almost nothing", 0, 20 * time.Second, time.Minute, 0.999, 20 * time.Millisecond},
		{"the second wait is twice the base delay, minus jitter", 1, 20 * time.Second, time.Minute, 0.5, 30 * time.Second},
		{"the third wait reaches the maximum, minus jitter", 2, 20 * time.Second, time.Minute, 0.5, 50 * time.Second},
		{"later waits stay at the maximum", 7, 20 * time.Second, time.Minute, 0, time.Minute},
		{"a huge attempt count does not overflow", 10000, 20 * time.Second, 1 << 62, 0, 1 << 62},
		{"a maximum below the base delay caps the first wait too", 0, 20 * time.Second, 5 * time.Second, 0, 5 * time.Second},
		{"jitter larger than the capped wait leaves none", 0, 20 * time.Second, 5 * time.Second, 0.5, 0},
		{"no base delay means no wait", 3, 0, time.Minute, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Delay(tt.attempt, tt.base, tt.max, tt.fraction); got != tt.want {
				t.Errorf("Delay(%d, %v, %v, %v) = %v, want %v", tt.attempt, tt.base, tt.max, tt.fraction, got, tt.want)
			}
		})
	}
}

// TestDelayBounds is upstream's TestRateLimiter: with random jitter every
// wait lies within [0, max], and (upstream's README) the first one within
// [0, base].
func TestDelayBounds(t *testing.T) {
	base, maxDelay := time.Second, 10*time.Second
	for i := range 100 {
		first := Delay(0, base, maxDelay, rand.Float64())
		if first < 0 || first > base {
			t.Errorf("first wait %v outside [0, %v]", first, base)
		}
		if d := Delay(i, base, maxDelay, rand.Float64()); d < 0 || d > maxDelay {
			t.Errorf("wait %d: %v outside [0, %v]", i, d, maxDelay)
		}
	}
}

func TestPollInterval(t *testing.T) {
	for base, want := range map[time.Duration]time.Duration{
		20 * time.Second:       200 * time.Millisecond,
		100 * time.Millisecond: 10 * time.Millisecond,
		0:                      10 * time.Millisecond,
	} {
		if got := PollInterval(base); got != want {
			t.Errorf("PollInterval(%v) = %v, want %v", base, got, want)
		}
	}
}

func TestAttemptsCountPerClaimUntilForgotten(t *testing.T) {
	var a attempts
	for want := range 3 {
		if got := a.next("a"); got != want {
			t.Errorf("attempt %d numbered %d", want, got)
		}
	}
	if got := a.next("b"); got != 0 {
		t.Errorf("another claim starts at %d, want 0", got)
	}
	a.forget("a")
	if got := a.next("a"); got != 0 {
		t.Errorf("a forgotten claim starts at %d, want 0", got)
	}
	a.forget("a")
	a.forget("b")
	if a.len() != 0 {
		t.Errorf("%d claims still counted", a.len())
	}
}
