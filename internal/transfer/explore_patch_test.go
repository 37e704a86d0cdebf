package transfer

// Patches on the explorer's API server (explore_api_test.go): JSON Patch
// (add, remove, replace, test: a failed test is a 409 Conflict, as
// kube-apiserver answers it), JSON merge patch and strategic merge patch.
// The controller updates today; these are here so that a fix that patches
// is explored as it is.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// patch applies a patch of type pt to the stored object of key.
func (w *world) patch(actor string, key storeKey, pt types.PatchType, data []byte, status, dryRun bool) (runtime.Object, error) {
	cur := w.get(key)
	if cur == nil {
		return nil, apierrors.NewNotFound(groupResource(key.resource), key.name)
	}
	original, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch pt {
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(original, data, cur)
	case types.MergePatchType:
		patched, err = mergePatchJSON(original, data)
	case types.JSONPatchType:
		patched, err = jsonPatch(original, data)
	default:
		return nil, fmt.Errorf("the explorer's API server does not serve %s patches", pt)
	}
	var failed *testFailed
	switch {
	case errors.As(err, &failed):
		return nil, apierrors.NewConflict(groupResource(key.resource), key.name, err)
	case err != nil:
		return nil, apierrors.NewBadRequest(err.Error())
	}
	next := reflect.New(reflect.TypeOf(cur).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(patched, next); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return w.update(actor, next, status, dryRun)
}

// mergePatchJSON applies an RFC 7386 merge patch.
func mergePatchJSON(original, patch []byte) ([]byte, error) {
	var doc, p any
	if err := json.Unmarshal(original, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(mergePatch(doc, p))
}

func mergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(d, k)
		} else {
			d[k] = mergePatch(d[k], v)
		}
	}
	return d
}

// testFailed is a JSON Patch test operation that failed.
type testFailed struct{ path string }

func (e *testFailed) Error() string { return "testing value " + e.path + " failed" }

// jsonPatch applies an RFC 6902 patch of add, remove, replace and test
// operations.
func jsonPatch(original, patch []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(original, &doc); err != nil {
		return nil, err
	}
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, err
	}
	for _, op := range ops {
		tokens := strings.Split(op.Path, "/")[1:]
		for i, t := range tokens {
			tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		}
		var err error
		if doc, err = applyOp(doc, tokens, op.Op, op.Value, op.Path); err != nil {
			return nil, err
		}
	}
	return json.Marshal(doc)
}

// applyOp applies one operation at tokens below node and returns node.
func applyOp(node any, tokens []string, op string, value any, path string) (any, error) {
	if len(tokens) == 0 {
		switch op {
		case "test":
			if !reflect.DeepEqual(node, value) {
				return nil, &testFailed{path}
			}
			return node, nil
		case "add", "replace":
			return value, nil
		}
		return nil, fmt.Errorf("json patch: %s of %s", op, path)
	}
	key, rest := tokens[0], tokens[1:]
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[key]
		switch {
		case len(rest) == 0 && op == "remove":
			if !ok {
				return nil, fmt.Errorf("json patch: no %s to remove", path)
			}
			delete(n, key)
			return n, nil
		case len(rest) == 0 && op == "add":
			n[key] = value
			return n, nil
		case !ok:
			return nil, fmt.Errorf("json patch: no %s", path)
		}
		next, err := applyOp(child, rest, op, value, path)
		n[key] = next
		return n, err
	case []any:
		if key == "-" && len(rest) == 0 && op == "add" {
			return append(n, value), nil
		}
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i > len(n) || i == len(n) && !(op == "add" && len(rest) == 0) {
			return nil, fmt.Errorf("json patch: no %s", path)
		}
		switch {
		case len(rest) == 0 && op == "add":
			return append(n[:i], append([]any{value}, n[i:]...)...), nil
		case len(rest) == 0 && op == "remove":
			return append(n[:i], n[i+1:]...), nil
		}
		n[i], err = applyOp(n[i], rest, op, value, path)
		return n, err
	}
	return nil, fmt.Errorf("json patch: no %s", path)
}

// TestExplorerServesPatches: the patches a fix may use behave on the
// explorer's API server as on kube-apiserver.
func TestExplorerServesPatches(t *testing.T) {
	tests := map[string]struct {
		pt       types.PatchType
		patch    string
		want     []string
		conflict bool
	}{
		"a JSON patch whose test holds":                      {types.JSONPatchType, `[{"op":"test","path":"/metadata/finalizers/0","value":"kubernetes.io/pvc-protection"},{"op":"add","path":"/metadata/finalizers/-","value":"x"}]`, []string{"kubernetes.io/pvc-protection", "x"}, false},
		"a JSON patch whose test fails conflicts":            {types.JSONPatchType, `[{"op":"test","path":"/metadata/finalizers/0","value":"y"},{"op":"remove","path":"/metadata/finalizers/0"}]`, nil, true},
		"a merge patch":                                      {types.MergePatchType, `{"metadata":{"finalizers":null}}`, nil, false},
		"a merge patch of a stale resourceVersion conflicts": {types.MergePatchType, `{"metadata":{"resourceVersion":"1","finalizers":null}}`, nil, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld()
			w.addClaim(sourceNS, "data", "vol-1")
			key := storeKey{resClaims, sourceNS, "data"}
			_, err := w.patch("test", key, tc.pt, []byte(tc.patch), false, false)
			if got := apierrors.IsConflict(err); got != tc.conflict || err != nil && !got {
				t.Fatalf("patch: %v, want a conflict: %t", err, tc.conflict)
			}
			if !tc.conflict && !reflect.DeepEqual(metaOf(w.get(key)).GetFinalizers(), tc.want) {
				t.Errorf("finalizers = %v, want %v", metaOf(w.get(key)).GetFinalizers(), tc.want)
			}
		})
	}
}
