package claimsource

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
)

// TestDecisionsSurviveTheCacheTransforms runs every snapshot and clone case
// on objects as the sidecar's informers store them (internal/shared/cachetrim) and
// expects the same verdict: a trimmed cache must never hide a field the
// decision reads. Source claims are trimmed as another provisioner's claims
// (the most trimmed form: a clone source need not be annotated for us);
// the cases' volumes are this driver's and another driver's.
func TestDecisionsSurviveTheCacheTransforms(t *testing.T) {
	core := cachetrim.Core(driver)
	trimmed := func(in Input) Input {
		out := in
		out.Claim = trim(t, core, in.Claim)
		out.Snapshot = trim(t, cachetrim.Snapshot, in.Snapshot)
		out.Content = trim(t, cachetrim.Content, in.Content)
		if in.SourceClaim != nil {
			src := in.SourceClaim.DeepCopy()
			src.Annotations = map[string]string{"volume.kubernetes.io/storage-provisioner": "other.example.com"}
			out.SourceClaim = trim(t, core, src)
		}
		out.SourceVolume = trim(t, core, in.SourceVolume)
		return out
	}
	check := func(t *testing.T, in Input) {
		want, got := Decide(in), Decide(trimmed(in))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("on trimmed objects Decide() = %+v\nwant (untrimmed)      %+v", got, want)
		}
	}
	for _, tt := range snapshotCases {
		t.Run("snapshot/"+tt.name, func(t *testing.T) { check(t, tt.input()) })
	}
	for _, tt := range cloneCases {
		t.Run("clone/"+tt.name, func(t *testing.T) { check(t, tt.input()) })
	}
}

// trim returns a transformed deep copy of obj, or nil for nil.
func trim[T runtime.Object](t *testing.T, transform cache.TransformFunc, obj T) T {
	t.Helper()
	if reflect.ValueOf(obj).IsNil() {
		return obj
	}
	out, err := transform(obj.DeepCopyObject())
	if err != nil {
		t.Fatalf("transform: %v", err)
	}
	return out.(T)
}
