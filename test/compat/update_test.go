package compat

import (
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// update makes TestUpdateFixtures write the fixtures.
var update = flag.Bool("update", false, "write the fixtures of the upstream release test/tools/upstream pins (make update-compat-fixtures)")

// TestUpdateFixtures writes testdata/upstream-<pinned release>.flags and
// .gates with -update, which make update-compat-fixtures passes once it has
// built the binaries: the flags from upstream-csi-provisioner-flagdump
// (upstream with testdata/flagdump compiled in), the gates from
// upstream-csi-provisioner's --help.
func TestUpdateFixtures(t *testing.T) {
	if !*update {
		t.Skip("writes the fixtures with -update: make update-compat-fixtures")
	}
	release := pinnedUpstream(t)
	for _, name := range []string{"upstream-csi-provisioner", "upstream-csi-provisioner-flagdump"} {
		if _, err := os.Stat("../../.cache/bin/" + name); err != nil {
			t.Fatalf("%v: make update-compat-fixtures builds it", err)
		}
	}
	dump := upstreamBinary(t, "upstream-csi-provisioner-flagdump", release)
	out, err := exec.Command(dump, "--help").Output()
	if err != nil {
		t.Fatalf("%s --help: %v", dump, err)
	}
	flags, err := flagLines(out)
	if err != nil {
		t.Fatalf("%s --help: %v", dump, err)
	}
	bin := upstreamBinary(t, "upstream-csi-provisioner", release)
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	var gates strings.Builder
	for _, g := range helpGates(t, bin, help) {
		fmt.Fprintf(&gates, "%s %s %s\n", g.name, g.maturity, g.def)
	}
	versions, err := buildVersions(bin)
	if err != nil {
		t.Fatal(err)
	}
	write(t, "testdata/upstream-"+release+".flags", fmt.Sprintf(flagsHeader, release, versions)+flags)
	write(t, "testdata/upstream-"+release+".gates", fmt.Sprintf(gatesHeader, release)+gates.String())
	if release != upstreamRelease {
		t.Logf("wrote the fixtures of %s: set upstreamRelease to it, and git rm the %s ones", release, upstreamRelease)
	}
}

const flagsHeader = `# Every flag of the upstream csi-provisioner %[1]s binary, one a line:
#   name  type  default
# type is pflag's Value.Type() and default its Flag.DefValue (what --help
# shows as "(default ...)"); "" is the empty string.
# Written by make update-compat-fixtures: the flag set as upstream's main
# builds it, read from the binary test/tools/upstream builds, with
# testdata/flagdump compiled in, of
# %[2]s.
# TestFixtureMatchesUpstreamHelp checks it against upstream's --help when
# the binary is built, TestFlagFixtureListsUpstreamSourceFlags against
# upstream's source.
`

const gatesHeader = `# The feature gates the upstream csi-provisioner %s lists in --help:
# name, maturity, default. Written by make update-compat-fixtures from the
# binary test/tools/upstream builds. TestGatesFixtureMatchesUpstreamHelp
# checks it against that binary when it is built,
# TestGateFixtureListsUpstreamSourceGates against upstream's source.
`

// flagLines formats the flag dump's lines (name, type and default,
// tab-separated) as the fixture's aligned columns.
func flagLines(dump []byte) (string, error) {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(dump)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			return "", fmt.Errorf("want name, type and default in %q", line)
		}
		def := fields[2]
		if def == "" {
			def = `""`
		}
		if strings.ContainsAny(fields[1]+def, " \t") {
			return "", fmt.Errorf("--%s: the fixture's columns cannot hold a type or default with spaces: %q", fields[0], line)
		}
		fmt.Fprintf(&b, "%-34s %-14s %s\n", fields[0], fields[1], def)
	}
	return b.String(), nil
}

// buildVersions names the modules that declare upstream's flags, at the
// versions bin was built with: "external-provisioner v6.4.0, csi-lib-utils
// v0.25.0, component-base v0.36.1".
func buildVersions(bin string) (string, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", err
	}
	versions := map[string]string{info.Main.Path: info.Main.Version}
	for _, d := range info.Deps {
		versions[d.Path] = d.Version
		if d.Replace != nil {
			versions[d.Path] = d.Replace.Version
		}
	}
	var out []string
	for _, path := range []string{upstreamModule, "github.com/kubernetes-csi/csi-lib-utils", "k8s.io/component-base"} {
		v, ok := versions[path]
		if !ok {
			return "", fmt.Errorf("%s was not built with %s", bin, path)
		}
		elems := strings.Split(path, "/")
		name := elems[len(elems)-1]
		if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" { // a major version suffix
			name = elems[len(elems)-2]
		}
		out = append(out, name+" "+v)
	}
	return strings.Join(out, ", "), nil
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
