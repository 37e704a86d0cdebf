package capacity

import (
	"slices"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
)

func TestWrittenObjects(t *testing.T) {
	cachedA := newCapacity("csisc-a", "late-sc", layer0, available("1Mi"))
	cachedB := newCapacity("csisc-b", "late-sc", layer0other)
	updatedA := newCapacity("csisc-a", "late-sc", layer0, available("2Gi"))
	createdC := newCapacity("csisc-c", "other-sc", layer0)
	cached := []*storagev1.CSIStorageCapacity{cachedA, cachedB}
	keyC := keyOf(createdC)

	names := func(objs []*storagev1.CSIStorageCapacity) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.Name+" "+quantity(o.Capacity))
		}
		slices.Sort(out)
		return out
	}
	lateFoo := keyOf(cachedA)
	tests := map[string]struct {
		steps func(w *writtenObjects)
		// key and cached are what a key's worker reads from the index;
		// without a key, all of the cache.
		key    *Key
		cached []*storagev1.CSIStorageCapacity
		want   []string
	}{
		"nothing written: the cache": {
			steps: func(*writtenObjects) {},
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi"},
		},
		"a written version replaces the cached one": {
			steps: func(w *writtenObjects) { w.remember(updatedA) },
			want:  []string{"csisc-a 2Gi", "csisc-b 1Gi"},
		},
		"a created object the cache lacks exists": {
			steps: func(w *writtenObjects) { w.remember(createdC) },
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi", "csisc-c 1Gi"},
		},
		"a created object exists for its key only": {
			steps:  func(w *writtenObjects) { w.remember(createdC) },
			key:    &lateFoo,
			cached: []*storagev1.CSIStorageCapacity{cachedA},
			want:   []string{"csisc-a 1Mi"},
		},
		"a created object exists for its key": {
			steps: func(w *writtenObjects) { w.remember(createdC) },
			key:   &keyC,
			want:  []string{"csisc-c 1Gi"},
		},
		"forgotten, the cache counts again": {
			steps: func(w *writtenObjects) { w.remember(updatedA); w.forget(updatedA.UID) },
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi"},
		},
		"a write outlives one poll": {
			steps: func(w *writtenObjects) { w.remember(createdC); w.age() },
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi", "csisc-c 1Gi"},
		},
		"a write the cache never reports back is gone after two polls": {
			steps: func(w *writtenObjects) { w.remember(createdC); w.age(); w.age() },
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi"},
		},
		"a write renewed after a poll outlives the next": {
			steps: func(w *writtenObjects) { w.remember(createdC); w.age(); w.remember(createdC); w.age() },
			want:  []string{"csisc-a 1Mi", "csisc-b 1Gi", "csisc-c 1Gi"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var w writtenObjects
			tc.steps(&w)
			in := tc.cached
			if tc.key == nil {
				in = cached
			}
			if got := names(w.overlay(in, tc.key)); !slices.Equal(got, tc.want) {
				t.Errorf("overlay = %v, want %v", got, tc.want)
			}
		})
	}
}
