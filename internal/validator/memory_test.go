package validator

import (
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
)

func TestSetGCPercent(t *testing.T) {
	tests := []struct {
		name, gogc string
		// before is the target the runtime applied from GOGC, or its
		// default; want is the target once the validator started.
		before, want int
	}{
		{name: "without GOGC the validator's target applies", before: 100, want: gcPercent},
		{name: "GOGC wins", gogc: "200", before: 200, want: 200},
		{name: "GOGC=off keeps collection off", gogc: "off", before: -1, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restore := debug.SetGCPercent(tt.before)
			t.Cleanup(func() { debug.SetGCPercent(restore) })
			getenv := func(key string) string {
				if key == "GOGC" {
					return tt.gogc
				}
				return ""
			}
			logged := setGCPercent(getenv)
			if got := debug.SetGCPercent(tt.before); got != tt.want {
				t.Errorf("the runtime's target is %d, want %d", got, tt.want)
			}
			if want := tt.gogc; want == "" && logged != strconv.Itoa(gcPercent) || want != "" && logged != want {
				t.Errorf("setGCPercent() = %q, want GOGC's value or %d", logged, gcPercent)
			}
		})
	}
}

// TestClaimCacheIndexes: the claim cache has the indexes the validator
// reads, and not the informer factory's namespace index, which would hold
// a key for every claim.
func TestClaimCacheIndexes(t *testing.T) {
	e := startEnv(t)
	got := slices.Sorted(maps.Keys(e.c.claims.GetIndexer().GetIndexers()))
	want := []string{byPopulatorKind, requeue.SourceIndex}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("claim cache indexes = %v, want %v", got, want)
	}
}
