package compat

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/component-base/featuregate"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
)

// upstreamGateList is the list of upstream's feature gates, see its header.
const upstreamGateList = "testdata/upstream-" + upstreamRelease + ".gates"

type gateSpec struct{ name, maturity, def string }

func loadGateList(t *testing.T) []gateSpec {
	t.Helper()
	var specs []gateSpec
	for _, line := range readLines(t, upstreamGateList) {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("%s: want name, maturity and default in %q", upstreamGateList, line)
		}
		specs = append(specs, gateSpec{name: fields[0], maturity: fields[1], def: fields[2]})
	}
	return specs
}

// TestUpstreamGatesAccepted sets every gate upstream lists to true and to
// false, as a --feature-gates list written for upstream may, and checks the
// default each one has when unset.
func TestUpstreamGatesAccepted(t *testing.T) {
	for _, g := range loadGateList(t) {
		for _, value := range []string{"true", "false"} {
			if err := features.NewGate().Set(g.name + "=" + value); err != nil {
				t.Errorf("--feature-gates=%s=%s: %v", g.name, value, err)
			}
		}
		gate := features.NewGate()
		known, ok := gate.GetAll()[featuregate.Feature(g.name)]
		if !ok {
			continue // reported above
		}
		if got := strings.ToUpper(string(known.PreRelease)); got != g.maturity || strconv.FormatBool(known.Default) != g.def {
			t.Errorf("%s is %s with default %v, upstream's is %s with default %s", g.name, got, known.Default, g.maturity, g.def)
		}
	}
}

// helpGateLine is a gate's line in --help. Gate names may hold digits
// (UnauthenticatedHTTP2DOSMitigation).
var helpGateLine = regexp.MustCompile(`^\s+([A-Za-z][A-Za-z0-9]*)=true\|false \(([A-Z]+) - default=(true|false)\)`)

// TestGatesFixtureMatchesUpstreamHelp checks upstreamGateList against the
// upstream binary itself, when `make update-compat-fixtures` has built it.
func TestGatesFixtureMatchesUpstreamHelp(t *testing.T) {
	bin, out := upstreamHelp(t)
	shown := helpGates(t, bin, out)
	if listed := loadGateList(t); !slices.Equal(listed, shown) {
		t.Errorf("%s lists %v, the upstream binary's --help %v", upstreamGateList, listed, shown)
	}
}

// helpGates reads the feature gates that bin's --help (out) lists, in its
// order.
func helpGates(t *testing.T, bin string, out []byte) []gateSpec {
	t.Helper()
	var shown []gateSpec
	for _, line := range strings.Split(string(out), "\n") {
		m := helpGateLine.FindStringSubmatch(line)
		switch {
		case m != nil:
			shown = append(shown, gateSpec{name: m[1], maturity: m[2], def: m[3]})
		case strings.Contains(line, "=true|false ("):
			t.Errorf("helpGateLine does not read this gate's line of --help: %q", line)
		}
	}
	if len(shown) == 0 {
		t.Fatalf("no feature gates in the output of %s --help:\n%s", bin, out)
	}
	return shown
}
