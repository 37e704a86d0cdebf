package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Review of issue 25 (topology as upstream v6.4.0, #1582): inputs at the
// edges of the key-set rules, each with the result the upstream
// csi-provisioner v6.4.0's GenerateAccessibilityRequirements gives for the
// same CSINodes, Nodes, class and claim on its first call (its
// pkg/controller/topology.go). The expected values were checked against
// v6.4.0's code run on the same objects. Requisite segments are compared
// in order: upstream sorts them (topologyTerm.compare) before sending.

// review25Case is one input and upstream's answer.
type review25Case struct {
	name        string
	cluster     cluster
	allowed     []v1.TopologySelectorTerm
	selectFirst bool
	claim       string
	strict      bool
	immediate   bool
	// wantRequisite and wantPreferred are nil when no requirement is sent.
	wantRequisite []map[string]string
	wantPreferred []map[string]string
	// wantErr is upstream's error text, whole; empty for no error.
	wantErr string
}

// review25Cases are the cases; see TestReview25MatchesUpstream.
func review25Cases() []review25Case {
	zone, zoneRack, rackZone := keys("zone"), keys("zone", "rack"), keys("rack", "zone")
	z1, z2 := seg("zone", "zone1"), seg("zone", "zone2")
	z1A, z2B := seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone2", "rack", "rackB")
	return []review25Case{
		{name: "keys registered in another order are one key set", immediate: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1A, z2B}, [][]string{zoneRack, rackZone}},
			wantRequisite: []map[string]string{z1A, z2B}, wantPreferred: []map[string]string{z1A, z2B}},
		{name: "a CSINode without a Node object counts for nothing", immediate: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1, nil}, [][]string{zone, zone}},
			wantRequisite: []map[string]string{z1}, wantPreferred: []map[string]string{z1}},
		{name: "a Node without labels counts for nothing", immediate: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1, {}}, [][]string{zone, zone}},
			wantRequisite: []map[string]string{z1}, wantPreferred: []map[string]string{z1}},
		{name: "a selected node whose CSINode lists keys its Node lacks a label of", selectFirst: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{seg("rack", "rackA")}, [][]string{zoneRack}},
			wantErr: "topology labels from selected node map[com.example.csi/rack:rackA] does not match topology keys from CSINode [com.example.csi/zone com.example.csi/rack]"},
		{name: "a selected node without a Node object", selectFirst: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{nil, z1}, [][]string{zone, zone}},
			wantErr: "topology labels from selected node map[] does not match topology keys from CSINode [com.example.csi/zone]"},
		{name: "a selected node whose driver registered no keys", selectFirst: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{z1, z2}, [][]string{nil, zone}},
			wantErr: "no topology key found for node node-0"},
		{name: "strict topology with mixed key sets: the selected node's segment alone", selectFirst: true, strict: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1A, z2B, z1A}, [][]string{zone, zoneRack, zoneRack}},
			wantRequisite: []map[string]string{z1}, wantPreferred: []map[string]string{z1}},
		{name: "mixed key sets with a selected node: the nodes registering a finer set count under the selected node's keys", selectFirst: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z2B, z1A, z1}, [][]string{zone, zoneRack, zone}},
			wantRequisite: []map[string]string{z1, z2}, wantPreferred: []map[string]string{z2, z1}},
		{name: "mixed key sets with a selected node registering the finer set: the coarser nodes do not count", selectFirst: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z2B, z1A, z1A}, [][]string{zoneRack, zone, zoneRack}},
			wantRequisite: []map[string]string{z1A, z2B}, wantPreferred: []map[string]string{z2B, z1A}},
		{name: "strict topology: allowedTopologies naming a key the selected node did not register", selectFirst: true, strict: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{z1A}, [][]string{zone}},
			allowed: []v1.TopologySelectorTerm{allowed("rack", "rackA")},
			wantErr: `selected node '"node-0"' topology '[{com.example.csi/zone zone1}]' is not in allowed topologies: [[{com.example.csi/rack rackA}]]`},
		{name: "allowedTopologies of mixed key sets: the selected node's first matching segment is preferred", selectFirst: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1A}, [][]string{zoneRack}},
			allowed:       []v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackA,rackB"), allowed("zone", "zone1,zone2")},
			wantRequisite: []map[string]string{z1, z2, z1A, seg("zone", "zone1", "rack", "rackB")},
			wantPreferred: []map[string]string{z1, z2, z1A, seg("zone", "zone1", "rack", "rackB")}},
		{name: "allowedTopologies of mixed key sets under strict topology", selectFirst: true, strict: true, claim: "testpvc",
			cluster:       cluster{[]map[string]string{z1A}, [][]string{zoneRack}},
			allowed:       []v1.TopologySelectorTerm{allowed("rack", "rackB"), allowed("zone", "zone1")},
			wantRequisite: []map[string]string{z1A}, wantPreferred: []map[string]string{z1A}},
		{name: "allowedTopologies of mixed key sets spread by the StatefulSet index", immediate: true, claim: "data-web-2",
			allowed:       []v1.TopologySelectorTerm{allowed("zone", "zone1", "rack", "rackA"), allowed("zone", "zone1,zone2")},
			wantRequisite: []map[string]string{z1, z2, z1A}, wantPreferred: []map[string]string{z1A, z1, z2}},
		{name: "the selected node is in no allowed segment (non-strict)", selectFirst: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{z2B}, [][]string{zoneRack}},
			allowed: []v1.TopologySelectorTerm{allowed("zone", "zone1")},
			wantErr: `topology [{com.example.csi/rack rackB} {com.example.csi/zone zone2}] from selected node "node-0" is not in requisite: [[{com.example.csi/zone zone1}]]`},
		{name: "no node has the labels of any registered key set", immediate: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{seg("region", "r1"), seg("region", "r1")}, [][]string{zone, zoneRack}},
			wantErr: "topologyKeys [[com.example.csi/rack com.example.csi/zone] [com.example.csi/zone]] were not found on any nodes"},
		{name: "the driver registered no keys anywhere", immediate: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{z1}, [][]string{nil}},
			wantErr: "no available topology found"},
		{name: "no node has the selected node's keys but itself lacks them", selectFirst: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{{}}, [][]string{zone}},
			wantErr: "topology labels from selected node map[] does not match topology keys from CSINode [com.example.csi/zone]"},
		{name: "without --immediate-topology an immediately bound claim without allowedTopologies has no requirement", claim: "testpvc",
			cluster: cluster{[]map[string]string{z1, z2}, [][]string{zone, zone}}},
		{name: "allowedTopologies of empty terms is no requirement", immediate: true, claim: "testpvc",
			cluster: cluster{[]map[string]string{z1}, [][]string{zone}},
			allowed: []v1.TopologySelectorTerm{{}}},
	}
}

// TestReview25MatchesUpstream checks each case against upstream v6.4.0's
// answer: the same requisite segments in the same order, the same
// preferred order, and the same error text (the claim's events show it).
func TestReview25MatchesUpstream(t *testing.T) {
	for _, tc := range review25Cases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Requirement(tc.cluster.input(tc.allowed, tc.selectFirst, tc.claim, tc.strict, tc.immediate))
			if tc.wantErr != "" || err != nil {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if tc.wantRequisite == nil {
				if got != nil {
					t.Fatalf("requirement = %v, want none", got)
				}
				return
			}
			if !equalSegments(segments(got.GetRequisite()), tc.wantRequisite) {
				t.Errorf("requisite = %v, want %v", segments(got.GetRequisite()), tc.wantRequisite)
			}
			if !equalSegments(segments(got.GetPreferred()), tc.wantPreferred) {
				t.Errorf("preferred = %v, want %v", segments(got.GetPreferred()), tc.wantPreferred)
			}
		})
	}
}

// A tenant can name its claim but not reach another segment with it: for
// any claim name, the requisite segments are the same and the preferred
// ones are a rotation of them (upstream's getPVCNameHashAndIndexOffset
// spreads, it does not restrict).
func TestReview25ClaimNameOnlyRotatesPreferred(t *testing.T) {
	c := cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2", "rack", "rackA"), seg("region", "r1"), seg("zone", "zone3")},
		[][]string{keys("zone"), keys("zone", "rack"), keys("region"), keys("zone")}}
	base, err := Requirement(c.input(nil, false, "testpvc", false, true))
	if err != nil {
		t.Fatal(err)
	}
	want := segments(base.GetRequisite())
	names := []string{"", "-", "-1", "a-", "a--1", "data-web-4294967295", "data-web-4294967296", "x-00000000000000000001",
		strings.Repeat("a-", 300) + "7", "data-web-1\x00", "data-\u00e9-3", "../../zone1", "data-web-+1", "data-web--1"}
	for i := range 200 {
		names = append(names, fmt.Sprintf("claim-%d-%d", i*7919, i))
	}
	for _, name := range names {
		got, err := Requirement(c.input(nil, false, name, false, true))
		if err != nil {
			t.Fatalf("claim %q: %v", name, err)
		}
		if !equalSegments(segments(got.GetRequisite()), want) {
			t.Fatalf("claim %q: requisite %v, want %v", name, segments(got.GetRequisite()), want)
		}
		if !isRotation(segments(got.GetPreferred()), want) {
			t.Fatalf("claim %q: preferred %v is not a rotation of %v", name, segments(got.GetPreferred()), want)
		}
	}
}

func isRotation(got, of []map[string]string) bool {
	if len(got) != len(of) {
		return false
	}
	for i := range of {
		if equalSegments(got, append(slices.Clone(of[i:]), of[:i]...)) {
			return true
		}
	}
	return len(of) == 0
}

// perNodeCluster is a cluster of n nodes of a driver whose topology is the
// node itself (csi-driver-host-path's topology.hostpath.csi/node, TopoLVM,
// local-path drivers), plus, when sets > 1, nodes registering coarser
// key sets too.
func perNodeCluster(n, sets int) Input {
	in := Input{ClaimName: "data-web-0", Immediate: true}
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		labels := map[string]string{"topology.hostpath.csi/node": name, zoneKey: fmt.Sprintf("zone%d", i%3),
			rackKey: fmt.Sprintf("rack%d", i%17), diskKey: fmt.Sprintf("disk%d", i%2)}
		registered := [][]string{{"topology.hostpath.csi/node"}, {zoneKey}, {zoneKey, rackKey}, {zoneKey, rackKey, diskKey}}[i%sets]
		in.Nodes = append(in.Nodes, Node{Name: name, Keys: registered, Labels: labels})
	}
	return in
}

// BenchmarkReview25Requirement is the cost of one CreateVolume's
// requirement in a large cluster: immediate binding aggregating every key
// set, and a selected node aggregating its keys over the cluster. At 5,000
// per-node segments (keysets=1) this took 1.7 s (immediate) and 2.3 s
// (selected) per call when written, nearly all in toCSI's search for a
// repeated segment map (quadratic); upstream v6.4.0's
// GenerateAccessibilityRequirements over listers of the same objects took
// 17 ms and 13 ms on the same machine (its toCSITopology is linear).
func BenchmarkReview25Requirement(b *testing.B) {
	for _, n := range []int{500, 1000, 5000} {
		for _, sets := range []int{1, 4} {
			in := perNodeCluster(n, sets)
			b.Run(fmt.Sprintf("nodes=%d,keysets=%d,immediate", n, sets), func(b *testing.B) {
				for b.Loop() {
					if _, err := Requirement(in); err != nil {
						b.Fatal(err)
					}
				}
			})
			selected := in
			selected.Selected = &SelectedNode{Name: in.Nodes[0].Name, Keys: in.Nodes[0].Keys, Labels: in.Nodes[0].Labels}
			b.Run(fmt.Sprintf("nodes=%d,keysets=%d,selected", n, sets), func(b *testing.B) {
				for b.Loop() {
					if _, err := Requirement(selected); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestReview25PerNodeSegmentsAreAllOffered checks the large-cluster input
// of the benchmark: every node's own segment is requisite, as upstream
// sends them, and the selected node's comes first in preferred.
func TestReview25PerNodeSegmentsAreAllOffered(t *testing.T) {
	in := perNodeCluster(300, 1)
	in.Selected = &SelectedNode{Name: "node-42", Keys: in.Nodes[42].Keys, Labels: in.Nodes[42].Labels}
	got, err := Requirement(in)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.GetRequisite()); n != 300 {
		t.Errorf("%d requisite segments, want 300", n)
	}
	want := map[string]string{"topology.hostpath.csi/node": "node-42"}
	if first := got.GetPreferred()[0].GetSegments(); !maps.Equal(first, want) {
		t.Errorf("first preferred segment %v, want %v", first, want)
	}
}
