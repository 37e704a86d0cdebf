package compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// upstreamRelease is the upstream csi-provisioner release the sidecar is a
// drop-in for: the fixtures upstreamFlagList and upstreamGateList are its,
// and test/tools/upstream builds it (TestFixturesAreOfThePinnedRelease).
const upstreamRelease = "v6.4.0"

// upstreamHelp returns the --help output of the upstream binary that `make
// update-compat-fixtures` (and make bench) builds, and skips the test when
// it is not built. A binary of another release than upstreamRelease fails
// the test: its --help says nothing of the fixtures.
func upstreamHelp(t *testing.T) (bin string, help []byte) {
	t.Helper()
	bin = upstreamBinary(t, "upstream-csi-provisioner", upstreamRelease)
	help, _ = exec.Command(bin, "--help").CombinedOutput() // exits 0 or 2 depending on the pflag version
	return bin, help
}

// upstreamBinary is the path of .cache/bin/<name>, skipping the test if it
// is not built and failing it if its --version is not release's.
func upstreamBinary(t *testing.T, name, release string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", ".cache", "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not built (make update-compat-fixtures builds it): %v", name, err)
	}
	version, err := exec.Command(bin, "--version").Output() // "<path> <release>"
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if fields := strings.Fields(string(version)); len(fields) == 0 || fields[len(fields)-1] != release {
		t.Fatalf("%s --version says %q, want %s: make update-compat-fixtures rebuilds it from test/tools/upstream", bin, strings.TrimSpace(string(version)), release)
	}
	return bin
}
