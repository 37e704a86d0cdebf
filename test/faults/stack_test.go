//go:build faults

package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// restartDelay is how long a supervised process stays down after it exits
// before it is started again, as kubelet restarts a crashed container.
const restartDelay = time.Second

// supervised is a process that is started again whenever it exits, until
// Stop: the driver and the sidecars exit when their peer goes (the sidecar
// on losing its CSI connection), and a pod's containers come back.
type supervised struct {
	name  string
	start func(log string) (*cluster.Process, error)

	mu       sync.Mutex
	cur      *cluster.Process
	down     bool // Down was called: not restarted until Up
	stopped  bool
	starts   int
	changed  chan struct{} // closed and replaced when cur changes
	loopDone chan struct{}
}

// supervise starts the process and keeps it running until t ends.
func supervise(t *testing.T, name string, start func(log string) (*cluster.Process, error)) *supervised {
	t.Helper()
	s := &supervised{name: name, start: start, changed: make(chan struct{}), loopDone: make(chan struct{})}
	if err := s.launch(); err != nil {
		t.Fatal(err)
	}
	go s.loop()
	t.Cleanup(s.Stop)
	return s
}

func (s *supervised) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	log := s.name
	if s.starts > 0 {
		log = s.name + "-" + strconv.Itoa(s.starts)
	}
	p, err := s.start(log)
	if err != nil {
		return fmt.Errorf("starting %s: %w", s.name, err)
	}
	s.starts++
	s.cur = p
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// loop restarts the process when it exits, unless it is down or stopped.
func (s *supervised) loop() {
	defer close(s.loopDone)
	for {
		s.mu.Lock()
		p, changed := s.cur, s.changed
		s.mu.Unlock()
		if p != nil {
			p.Wait()
		}
		s.mu.Lock()
		stopped, down := s.stopped, s.down
		s.mu.Unlock()
		switch {
		case stopped:
			return
		case down || p == nil:
			<-changed // Up or Stop
			continue
		}
		time.Sleep(restartDelay)
		if s.isStopped() || s.isDown() {
			continue
		}
		if err := s.launch(); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			return
		}
	}
}

func (s *supervised) isStopped() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.stopped }
func (s *supervised) isDown() bool    { s.mu.Lock(); defer s.mu.Unlock(); return s.down }

// Kill sends SIGKILL to the process group, as a crash would; the supervisor
// starts it again after restartDelay.
func (s *supervised) Kill() {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	p.Kill()
}

// Down stops the process (SIGTERM, as a deletion of its pod would) and
// keeps it down until Up.
func (s *supervised) Down() {
	s.mu.Lock()
	s.down = true
	p := s.cur
	s.mu.Unlock()
	p.Stop(10 * time.Second)
}

// Up starts a process that is down.
func (s *supervised) Up() error {
	s.mu.Lock()
	s.down = false
	s.mu.Unlock()
	return s.launch()
}

// LogPath is the log of the running process.
func (s *supervised) LogPath() string { s.mu.Lock(); defer s.mu.Unlock(); return s.cur.LogPath() }

// Starts is how many times the process was started.
func (s *supervised) Starts() int { s.mu.Lock(); defer s.mu.Unlock(); return s.starts }

// Stop stops the process by PID and the supervision for good.
func (s *supervised) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	p := s.cur
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	p.Stop(10 * time.Second)
	<-s.loopDone
}

// stack is one scenario's CSI driver (with its fault switches and call
// log), csi-snapshotter and csi-provisioner sidecar, each supervised.
type stack struct {
	name, socket, state, faults, calls string
	driver, snapshotter, sidecar       *supervised
	sidecarArgs                        []string
}

// startStack starts a driver named <id>.faults.csi.example.com and its
// snapshotter and sidecar. The sidecar's retry backoff is capped at 5 s so
// that a scenario's claims settle within its bound after the fault.
func startStack(t *testing.T, id string, sidecarArgs ...string) *stack {
	t.Helper()
	dir := filepath.Join(world.Work, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &stack{
		name:   id + ".faults.csi.example.com",
		socket: filepath.Join(dir, "csi.sock"),
		state:  filepath.Join(dir, "state"),
		faults: filepath.Join(dir, "faults.json"),
		calls:  filepath.Join(dir, "calls.jsonl"),
	}
	bin := filepath.Join(world.Root, "bin", "csi-localdriver")
	s.driver = supervise(t, id+"-driver", func(log string) (*cluster.Process, error) {
		return cluster.StartProcess(log, bin, []string{"--endpoint=" + s.socket, "--state-dir=" + s.state, "--name=" + s.name,
			"--faults-file=" + s.faults, "--call-log=" + s.calls, "--v=2"}, world.Work)
	})
	waitFor(t, "the driver's socket", time.Minute, func(context.Context) bool {
		_, err := os.Stat(s.socket)
		return err == nil
	})
	s.snapshotter = supervise(t, id+"-snapshotter", func(log string) (*cluster.Process, error) {
		return cluster.StartProcess(log, filepath.Join(world.Root, ".cache", "bin", "csi-snapshotter"),
			[]string{"--csi-address=" + s.socket, "--kubeconfig=" + world.Cluster.Kubeconfig(cluster.Admin),
				"--leader-election=false", "--v=2"}, world.Work)
	})
	s.sidecarArgs = sidecarArgs
	s.sidecar = s.startSidecar(t, id+"-provisioner")
	return s
}

// startSidecar starts one more supervised csi-provisioner for the stack,
// as the sidecar's ServiceAccount, with the stack's sidecar flags.
func (s *stack) startSidecar(t *testing.T, name string) *supervised {
	t.Helper()
	args := append([]string{"--csi-address=" + s.socket, "--kubeconfig=" + world.Cluster.Kubeconfig(cluster.Sidecar),
		"--feature-gates=CrossNamespaceSourceProvisioning=true", "--retry-interval-max=5s", "--v=4"}, s.sidecarArgs...)
	return supervise(t, name, func(log string) (*cluster.Process, error) {
		port, err := cluster.FreePort()
		if err != nil {
			return nil, err
		}
		return cluster.StartProcess(log, world.SidecarBinary(),
			append(slices.Clone(args), "--http-endpoint=127.0.0.1:"+strconv.Itoa(port)), world.Work)
	})
}

// setFaults replaces the driver's fault rules; none clears them.
func (s *stack) setFaults(t *testing.T, rules ...localdriver.FaultRule) {
	t.Helper()
	if err := localdriver.WriteFaults(s.faults, localdriver.Faults{Rules: rules}); err != nil {
		t.Fatal(err)
	}
}

// callLog reads the driver's call log.
func (s *stack) callLog(t *testing.T) []localdriver.CallRecord {
	t.Helper()
	records, err := localdriver.ReadCallLog(s.calls)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// callCounts counts the driver's calls of method: started, answered, and
// answered with each code.
type callCounts struct {
	started, answered int
	codes             map[string]int
	// inFlight are the names of calls started and not answered.
	inFlight map[string]bool
}

func (s *stack) countCalls(t *testing.T, method string) callCounts {
	t.Helper()
	c := callCounts{codes: map[string]int{}, inFlight: map[string]bool{}}
	open := map[string]int{}
	for _, r := range s.callLog(t) {
		if r.Method != method {
			continue
		}
		switch r.Phase {
		case "start":
			c.started++
			open[r.Name]++
		case "end":
			c.answered++
			c.codes[r.Code]++
			open[r.Name]--
		}
	}
	for name, n := range open {
		if n > 0 {
			c.inFlight[name] = true
		}
	}
	return c
}
