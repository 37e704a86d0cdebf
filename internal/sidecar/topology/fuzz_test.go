package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// fuzzLabels parses "k=v,k2=v2;k=v3" into one label map per node.
func fuzzLabels(s string) []map[string]string {
	var nodes []map[string]string
	for _, node := range strings.Split(s, ";") {
		labels := map[string]string{}
		for _, kv := range strings.Split(node, ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
		nodes = append(nodes, labels)
	}
	return nodes
}

// fuzzTerms parses "k=v1|v2,k2=v3;k=v4" into allowedTopologies, one
// selector term per ";"-separated part; "" is none.
func fuzzTerms(s string) []v1.TopologySelectorTerm {
	if s == "" {
		return nil
	}
	var terms []v1.TopologySelectorTerm
	for _, part := range strings.Split(s, ";") {
		var term v1.TopologySelectorTerm
		for _, expr := range strings.Split(part, ",") {
			k, values, _ := strings.Cut(expr, "=")
			term.MatchLabelExpressions = append(term.MatchLabelExpressions,
				v1.TopologySelectorLabelRequirement{Key: k, Values: strings.Split(values, "|")})
		}
		terms = append(terms, term)
	}
	return terms
}

// fuzzNodes are nodes with labels, the driver registered on each either
// keys (comma-separated), the first of them, or nothing, in turn.
func fuzzNodes(keys, labels string) []Node {
	all := strings.Split(keys, ",")
	var nodes []Node
	for i, l := range fuzzLabels(labels) {
		nodes = append(nodes, Node{Name: fmt.Sprintf("node-%d", i), Labels: l, Keys: [][]string{all, all[:1], nil}[i%3]})
	}
	return nodes
}

// FuzzRequirement checks that Requirement and NodeAffinity never panic on
// any StorageClass allowedTopologies, node labels and topology keys, and
// that a requirement is well formed: requisite segments sorted and
// distinct, preferred ones the same segments, and with a selected node its
// segment preferred first.
func FuzzRequirement(f *testing.F) {
	// allowed, keys (comma-separated), node labels, selected node's labels,
	// claim name, selected, strict, immediate.
	f.Add("", "zone", "zone=a;zone=b", "zone=a", "data-web-0", true, false, false)
	f.Add("zone=a|b", "zone", "zone=a;zone=b", "zone=a", "data-web-1", true, true, false)
	f.Add("zone=c", "zone", "zone=a", "zone=a", "c", true, true, false)
	f.Add("", "zone,rack", "zone=a,rack=1;zone=a", "zone=a,rack=1", "c", false, false, true)
	f.Add("", "", "", "", "", false, false, true)
	f.Add("=", ",", "=;=", "=", "-", true, false, true)
	f.Add("zone=", "zone,zone", "zone=a", "zone=a", "x-y-4294967296", true, false, false)
	f.Add("zone=a|a|a;zone=a", "zone", "zone=a", "zone=a", "x--1", false, false, false)
	f.Add("zöne=ä", "zöne", "zöne=ä", "zöne=ä", "ünï-0", true, false, false)
	f.Fuzz(func(t *testing.T, allowed, keys, nodeLabels, selectedLabels, claimName string, selected, strict, immediate bool) {
		in := Input{
			AllowedTopologies: fuzzTerms(allowed),
			ClaimName:         claimName,
			Nodes:             fuzzNodes(keys, nodeLabels),
			Strict:            strict,
			Immediate:         immediate,
		}
		if selected {
			in.Selected = &SelectedNode{Name: "node", Keys: strings.Split(keys, ","), Labels: fuzzLabels(selectedLabels)[0]}
		}
		req, err := Requirement(in)
		if err != nil || req == nil {
			return
		}
		requisite, preferred := req.GetRequisite(), req.GetPreferred()
		if len(requisite) == 0 || len(preferred) != len(requisite) {
			t.Fatalf("requisite %v, preferred %v: want as many, at least one", requisite, preferred)
		}
		req2 := segments(requisite)
		for i := 1; i < len(req2); i++ {
			if maps.Equal(req2[i-1], req2[i]) {
				t.Fatalf("requisite %v repeats a segment", requisite)
			}
		}
		for _, p := range segments(preferred) {
			if !slices.ContainsFunc(req2, func(r map[string]string) bool { return maps.Equal(r, p) }) {
				t.Fatalf("preferred %v is not in requisite %v", p, requisite)
			}
		}
		if a := NodeAffinity(requisite); a != nil && len(a.Required.NodeSelectorTerms) > len(requisite) {
			t.Fatalf("node affinity %v has more terms than requisite %v", a, requisite)
		}
	})
}
