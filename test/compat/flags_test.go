package compat

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/internal/sidecar"
)

// upstreamFlagList is the list of upstream's flags, see its header.
const upstreamFlagList = "testdata/upstream-" + upstreamRelease + ".flags"

// ownFlags are the flags this sidecar has beyond upstream's; docs/provisioner.md's
// flag section lists them as this sidecar's.
var ownFlags = []string{"cross-namespace-snapshot", "finalizer-threads", "resync-period"}

type flagSpec struct{ name, typ, def string }

func loadFlagList(t *testing.T) []flagSpec {
	t.Helper()
	var specs []flagSpec
	for _, line := range readLines(t, upstreamFlagList) {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("%s: want name, type and default in %q", upstreamFlagList, line)
		}
		def := fields[2]
		if def == `""` {
			def = ""
		}
		specs = append(specs, flagSpec{name: fields[0], typ: fields[1], def: def})
	}
	return specs
}

// TestUpstreamFlagsDefined checks that the sidecar defines every upstream
// flag with the same type and default, and no other flag than its own.
func TestUpstreamFlagsDefined(t *testing.T) {
	fs := pflag.NewFlagSet("csi-provisioner", pflag.ContinueOnError)
	sidecar.NewOptions().AddFlags(fs)
	upstream := map[string]bool{}
	for _, want := range loadFlagList(t) {
		upstream[want.name] = true
		got := fs.Lookup(want.name)
		if got == nil {
			t.Errorf("--%s is not defined", want.name)
			continue
		}
		if got.Value.Type() != want.typ || got.DefValue != want.def {
			t.Errorf("--%s is a %s with default %q, upstream's is a %s with default %q", want.name, got.Value.Type(), got.DefValue, want.typ, want.def)
		}
	}
	var extra []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !upstream[f.Name] {
			extra = append(extra, f.Name)
		}
	})
	if !slices.Equal(extra, ownFlags) {
		t.Errorf("flags beyond upstream's: %q, want %q (a new flag of this sidecar belongs in ownFlags and docs/provisioner.md's flag section)", extra, ownFlags)
	}
}

var (
	helpFlagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z], )?--([a-z0-9-]+)`)
	helpDefault  = regexp.MustCompile(`\(default (.*)\)$`)
)

// TestFixtureMatchesUpstreamHelp checks upstreamFlagList against the
// upstream binary itself, when `make update-compat-fixtures` (or make
// bench) has built it: the same flags, and the defaults its --help shows
// (pflag leaves zero defaults out).
func TestFixtureMatchesUpstreamHelp(t *testing.T) {
	bin, out := upstreamHelp(t)
	shown := map[string]string{} // flag → its usage, continuation lines joined
	var order []string
	current := ""
	for _, line := range strings.Split(string(out), "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			current = m[1]
			order = append(order, current)
			shown[current] = strings.TrimSpace(line)
		} else if current != "" && strings.TrimSpace(line) != "" {
			shown[current] += " " + strings.TrimSpace(line)
		}
	}
	if len(shown) == 0 {
		t.Fatalf("no flags in the output of %s --help:\n%s", bin, out)
	}
	listed := map[string]bool{}
	for _, want := range loadFlagList(t) {
		listed[want.name] = true
		usage, ok := shown[want.name]
		if !ok {
			t.Errorf("%s lists --%s, the upstream binary has no such flag", upstreamFlagList, want.name)
			continue
		}
		def, hasDefault := "", false
		if m := helpDefault.FindStringSubmatch(usage); m != nil {
			def, hasDefault = m[1], true
			if unquoted, err := strconv.Unquote(def); err == nil {
				def = unquoted
			}
		}
		switch {
		case hasDefault && def != want.def:
			t.Errorf("--%s: upstream's default is %q, %s says %q", want.name, def, upstreamFlagList, want.def)
		case !hasDefault && !slices.Contains([]string{"", "false", "0", "0s"}, want.def):
			t.Errorf("--%s: upstream shows no default (a zero value), %s says %q", want.name, upstreamFlagList, want.def)
		}
	}
	for _, name := range order {
		if !listed[name] {
			t.Errorf("the upstream binary has --%s, %s does not list it", name, upstreamFlagList)
		}
	}
}
