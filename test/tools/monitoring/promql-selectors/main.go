// Command promql-selectors prints the metric names, and the labels each
// is selected or grouped by, of the PromQL expressions in the files it is
// given: a PrometheusRule (spec.groups[].rules[].expr) or a Grafana
// dashboard (panels[].targets[].expr, also in rows). The e2e suite runs it
// to check that every metric and label the rules and the dashboard use is
// in the components' /metrics. It parses with Prometheus' own parser.
//
// Output: one line per metric, "name label,label,...", sorted; an
// expression that does not parse is an error naming its file.
package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

func main() {
	used := map[string]map[string]bool{}
	for _, path := range os.Args[1:] {
		exprs, err := expressions(path)
		if err != nil {
			fail(err)
		}
		for _, e := range exprs {
			if err := collect(e, used); err != nil {
				fail(fmt.Errorf("%s: %q: %w", path, e, err))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		fmt.Println(name, strings.Join(slices.Sorted(maps.Keys(used[name])), ","))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "promql-selectors:", err)
	os.Exit(1)
}

// expressions returns the PromQL expressions of a PrometheusRule (YAML) or
// a Grafana dashboard (JSON), with Grafana's $__rate_interval and
// $__interval variables replaced by a duration.
func expressions(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if filepath.Ext(path) == ".json" {
		var d dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var out []string
		var walk func([]panel)
		walk = func(ps []panel) {
			for _, p := range ps {
				for _, t := range p.Targets {
					e := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h").Replace(t.Expr)
					out = append(out, e)
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
		return out, nil
	}
	var r rule
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, g := range r.Spec.Groups {
		for _, rl := range g.Rules {
			out = append(out, rl.Expr)
		}
	}
	return out, nil
}

type dashboard struct {
	Panels []panel `json:"panels"`
}

type panel struct {
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

type rule struct {
	Spec struct {
		Groups []struct {
			Rules []struct {
				Expr string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// collect adds the metrics expr selects, with the labels it matches them
// on and groups them by, to used.
func collect(expr string, used map[string]map[string]bool) error {
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return err
	}
	parser.Inspect(node, func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			name := n.Name
			var matched []string
			for _, m := range n.LabelMatchers {
				if m.Name == labels.MetricName {
					if name == "" && m.Type == labels.MatchEqual {
						name = m.Value
					}
					continue
				}
				matched = append(matched, m.Name)
			}
			if name == "" {
				return nil
			}
			if used[name] == nil {
				used[name] = map[string]bool{}
			}
			for _, l := range matched {
				used[name][l] = true
			}
			// Grouping labels of the aggregations above this selector.
			for _, p := range path {
				if a, ok := p.(*parser.AggregateExpr); ok && !a.Without {
					for _, l := range a.Grouping {
						used[name][l] = true
					}
				}
			}
		}
		return nil
	})
	return nil
}
