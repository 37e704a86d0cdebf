package capacity

import (
	"strings"
	"testing"
)

// TestManagedByForNode ports upstream's TestGetNameWithMaxLength for the
// name it is used for: the managed-by label of the sidecar on a node.
func TestManagedByForNode(t *testing.T) {
	tests := map[string]struct {
		node, want string
	}{
		"unchanged":                             {node: "node01", want: "external-provisioner-node01"},
		"exactly63":                             {node: "node" + strings.Repeat("a", 38), want: "external-provisioner-node" + strings.Repeat("a", 38)},
		"one over":                              {node: "node" + strings.Repeat("a", 39), want: "external-p-53f40b57-node" + strings.Repeat("a", 39)},
		"long node name with 52":                {node: "node" + strings.Repeat("a", 48), want: "e-53f40b57-node" + strings.Repeat("a", 48)},
		"long node name with 53, ignore suffix": {node: "node" + strings.Repeat("a", 49), want: "external-provisioner-a3607ff1"},
		"very long, ignore suffix":              {node: "node" + strings.Repeat("a", 63), want: "external-provisioner-df38e37f"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ManagedByForNode(tc.node)
			if got != tc.want {
				t.Errorf("ManagedByForNode(%q) = %q, want %q", tc.node, got, tc.want)
			}
			if len(got) > 63 {
				t.Errorf("%q is longer than a label value may be", got)
			}
		})
	}
}

// TestShortNameWithoutBase ports upstream's cases with an empty base.
func TestShortNameWithoutBase(t *testing.T) {
	if got := shortName("", "node01", 63); got != "node01" {
		t.Errorf("short name = %q, want node01", got)
	}
	if got := shortName("", "node"+strings.Repeat("a", 63), 63); got != "fa65587e" {
		t.Errorf("short name = %q, want fa65587e", got)
	}
}
