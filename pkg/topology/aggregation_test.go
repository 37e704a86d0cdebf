package topology

import (
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
		{name: "random node: labeled nodes count without the driver's keys in their CSINode",
			cluster: cluster{[]map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone3")}, [][]string{nil, nil, zoneOnly}},
			want:    []map[string]string{seg("zone", "zone1"), seg("zone", "zone2"), seg("zone", "zone3")}},
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
