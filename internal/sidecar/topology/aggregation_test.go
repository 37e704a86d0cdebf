package topology

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestTopologyAggregation(t *testing.T) {
	zoneOnly := keys("zone")
	tests := []struct {
		name          string
		cluster       cluster
		selectFirst   bool
		want          []map[string]string
		wantStrict    []map[string]string // if different
		wantErr       bool
		wantErrStrict bool // the error under strict topology, if different
	}{
		{name: "same keys and values across the cluster",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone1"), seg("zone", "zone1")}, sameKeys(3, zoneOnly)},
			want:    []map[string]string{seg("zone", "zone1")}},
		{name: "selected node; same keys and values across the cluster", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone1"), seg("zone", "zone1")}, sameKeys(3, zoneOnly)},
			want:    []map[string]string{seg("zone", "zone1")}},
		{name: "different values across the cluster",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, sameKeys(3, zoneOnly)},
			want:    []map[string]string{seg("zone", "zone1"), seg("zone", "zone2")}},
		{name: "selected node; different values across the cluster", selectFirst: true,
			cluster:    cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, sameKeys(3, zoneOnly)},
			want:       []map[string]string{seg("zone", "zone1"), seg("zone", "zone2")},
			wantStrict: []map[string]string{seg("zone", "zone1")}},
		{name: "selected node: nodes with more keys count by the selected node's keys", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone1", "rack", "rackA")},
				[][]string{zoneOnly, keys("zone", "rack"), keys("zone", "rack")}},
			want: []map[string]string{seg("zone", "zone1")}},
		{name: "random node: no nodes", cluster: cluster{nil, sameKeys(3, zoneOnly)}, wantErr: true},
		{name: "random node: no node has the labels",
			cluster: cluster{[]map[string]string{seg("foo", "bar")}, sameKeys(3, zoneOnly)}, wantErr: true},
		{name: "random node: the driver is registered on no node",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, nil}, wantErr: true},
		{name: "random node: the driver reports no keys",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, sameKeys(3, nil)}, wantErr: true},
		{name: "random node: one node has been upgraded",
			cluster: cluster{[]map[string]string{seg("another", "zone1"), seg("another", "zone2"), seg("zone", "zone3")}, [][]string{nil, nil, zoneOnly}},
			want:    []map[string]string{seg("zone", "zone3")}},
		// Since v6.4.0 (#1582), labels alone do not put a node into the
		// aggregated topology: the driver must have registered the keys on
		// it. The cases below are v6.4.0's.
		{name: "random node: labeled nodes whose driver reported no topology keys are not included",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone3")}, [][]string{nil, nil, zoneOnly}},
			want:    []map[string]string{seg("zone", "zone3")}},
		{name: "random node: labeled node without the driver registered is not included",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2")}, [][]string{zoneOnly}},
			want:    []map[string]string{seg("zone", "zone1")}},
		{name: "different keys across cluster: each key set is aggregated on its own",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone1", "rack", "rackA")},
				[][]string{zoneOnly, keys("zone", "rack"), keys("zone", "rack")}},
			want: []map[string]string{seg("zone", "zone1"), seg("rack", "rackA", "zone", "zone1")}},
		{name: "different keys across cluster: node reporting fewer keys is not dropped",
			cluster: cluster{[]map[string]string{seg("region", "us-east"), seg("region", "us-west", "zone", "zone1"), seg("region", "us-west", "zone", "zone2")},
				[][]string{keys("region"), keys("region", "zone"), keys("region", "zone")}},
			want: []map[string]string{seg("region", "us-east"), seg("region", "us-west"),
				seg("region", "us-west", "zone", "zone1"), seg("region", "us-west", "zone", "zone2")}},
		{name: "disjoint keys across cluster",
			cluster: cluster{[]map[string]string{seg("region", "us-east"), seg("zone", "zone1")}, [][]string{keys("region"), zoneOnly}},
			want:    []map[string]string{seg("region", "us-east"), seg("zone", "zone1")}},
		{name: "disjoint keys across cluster, both labels on every node",
			cluster: cluster{[]map[string]string{seg("region", "us-east", "zone", "zone1"), seg("region", "us-west", "zone", "zone2")},
				[][]string{keys("region"), zoneOnly}},
			want: []map[string]string{seg("region", "us-east"), seg("zone", "zone2")}},
		{name: "unregistered node with labels for multiple key sets",
			cluster: cluster{[]map[string]string{seg("region", "us-east"), seg("zone", "zone1"), seg("region", "us-west", "zone", "zone2")},
				[][]string{keys("region"), zoneOnly, nil}},
			want: []map[string]string{seg("region", "us-east"), seg("zone", "zone1")}},
		{name: "finer registration contributes to the coarser key set",
			cluster: cluster{[]map[string]string{seg("region", "us-east", "zone", "zone1"), seg("region", "us-east", "zone", "zone2")},
				[][]string{keys("region"), keys("region", "zone")}},
			want: []map[string]string{seg("region", "us-east"), seg("region", "us-east", "zone", "zone2")}},
		{name: "selected node: labeled node whose driver reported no topology keys is not included", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone3")}, [][]string{zoneOnly, nil, zoneOnly}},
			want:    []map[string]string{seg("zone", "zone1"), seg("zone", "zone3")}, wantStrict: []map[string]string{seg("zone", "zone1")}},
		{name: "selected node: labeled node without the driver registered is not included", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2")}, [][]string{zoneOnly}},
			want:    []map[string]string{seg("zone", "zone1")}},
		{name: "selected node: node that registered different keys is not included", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("region", "us-east"), seg("region", "us-west", "zone", "zone1"), seg("region", "us-central", "zone", "zone2")},
				[][]string{keys("region"), zoneOnly, keys("region", "zone")}},
			want:       []map[string]string{seg("region", "us-central"), seg("region", "us-east")},
			wantStrict: []map[string]string{seg("region", "us-east")}},
		{name: "selected node: it lacks the labels", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("foo", "bar")}, sameKeys(3, zoneOnly)}, wantErr: true},
		{name: "selected node: no CSINode", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, nil}, wantErr: true},
		{name: "selected node: the driver reports no keys", selectFirst: true,
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone2")}, sameKeys(3, nil)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forAllFlags(t, func(t *testing.T, strict, immediate bool) {
				got, err := Requirement(tt.cluster.input(nil, tt.selectFirst, "testpvc", strict, immediate))
				want, wantErr := tt.want, tt.wantErr
				if strict && tt.wantStrict != nil {
					want = tt.wantStrict
				}
				if !immediate && !tt.selectFirst {
					want, wantErr = nil, false // no requirement at all
				}
				if (err != nil) != wantErr {
					t.Fatalf("Requirement() error = %v, wantErr %v", err, wantErr)
				}
				if want == nil && got != nil {
					t.Fatalf("Requirement() = %v, want none", got)
				}
				if !equalSegments(segments(got.GetRequisite()), want) {
					t.Errorf("requisite = %v, want %v", segments(got.GetRequisite()), want)
				}
			})
		})
	}
}

func TestPreferredTopologies(t *testing.T) {
	zoneRack := sameKeys(3, keys("zone", "rack"))
	twoByTwo := []v1.TopologySelectorTerm{allowed("zone", "zone1,zone2", "rack", "rackA,rackB")}
	nodes := []map[string]string{seg("zone", "zone2", "rack", "rackA"), seg("zone", "zone1", "rack", "rackA"), seg("zone", "zone1", "rack", "rackB")}
	tests := []struct {
		name       string
		allowed    []v1.TopologySelectorTerm
		cluster    cluster
		want       []map[string]string
		wantStrict []map[string]string
		wantErr    bool
	}{
		{name: "allowedTopologies, rotated to the selected node's segment", allowed: twoByTwo, cluster: cluster{nodes, zoneRack},
			want: []map[string]string{seg("zone", "zone2", "rack", "rackA"), seg("zone", "zone1", "rack", "rackB"),
				seg("zone", "zone2", "rack", "rackB"), seg("zone", "zone1", "rack", "rackA")},
			wantStrict: []map[string]string{seg("zone", "zone2", "rack", "rackA")}},
		{name: "allowedTopologies: the selected node has no CSINode", allowed: twoByTwo, cluster: cluster{nodes, nil}, wantErr: true},
		{name: "allowedTopologies: the selected node lacks a key", allowed: twoByTwo,
			cluster: cluster{nodes, sameKeys(3, keys("foo", "rack"))}, wantErr: true},
		{name: "aggregated topology, rotated to the selected node's segment", cluster: cluster{nodes, zoneRack},
			want: []map[string]string{seg("zone", "zone2", "rack", "rackA"), seg("zone", "zone1", "rack", "rackB"),
				seg("zone", "zone1", "rack", "rackA")},
			wantStrict: []map[string]string{seg("zone", "zone2", "rack", "rackA")}},
		{name: "aggregation without topology information",
			cluster: cluster{[]map[string]string{{}, {}, {}}, [][]string{nil, nil, nil}}, wantErr: true},
		{name: "the selected node is outside allowedTopologies", allowed: []v1.TopologySelectorTerm{allowed("zone", "zone1")},
			cluster: cluster{[]map[string]string{seg("zone", "zone2"), seg("zone", "zone1"), seg("zone", "zone1")}, sameKeys(3, keys("zone"))},
			wantErr: true},
		{name: "allowedTopologies that name fewer keys than the selected node has",
			allowed: []v1.TopologySelectorTerm{allowed("disk", "ssd", "zone", "zone1")},
			cluster: cluster{[]map[string]string{seg("zone", "zone1", "rack", "rack1", "disk", "ssd"), seg("zone", "zone2", "rack", "rack2", "disk", "ssd"),
				seg("zone", "zone2", "rack", "rack1", "disk", "nvme")}, sameKeys(3, keys("zone", "rack", "disk"))},
			want:       []map[string]string{seg("disk", "ssd", "zone", "zone1")},
			wantStrict: []map[string]string{seg("disk", "ssd", "rack", "rack1", "zone", "zone1")}},
		{name: "allowedTopologies that do not include the selected node's segment",
			allowed: []v1.TopologySelectorTerm{allowed("zone", "zone1")},
			cluster: cluster{[]map[string]string{seg("zone", "zone10", "rack", "rack1"), seg("zone", "zone11", "rack", "rack2"),
				seg("zone", "zone12", "rack", "rack1")}, sameKeys(3, keys("zone", "rack"))},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forAllFlags(t, func(t *testing.T, strict, immediate bool) {
				got, err := Requirement(tt.cluster.input(tt.allowed, true, "testpvc", strict, immediate))
				if (err != nil) != tt.wantErr {
					t.Fatalf("Requirement() error = %v, wantErr %v", err, tt.wantErr)
				}
				want := tt.want
				if strict && tt.wantStrict != nil {
					want = tt.wantStrict
				}
				if !equalSegments(segments(got.GetPreferred()), want) {
					t.Errorf("preferred = %v, want %v", segments(got.GetPreferred()), want)
				}
			})
		})
	}
}

// The cases of v6.4.0's TestDistinctTopologyKeySets: the key sets the
// driver registered, each sorted, without repeats, in order.
func TestDistinctKeySets(t *testing.T) {
	regionZone, zoneRegion := keys("region", "zone"), keys("zone", "region")
	tests := []struct {
		name       string
		registered [][]string
		want       [][]string
	}{
		{name: "no CSINodes"},
		{name: "driver has not registered any topology key", registered: [][]string{nil, nil}},
		{name: "same key set on every node", registered: [][]string{regionZone, regionZone}, want: [][]string{regionZone}},
		{name: "same key set reported in a different order", registered: [][]string{regionZone, zoneRegion}, want: [][]string{regionZone}},
		{name: "different key sets across cluster", registered: [][]string{regionZone, keys("region"), regionZone},
			want: [][]string{keys("region"), regionZone}},
		{name: "nodes without registered keys are skipped", registered: [][]string{nil, keys("zone")}, want: [][]string{keys("zone")}},
		{name: "disjoint key sets", registered: [][]string{keys("zone"), keys("region")}, want: [][]string{keys("region"), keys("zone")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []Node
			for _, k := range tt.registered {
				nodes = append(nodes, Node{Keys: k})
			}
			if got := distinctKeySets(nodes); !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("distinctKeySets = %v, want %v", got, tt.want)
			}
		})
	}
}
