package main

import (
	"testing"
	"time"
)

func TestGranted(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	closed := []window{{name: "g", from: at(10), to: at(20)}}
	tests := map[string]struct {
		grants        []window
		created, sent time.Time
		want          bool
	}{
		"no grant ever allows nothing":                              {nil, at(0), at(1), false},
		"a check inside a grant's life is allowed":                  {closed, at(12), at(13), true},
		"a claim waiting from before the grant is allowed by it":    {closed, at(5), at(11), true},
		"a CreateVolume before the grant's creation is not":         {closed, at(5), at(9), false},
		"a claim created after the deletion is not":                 {closed, at(22), at(23), false},
		"a claim created within the watch lag of the deletion is":   {closed, at(20.5), at(23), true},
		"a grant still existing allows every later check":           {[]window{{from: at(10)}}, at(100), at(101), true},
		"a gap between two grants allows nothing in it":             {[]window{{from: at(0), to: at(5)}, {from: at(20), to: at(30)}}, at(8), at(15), false},
		"a claim created in a gap and sent under the next grant is": {[]window{{from: at(0), to: at(5)}, {from: at(20), to: at(30)}}, at(8), at(21), true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := granted(tt.grants, tt.created, tt.sent); got != tt.want {
				t.Errorf("granted = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 100 * time.Millisecond, 99: 198 * time.Millisecond, 100: 200 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("p99 of nothing = %v, want 0", got)
	}
}
