package sourceprotection

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

func TestPatches(t *testing.T) {
	const f = datasource.SnapshotFinalizer
	meta := func(finalizers ...string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{ResourceVersion: "7", Finalizers: finalizers}
	}
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"adding to an object without finalizers creates the list",
			addPatch(meta(), f),
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/finalizers","value":["` + f + `"]}]`},
		{"adding to an object with finalizers appends",
			addPatch(meta("other"), f),
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/finalizers/-","value":"` + f + `"}]`},
		{"adding a finalizer that is there is no patch", addPatch(meta(f), f), ""},
		{"removing tests and removes the right element",
			removePatch(meta("other", f), f),
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"test","path":"/metadata/finalizers/1","value":"` + f + `"},{"op":"remove","path":"/metadata/finalizers/1"}]`},
		{"removing a finalizer that is not there is no patch", removePatch(meta("other"), f), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("patch = %s\nwant    %s", tt.got, tt.want)
			}
		})
	}
}
