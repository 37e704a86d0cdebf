package compat

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// startupBound bounds the wait for the sidecar to get past flag parsing.
// It is only reached when the test fails; a passing start takes
// milliseconds.
const startupBound = 2 * time.Minute

// Log lines the sidecar writes once its flags are parsed and validated.
const (
	startLine      = "Starting csi-provisioner"
	connectingLine = "Connecting to the CSI driver"
)

// dummyKubeconfig is a syntactically valid kubeconfig for a server that is
// never contacted: the sidecar waits for its CSI driver first.
const dummyKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: none
  context: {cluster: none, user: none}
users:
- name: none
  user: {token: none}
current-context: none
`

// TestBinaryStartsWithFixtures starts the built sidecar with each fixture's
// arguments in its container's environment, a --csi-address of a socket
// that does not exist and KUBECONFIG naming a dummy file, and waits until
// it logs that it connects to the driver: the flags, gates and environment
// were accepted (a refusal exits with code 2 before that).
func TestBinaryStartsWithFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the binary")
	}
	bin := buildSidecar(t)
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			lines := startSidecar(t, bin, f)
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, startLine) }) {
				t.Errorf("no %q line before %q:\n%s", startLine, connectingLine, strings.Join(lines, "\n"))
			}
		})
	}
}

// buildSidecar builds cmd/csi-provisioner from the vendored modules.
func buildSidecar(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the sidecar with: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "csi-provisioner")
	cmd := exec.Command(goTool, "build", "-mod=vendor", "-o", bin, "./cmd/csi-provisioner")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=vendor")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/csi-provisioner: %v\n%s", err, out)
	}
	return bin
}

// startSidecar runs bin with f's arguments until it logs connectingLine,
// then kills it, and returns the lines logged until then. It fails the test
// if the process exits first.
func startSidecar(t *testing.T, bin string, f fixture) []string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(dummyKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), startupBound)
	defer cancel()
	// A later flag wins: the driver socket is one that never appears.
	args := append(slices.Clone(f.args), "--csi-address="+filepath.Join(dir, "absent.sock"))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(containerEnv(), f.env...)
	cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	reader, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	cmd.Stdout, cmd.Stderr = writer, writer // text logs go to stderr, JSON logs to stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	writer.Close() // the child holds its copy
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	logged := make(chan string)
	go func() {
		defer close(logged)
		scanner := bufio.NewScanner(reader)
		for scanner.Scan() {
			logged <- scanner.Text()
		}
	}()

	var lines []string
	for {
		select {
		case line, ok := <-logged:
			if !ok {
				// The process closed its output: it is exiting.
				err := <-exited
				t.Fatalf("the sidecar exited before %q (%v; status 2 means refused flags):\n%s", connectingLine, exitDetail(err), strings.Join(lines, "\n"))
			}
			lines = append(lines, line)
			if strings.Contains(line, connectingLine) {
				_ = cmd.Process.Kill()
				<-exited
				return lines
			}
		case <-ctx.Done():
			t.Fatalf("no %q within %v:\n%s", connectingLine, startupBound, strings.Join(lines, "\n"))
		}
	}
}

// containerEnv is the test's environment without the variables the sidecar
// reads, which the fixture sets as its container would.
func containerEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"KUBECONFIG", "NODE_NAME", "NAMESPACE", "POD_NAME", "POD_NAMESPACE"}, name)
	})
}

func exitDetail(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error() // "exit status 2" for an *exec.ExitError
}
