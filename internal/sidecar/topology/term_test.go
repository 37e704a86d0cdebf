package topology

import (
	"slices"
	"testing"
)

// Ported from the upstream csi-provisioner v6.4.0's TestTopologyTermSort,
// TestTopologyTermCompare and TestTopologyTermSubset.

var (
	instance = segment{"instance", "i-123"}
	zoneA    = segment{"zone", "us-east-1a"}
	zoneB    = segment{"zone", "us-east-1b"}
)

func TestTermSort(t *testing.T) {
	tests := []struct {
		name     string
		in, want term
	}{
		{"empty", term{}, term{}},
		{"one key", term{zoneA}, term{zoneA}},
		{"keys are sorted", term{zoneA, instance}, term{instance, zoneA}},
		{"values of one key are sorted", term{zoneB, zoneA}, term{zoneA, zoneB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.sort()
			if !slices.Equal(tt.in, tt.want) {
				t.Errorf("sorted = %v, want %v", tt.in, tt.want)
			}
		})
	}
}

func TestTermCompare(t *testing.T) {
	tests := []struct {
		name            string
		smaller, larger term
	}{
		{"a shorter term is smaller", term{}, term{zoneA}},
		{"a smaller key is smaller", term{instance}, term{zoneA}},
		{"a smaller value is smaller", term{instance, zoneA}, term{instance, zoneB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if compare(tt.smaller, tt.larger) >= 0 || compare(tt.larger, tt.smaller) <= 0 {
				t.Errorf("compare(%v, %v) does not order them", tt.smaller, tt.larger)
			}
			if compare(tt.smaller, tt.smaller) != 0 || compare(tt.larger, tt.larger) != 0 {
				t.Error("a term does not compare equal to itself")
			}
		})
	}
}

func TestTermSubset(t *testing.T) {
	tests := []struct {
		name     string
		t, other term
		want     bool
	}{
		{"empty", nil, nil, true},
		{"empty in one pair", term{}, term{zoneA}, true},
		{"one pair in none", term{zoneA}, term{}, false},
		{"same", term{zoneA}, term{zoneA}, true},
		{"first pair of two", term{instance}, term{instance, zoneA}, true},
		{"two pairs in their first", term{instance, zoneA}, term{instance}, false},
		{"last pair of two", term{zoneA}, term{instance, zoneA}, true},
		{"two pairs in their last", term{instance, zoneA}, term{zoneA}, false},
		{"unrelated", term{instance}, term{zoneA}, false},
		{"another value of the key", term{zoneB}, term{instance, zoneA}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.subsetOf(tt.other); got != tt.want {
				t.Errorf("%v.subsetOf(%v) = %v, want %v", tt.t, tt.other, got, tt.want)
			}
		})
	}
}
