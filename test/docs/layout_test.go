package docs

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path of the repository's module.
const module = "github.com/xns-csi/csi-provisioner/"

// owners maps each binary's directory under internal/ to the binary under
// cmd/ that owns it (docs/layout.md).
var owners = map[string]string{
	"internal/sidecar":         "csi-provisioner",
	"internal/snapshotwebhook": "snapshot-validation-webhook",
	"internal/validator":       "volume-data-source-validator",
	"internal/transfer":        "storage-transfer-controller",
}

// sharedDir holds the packages two or more binaries use.
const sharedDir = "internal/shared"

// TestPackagesLiveWithTheirBinary checks the rule docs/layout.md states: a
// package under a binary's directory is linked into that binary only, and
// a package of internal/shared into two binaries or more. A helper of
// tests, whose name ends in "test", is linked into none.
func TestPackagesLiveWithTheirBinary(t *testing.T) {
	users := map[string][]string{} // package directory -> binaries linking it
	for binary := range flagPages {
		for _, pkg := range goList(t, "-deps", "./cmd/"+binary) {
			if dir, ok := strings.CutPrefix(pkg, module); ok {
				users[dir] = append(users[dir], binary)
			}
		}
	}
	for _, dir := range goList(t, "./internal/...") {
		dir = strings.TrimPrefix(dir, module)
		linked := users[dir]
		slices.Sort(linked)
		switch owner, shared := ownerOf(dir); {
		case shared && len(linked) == 1:
			t.Errorf("%s is in %s but only %s links it: move it under that binary's directory", dir, sharedDir, linked[0])
		case shared && len(linked) == 0 && !strings.HasSuffix(dir, "test"):
			t.Errorf("%s is in %s but no binary links it", dir, sharedDir)
		case shared:
		case owner == "":
			t.Errorf("%s is neither under a binary's directory (%s) nor in %s", dir, strings.Join(sortedKeys(owners), ", "), sharedDir)
		case len(linked) == 0 && !strings.HasSuffix(dir, "test"):
			t.Errorf("%s is under %s's directory but no binary links it", dir, owner)
		case slices.ContainsFunc(linked, func(b string) bool { return b != owner }):
			t.Errorf("%s is under %s's directory but %s link it: move it to %s", dir, owner, strings.Join(linked, ", "), sharedDir)
		}
	}
}

// ownerOf is the binary whose directory holds dir, or whether dir is
// shared.
func ownerOf(dir string) (owner string, shared bool) {
	if dir == sharedDir || strings.HasPrefix(dir, sharedDir+"/") {
		return "", true
	}
	for prefix, binary := range owners {
		if dir == prefix || strings.HasPrefix(dir, prefix+"/") {
			return binary, false
		}
	}
	return "", false
}

// goList lists the import paths of the packages args name, from the
// repository's root.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-mod=vendor"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	return strings.Fields(string(out))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
