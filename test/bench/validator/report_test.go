package main

import (
	"strings"
	"testing"
)

// TestReportColumns: a row has a column per validator measured, and the
// ratio only when upstream's was measured too.
func TestReportColumns(t *testing.T) {
	f := &fixture{namespaces: 3, claims: []claimName{{"a", "c"}}, kinds: map[string]int{"snapshot": 1}, grants: 3}
	ours, theirs := contender{name: "this validator"}, contender{name: "upstream validator v1.7.0"}
	tests := []struct {
		name      string
		who       []contender
		header    string
		cells     int
		statement bool
	}{
		{"side by side, with the ratio", []contender{ours, theirs}, "| | this validator | upstream validator v1.7.0 | this ÷ upstream |", 4, false},
		{"this validator alone says upstream was not measured", []contender{ours}, "| | this validator |", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := report(f, tt.who, make([]result, len(tt.who)), 1)
			if !strings.Contains(got, tt.header+"\n") {
				t.Errorf("no header %q in\n%s", tt.header, got)
			}
			if said := strings.Contains(got, "not measured (-upstream=false)"); said != tt.statement {
				t.Errorf("says upstream was not measured: %v, want %v\n%s", said, tt.statement, got)
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.HasPrefix(line, "| peak RSS") || strings.HasPrefix(line, "| watches open") {
					if cells := strings.Count(line, "|") - 1; cells != tt.cells {
						t.Errorf("%q has %d cells, want %d", line, cells, tt.cells)
					}
				}
			}
		})
	}
}
