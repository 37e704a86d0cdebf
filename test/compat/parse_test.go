package compat

import (
	"strings"
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/sidecar"
)

// TestFixturesParse parses every fixture with sidecar.ParseFlags, in its
// container's environment: no flag, value or feature gate may be refused.
func TestFixturesParse(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			for _, name := range []string{"KUBECONFIG", "NODE_NAME", "NAMESPACE", "POD_NAME"} {
				t.Setenv(name, "") // unset for ParseFlags, which ignores empty variables
			}
			for _, kv := range f.env {
				name, value, _ := strings.Cut(kv, "=")
				t.Setenv(name, value)
			}
			opts, err := sidecar.ParseFlags(f.args)
			if err != nil {
				t.Fatalf("the sidecar refuses the arguments of %s: %v\narguments: %q", f.name, err, f.args)
			}
			if opts.ShowVersion {
				t.Errorf("%s asks for --version", f.name)
			}
		})
	}
}
