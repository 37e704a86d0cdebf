package sourceprotection

import (
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// addPatch returns the JSON patch that adds finalizer to obj, or nil when it
// is already there. The patch first tests the resourceVersion, so a change
// computed from a stale cache is rejected rather than applied blindly.
func addPatch(obj metav1.Object, finalizer string) []byte {
	current := obj.GetFinalizers()
	if slices.Contains(current, finalizer) {
		return nil
	}
	ops := []jsonPatchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: obj.GetResourceVersion()}}
	if len(current) == 0 {
		ops = append(ops, jsonPatchOp{Op: "add", Path: "/metadata/finalizers", Value: []string{finalizer}})
	} else {
		ops = append(ops, jsonPatchOp{Op: "add", Path: "/metadata/finalizers/-", Value: finalizer})
	}
	return mustMarshal(ops)
}

// removePatch returns the JSON patch that removes finalizer from obj, or nil
// when it is not there. Like addPatch it tests the resourceVersion; it also
// tests the element it removes, so an index from a stale list cannot remove
// another component's finalizer.
func removePatch(obj metav1.Object, finalizer string) []byte {
	i := slices.Index(obj.GetFinalizers(), finalizer)
	if i < 0 {
		return nil
	}
	path := "/metadata/finalizers/" + itoa(i)
	return mustMarshal([]jsonPatchOp{
		{Op: "test", Path: "/metadata/resourceVersion", Value: obj.GetResourceVersion()},
		{Op: "test", Path: path, Value: finalizer},
		{Op: "remove", Path: path},
	})
}

func mustMarshal(ops []jsonPatchOp) []byte {
	b, err := json.Marshal(ops)
	if err != nil {
		panic(err) // only strings and string slices: cannot fail
	}
	return b
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
