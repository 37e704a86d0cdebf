package compat

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fixtures' currency, checked against upstream's source at the release
// test/tools/upstream pins, without building upstream: the source comes
// from the module cache (go mod download; from the module proxy the first
// time). The source shows what upstream's own packages declare; the flags
// and gates of its libraries (csi-lib-utils, component-base) are checked
// against the built binary (upstream_test.go) when it exists: make
// update-compat-fixtures builds it and writes the fixtures from it.

const (
	upstreamModule = "github.com/kubernetes-csi/external-provisioner/v6"
	// upstreamWrapper is the module that builds upstream (make bench).
	upstreamWrapper = "../tools/upstream"
)

// TestFixturesAreOfThePinnedRelease: the fixtures are of the release that
// test/tools/upstream builds and TestFlagFixtureListsUpstreamSourceFlags
// reads.
func TestFixturesAreOfThePinnedRelease(t *testing.T) {
	if pinned := pinnedUpstream(t); pinned != upstreamRelease {
		t.Errorf("%s/go.mod pins %s %s, the fixtures are of %s: make update-compat-fixtures writes them for the pinned release; then set upstreamRelease",
			upstreamWrapper, upstreamModule, pinned, upstreamRelease)
	}
}

// TestFlagFixtureListsUpstreamSourceFlags: every flag upstream's
// cmd/csi-provisioner declares is in upstreamFlagList, with the type its
// constructor gives it and the default its source spells out.
func TestFlagFixtureListsUpstreamSourceFlags(t *testing.T) {
	fset, files := parsePackage(t, filepath.Join(upstreamSource(t), "cmd", "csi-provisioner"))
	declared, err := sourceFlags(fset, files)
	if err != nil {
		t.Errorf("upstream's cmd/csi-provisioner: %v", err)
	}
	if len(declared) == 0 {
		t.Fatal("upstream's cmd/csi-provisioner declares no flag that sourceFlags can read")
	}
	t.Logf("%d flags declared in upstream's cmd/csi-provisioner %s", len(declared), upstreamRelease)
	listed := map[string]flagSpec{}
	for _, f := range loadFlagList(t) {
		listed[f.name] = f
	}
	for _, d := range declared {
		f, ok := listed[d.name]
		switch {
		case !ok:
			t.Errorf("upstream declares --%s (%s), %s does not list it: make update-compat-fixtures", d.name, d.pos, upstreamFlagList)
		case d.typ != "" && d.typ != f.typ:
			t.Errorf("upstream's --%s is a %s (%s), %s says %s", d.name, d.typ, d.pos, upstreamFlagList, f.typ)
		case d.hasDef && d.def != f.def:
			t.Errorf("upstream's --%s defaults to %q (%s), %s says %q", d.name, d.def, d.pos, upstreamFlagList, f.def)
		}
	}
}

// TestGateFixtureListsUpstreamSourceGates: every feature gate upstream's
// pkg/features adds that --help lists is in upstreamGateList, with its
// maturity and default.
func TestGateFixtureListsUpstreamSourceGates(t *testing.T) {
	fset, files := parsePackage(t, filepath.Join(upstreamSource(t), "pkg", "features"))
	declared, err := sourceGates(fset, files)
	if err != nil {
		t.Fatalf("upstream's pkg/features: %v", err)
	}
	listed := loadGateList(t)
	for _, g := range declared {
		if !slices.Contains(listed, g) {
			t.Errorf("upstream's pkg/features adds %s (%s, default %s), %s does not list it so: make update-compat-fixtures", g.name, g.maturity, g.def, upstreamGateList)
		}
	}
}

// pinnedUpstream is the release of upstreamModule that upstreamWrapper's
// go.mod requires.
func pinnedUpstream(t *testing.T) string {
	t.Helper()
	for _, line := range readLines(t, filepath.Join(upstreamWrapper, "go.mod")) {
		fields := strings.Fields(strings.TrimPrefix(line, "require "))
		if len(fields) >= 2 && fields[0] == upstreamModule {
			return fields[1]
		}
	}
	t.Fatalf("%s/go.mod does not require %s", upstreamWrapper, upstreamModule)
	return ""
}

// upstreamSource is the directory of upstream's module source at the
// pinned release, downloaded into the module cache if it is not there
// (verified against upstreamWrapper's go.sum). Skipped with -short.
func upstreamSource(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("reads upstream's source from the module cache or the module proxy")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to download upstream's source with: %v", err)
	}
	cmd := exec.Command(goTool, "mod", "download", "-json", upstreamModule+"@"+pinnedUpstream(t))
	cmd.Dir = upstreamWrapper
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var module struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &module); err != nil || jerr != nil || module.Dir == "" {
		t.Fatalf("go mod download %s (needs the module proxy the first time): %v %v %s", upstreamModule, err, jerr, module.Error)
	}
	return module.Dir
}

// parsePackage parses the Go files of dir but its tests.
func parsePackage(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return fset, files
}
