//go:build monitoring

// Package monitoring checks deploy/overlays/monitoring with Prometheus' own
// tools (`make test-monitoring`, which builds them): the PrometheusRule's
// expressions parse (promtool check rules), each alert stays silent, fires
// with its labels and rendered annotations, and resolves on recorded series
// (promtool test rules, rules_test.yaml), each has a runbook in
// docs/monitoring.md, and every dashboard expression parses. That the
// metrics they name exist is checked against the components' /metrics in
// the e2e suite (test/e2e, TestE2EMonitoring).
package monitoring

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

const (
	overlay  = "../../deploy/overlays/monitoring"
	runbooks = "../../docs/monitoring.md"
)

// ruleTests are promtool's test files: the alerts' own cases, and those of
// the adversarial review of issue 26 (situations where an alert once
// fired wrongly or never).
var ruleTests = []string{"rules_test.yaml", "review26_rules_test.yaml"}

// tool is the path of a binary `make tools` builds.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("../../.cache/bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: run `make test-monitoring`, which builds it: %v", name, err)
	}
	return path
}

func loadRule(t *testing.T) *monitoringv1.PrometheusRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(overlay, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(data, &rule); err != nil {
		t.Fatal(err)
	}
	return &rule
}

// rulesDir writes the PrometheusRule's groups as a Prometheus rule file,
// rules.yaml, next to copies of the ruleTests, and returns the directory.
func rulesDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	groups, err := yaml.Marshal(loadRule(t).Spec)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"rules.yaml": groups}
	for _, name := range ruleTests {
		if files[name], err = os.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool(t, "promtool"), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRulesParse(t *testing.T) {
	promtool(t, rulesDir(t), "check", "rules", "rules.yaml")
}

func TestAlertsFireAndResolve(t *testing.T) {
	promtool(t, rulesDir(t), append([]string{"test", "rules"}, ruleTests...)...)
}

// ruleTest is what this test reads of rules_test.yaml.
type ruleTest struct {
	Tests []struct {
		AlertRuleTest []struct {
			AlertName string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryAlertIsDocumentedAndTested: a severity, a summary, a
// description, a runbook_url to its section of docs/monitoring.md (which
// exists), and a test that shows it both silent and firing.
func TestEveryAlertIsDocumentedAndTested(t *testing.T) {
	docs, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, name := range ruleTests {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var tests ruleTest
		// Not strict: the files have fields this test does not read.
		if err := yaml.Unmarshal(data, &tests); err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.AlertName] = true
				} else {
					silent[a.AlertName] = true
				}
			}
		}
	}
	headings := regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(string(docs), -1)
	documented := map[string]bool{}
	for _, h := range headings {
		documented[h[1]] = true
	}
	var alerts []string
	for _, g := range loadRule(t).Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts = append(alerts, r.Alert)
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: no summary or description", r.Alert)
			}
			if want := "https://github.com/xns-csi/csi-provisioner/blob/main/docs/monitoring.md#" + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			if !documented[r.Alert] {
				t.Errorf("%s: docs/monitoring.md has no section \"### %s\"", r.Alert, r.Alert)
			}
			if !fires[r.Alert] || !silent[r.Alert] {
				t.Errorf("%s: rules_test.yaml shows it firing: %v, silent: %v; want both", r.Alert, fires[r.Alert], silent[r.Alert])
			}
		}
	}
	for name := range documented {
		if !slices.Contains(alerts, name) {
			t.Errorf("docs/monitoring.md has a section for %s, which is no alert", name)
		}
	}
}

// TestDashboard: the dashboard's expressions parse (promql-selectors uses
// Prometheus' parser), every panel queries the dashboard's datasource
// variable and says what it shows, and panel ids are unique.
func TestDashboard(t *testing.T) {
	path := filepath.Join(overlay, "dashboards", "xns-csi.json")
	out, err := exec.CommandContext(t.Context(), tool(t, "promql-selectors"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("promql-selectors: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID          int    `json:"id"`
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Datasource  struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Templating.List, func(v struct{ Name, Type string }) bool {
		return v.Name == "datasource" && v.Type == "datasource"
	}) {
		t.Error("The dashboard has no datasource variable")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("Panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || p.Description == "" || len(p.Targets) == 0 {
			t.Errorf("Panel %q: datasource %q, %d queries, description %q; want ${datasource}, a query and a description",
				p.Title, p.Datasource.UID, len(p.Targets), p.Description)
		}
	}
}
