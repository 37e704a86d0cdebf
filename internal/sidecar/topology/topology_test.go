package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

// The cases of the upstream csi-provisioner v6.4.0's topology_test.go
// (TestStatefulSetSpreading, TestAllowedTopologies, TestTopologyAggregation,
// TestPreferredTopologies): the same cluster, class and claim as input and
// the same requisite and preferred segments as result. Where upstream
// compares requisite segments as a set, the expected order here is its
// sorted order, which upstream sends too.

const (
	zoneKey = "com.example.csi/zone"
	rackKey = "com.example.csi/rack"
	diskKey = "com.example.csi/disk"
)

// seg is a segment from alternating keys and values, with short keys:
// seg("zone", "zone1", "rack", "rackA").
func seg(kv ...string) map[string]string {
	s := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		s["com.example.csi/"+kv[i]] = kv[i+1]
	}
	return s
}

// allowed is one selector term of allowedTopologies: key, values, key,
// values... with short keys: allowed("zone", "zone1,zone2").
func allowed(kv ...string) v1.TopologySelectorTerm {
	var term v1.TopologySelectorTerm
	for i := 0; i+1 < len(kv); i += 2 {
		term.MatchLabelExpressions = append(term.MatchLabelExpressions,
			v1.TopologySelectorLabelRequirement{Key: "com.example.csi/" + kv[i], Values: strings.Split(kv[i+1], ",")})
	}
	return term
}

func keys(k ...string) []string {
	var out []string
	for _, s := range k {
		out = append(out, "com.example.csi/"+s)
	}
	return out
}

// cluster is the nodes of a case: their labels and the driver's keys in
// each node's CSINode (nil: the CSINode lists no keys for the driver).
type cluster struct {
	labels []map[string]string
	keys   [][]string
}

func sameKeys(n int, k []string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// input builds the Input: immediate binding, or the first node selected.
func (c cluster) input(allowedTopologies []v1.TopologySelectorTerm, selectFirst bool, claim string, strict, immediate bool) Input {
	in := Input{AllowedTopologies: allowedTopologies, ClaimName: claim, Strict: strict, Immediate: immediate}
	for i := range max(len(c.labels), len(c.keys)) {
		n := Node{Name: fmt.Sprintf("node-%d", i)}
		if i < len(c.keys) {
			n.Keys = c.keys[i]
		}
		if i < len(c.labels) {
			n.Labels = c.labels[i]
		}
		if len(n.Keys) > 0 { // as the provisioner gathers them
			in.Nodes = append(in.Nodes, n)
		}
	}
	if !selectFirst {
		return in
	}
	in.Selected = &SelectedNode{Name: "node-0"}
	if len(c.labels) > 0 {
		in.Selected.Labels = c.labels[0]
	}
	if len(c.keys) > 0 {
		in.Selected.Keys = c.keys[0]
	}
	return in
}

// forAllFlags runs f for each combination of --strict-topology and
// --immediate-topology, as upstream's tests do.
func forAllFlags(t *testing.T, f func(t *testing.T, strict, immediate bool)) {
	for _, strict := range []bool{false, true} {
		for _, immediate := range []bool{false, true} {
			t.Run(fmt.Sprintf("strict=%v,immediate=%v", strict, immediate), func(t *testing.T) { f(t, strict, immediate) })
		}
	}
}

func segments(t []*csi.Topology) []map[string]string {
	var out []map[string]string
	for _, s := range t {
		out = append(out, s.GetSegments())
	}
	return out
}

func equalSegments(a, b []map[string]string) bool {
	return slices.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

func TestStatefulSetSpreading(t *testing.T) {
	c := cluster{labels: []map[string]string{seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackB"),
		seg("zone", "zone3", "rack", "rackC"), seg("zone", "zone4", "rack", "rackD")}}
	c.keys = sameKeys(4, keys("zone", "rack"))
	z1, z2, z3, z4 := seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackB"), seg("zone", "zone3", "rack", "rackC"), seg("zone", "zone4", "rack", "rackD")
	tests := []struct {
		name    string
		claim   string
		allowed []v1.TopologySelectorTerm
		want    []map[string]string
	}{
		{"replica 1 of StatefulSet testset starts at index 0; the claim name part does not count",
			"testpvcA-testset-1", nil, []map[string]string{z1, z2, z3, z4}},
		{"another claim of replica 1 starts at the same segment", "testpvcB-testset-1", nil, []map[string]string{z1, z2, z3, z4}},
		{"replica 1 among allowedTopologies of one term", "testpvcC-testset-1",
			[]v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackA")}, []map[string]string{z1}},
		{"replica 2 starts at index 1", "testset-2", nil, []map[string]string{z2, z3, z4, z1}},
		{"replica 2 among allowedTopologies of two terms starts at index 1", "testpvcB-testset-2",
			[]v1.TopologySelectorTerm{allowed("zone", "zone2", "rack", "rackB"), allowed("zone", "zone1", "rack", "rackA")},
			[]map[string]string{z2, z1}},
		{"replica 3 starts at index 2", "testpvc-testset-3", nil, []map[string]string{z3, z4, z1, z2}},
		{"replica 4 starts at index 3", "testpvc-testset-4", nil, []map[string]string{z4, z1, z2, z3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forAllFlags(t, func(t *testing.T, strict, immediate bool) {
				got, err := Requirement(c.input(tt.allowed, false, tt.claim, strict, immediate))
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				if !immediate && tt.allowed == nil {
					want = nil
				}
				if !equalSegments(segments(got.GetPreferred()), want) {
					t.Errorf("preferred = %v, want %v", segments(got.GetPreferred()), want)
				}
			})
		})
	}
}

func TestAllowedTopologies(t *testing.T) {
	tests := []struct {
		name    string
		allowed []v1.TopologySelectorTerm
		want    []map[string]string
	}{
		{"single expression, single value", []v1.TopologySelectorTerm{allowed("zone", "zone1")},
			[]map[string]string{seg("zone", "zone1")}},
		{"single expression, multiple values", []v1.TopologySelectorTerm{allowed("zone", "zone1,zone2")},
			[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2")}},
		{"multiple expressions, single value", []v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackA")},
			[]map[string]string{seg("zone", "zone1", "rack", "rackA")}},
		{"multiple expressions, 1 single value, 1 multiple values", []v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackA,rackB")},
			[]map[string]string{seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone1", "rack", "rackB")}},
		{"multiple expressions, both multiple values", []v1.TopologySelectorTerm{allowed("zone", "zone1,zone2", "rack", "rackA,rackB")},
			[]map[string]string{seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackA"),
				seg("zone", "zone1", "rack", "rackB"), seg("zone", "zone2", "rack", "rackB")}},
		{"multiple terms: single expression, single values", []v1.TopologySelectorTerm{allowed("zone", "zone1"), allowed("rack", "rackA")},
			[]map[string]string{seg("rack", "rackA"), seg("zone", "zone1")}},
		{"multiple terms: single expression, overlapping keys, distinct values",
			[]v1.TopologySelectorTerm{allowed("zone", "zone1"), allowed("zone", "zone2")},
			[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2")}},
		{"multiple terms: single expression, overlapping keys, overlapping values",
			[]v1.TopologySelectorTerm{allowed("zone", "zone1,zone2"), allowed("zone", "zone2,zone3")},
			[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone3")}},
		{"multiple terms: 1 single expression, 1 multiple expressions; a subset duplicate is kept",
			[]v1.TopologySelectorTerm{allowed("zone", "zone1"), allowed("zone", "zone1,zone2", "rack", "rackA,rackB")},
			[]map[string]string{seg("zone", "zone1"), seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackA"),
				seg("zone", "zone1", "rack", "rackB"), seg("zone", "zone2", "rack", "rackB")}},
		{"multiple terms: both multiple expressions; an identical duplicate is removed",
			[]v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackB"), allowed("zone", "zone1,zone2", "rack", "rackA,rackB")},
			[]map[string]string{seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackA"),
				seg("zone", "zone1", "rack", "rackB"), seg("zone", "zone2", "rack", "rackB")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forAllFlags(t, func(t *testing.T, strict, immediate bool) {
				got, err := Requirement(cluster{}.input(tt.allowed, false, "testpvc", strict, immediate))
				if err != nil {
					t.Fatal(err)
				}
				if !equalSegments(segments(got.GetRequisite()), tt.want) {
					t.Errorf("requisite = %v, want %v", segments(got.GetRequisite()), tt.want)
				}
			})
		})
	}
}
