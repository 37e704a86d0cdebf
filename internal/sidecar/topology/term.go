package topology

import (
	"maps"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

// segment is one topology key and its value.
type segment struct {
	Key, Value string
}

// term is a topology segment in the CSI sense: key-value pairs that all
// hold, sorted by key (then value).
type term []segment

// termOf returns the term of labels for keys; ok is false when a key is
// missing.
func termOf(labels map[string]string, keys []string) (t term, ok bool) {
	for _, k := range keys {
		v, found := labels[k]
		if !found {
			return nil, false
		}
		t = append(t, segment{k, v})
	}
	t.sort()
	return slices.Compact(t), true // a key listed twice is one pair
}

func (t term) sort() {
	slices.SortFunc(t, func(a, b segment) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// compare orders terms: shorter first, then by their pairs.
func compare(a, b term) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	for i := range a {
		if c := strings.Compare(a[i].Key, b[i].Key); c != 0 {
			return c
		}
		if c := strings.Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return 0
}

// subsetOf reports whether every pair of t is in other (both sorted).
func (t term) subsetOf(other term) bool {
	if len(t) == 0 {
		return true
	}
	j := 0
	for _, s := range other {
		if s.Key != t[j].Key {
			continue
		}
		if s.Value != t[j].Value {
			return false
		}
		if j++; j == len(t) {
			return true
		}
	}
	return false
}

// flatten turns allowedTopologies into terms: each selector term is the
// product of its expressions' values, e.g. zone in {1,2} and rack in {A}
// gives {zone=1,rack=A} and {zone=2,rack=A}. As upstream, an expression
// without values contributes nothing, and the terms are neither sorted nor
// deduplicated here.
func flatten(allowed []v1.TopologySelectorTerm) []term {
	var out []term
	for _, selector := range allowed {
		var product []term
		for _, expr := range selector.MatchLabelExpressions {
			var next []term
			for _, value := range expr.Values {
				if len(product) == 0 {
					next = append(next, term{{expr.Key, value}})
					continue
				}
				for _, t := range product {
					next = append(next, append(slices.Clone(t), segment{expr.Key, value}))
				}
			}
			product = next
		}
		out = append(out, product...)
	}
	for i, t := range out {
		t.sort()
		out[i] = slices.Compact(t) // an expression repeated is one pair
	}
	return out
}

// toCSI turns terms into CSI topologies, leaving out empty terms and terms
// whose segments repeat an earlier one's: a term naming a key twice with
// two values (an allowedTopologies term the API server would refuse) has
// the last value, as upstream's maps have, and may then equal another term.
func toCSI(terms []term) []*csi.Topology {
	out := []*csi.Topology{}
	seen := make(map[string]struct{}, len(terms))
	for _, t := range terms {
		if len(t) == 0 {
			continue
		}
		segments := make(map[string]string, len(t))
		for _, s := range t {
			segments[s.Key] = s.Value
		}
		// One lookup per term, so that a cluster with a segment per node
		// (a driver whose topology key is the node) costs linear time.
		key := segmentsKey(segments)
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		out = append(out, &csi.Topology{Segments: segments})
	}
	return out
}

// segmentsKey identifies a segment map: its pairs in key order. Keys and
// values are label keys and values, which cannot contain a NUL byte.
func segmentsKey(segments map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(segments)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(segments[k])
		b.WriteByte(0)
	}
	return b.String()
}
