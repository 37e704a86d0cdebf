package localdriver_test

import (
	"context"
	"crypto/rand"
	"flag"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// TestSanity runs the CSI sanity suite against the driver, served on a unix
// socket the way Run serves it. The suite skips only what the driver does
// not claim to support (staging, expansion, ListVolumes, ...); it runs the
// VolumeAttributesClass cases of CreateVolume and ControllerModifyVolume.
func TestSanity(t *testing.T) {
	if count := flag.Lookup("test.count"); count != nil && count.Value.String() != "1" {
		t.Skip("Ginkgo refuses go test -count other than 1; run the sanity suite with -count=1")
	}
	// Verbosity 2 logs changes and failed calls; 5 would log every call.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	dir := t.TempDir()
	d, err := localdriver.New(ctx, localdriver.Config{
		StateDir: filepath.Join(dir, "state"),
		Name:     localdriver.DefaultName,
		NodeID:   "sanity-node",
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + sock
	// The suite creates and removes these directories itself.
	cfg.TargetPath = filepath.Join(dir, "target")
	cfg.StagingPath = filepath.Join(dir, "staging")
	cfg.TestVolumeSize = 16 << 20
	// The mutable parameters of the suite's VolumeAttributesClass cases.
	cfg.TestVolumeMutableParameters = map[string]string{localdriver.ParameterIOPS: "3000"}
	cfg.IDGen = idGenerator{}
	sanity.Test(t, cfg)
}

// idGenerator makes the "valid but unknown" IDs that the suite uses for its
// NotFound checks look like the driver's own IDs, so that those checks
// exercise the lookup rather than a format check.
type idGenerator struct{}

func (idGenerator) GenerateUniqueValidVolumeID() string { return "vol-" + strings.ToLower(rand.Text()) }
func (idGenerator) GenerateInvalidVolumeID() string     { return "not-a-volume-id" }
func (idGenerator) GenerateUniqueValidNodeID() string   { return "node-" + strings.ToLower(rand.Text()) }
func (idGenerator) GenerateInvalidNodeID() string       { return "not-a-node-id" }
