package localdriver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2/ktesting"
)

// faultyDriver serves a driver with a faults file and a call log over a
// real unix socket, and returns its controller client and the two paths.
func faultyDriver(t *testing.T) (ctx context.Context, c csi.ControllerClient, faults, calls, state string) {
	t.Helper()
	_, ctx = ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dir := t.TempDir()
	faults, calls, state = filepath.Join(dir, "faults.json"), filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "state")
	d, err := New(ctx, Config{StateDir: state, Name: DefaultName, NodeID: "n", FaultsFile: faults, CallLog: calls})
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
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		<-served
	})
	return ctx, csi.NewControllerClient(conn), faults, calls, state
}

func setFaults(t *testing.T, path string, rules ...FaultRule) {
	t.Helper()
	if err := WriteFaults(path, Faults{Rules: rules}); err != nil {
		t.Fatal(err)
	}
}

func volumesOnDisk(t *testing.T, state string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(state, "volumes", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

func TestFaultAfterTheCallCreatesTheVolumeAndHidesIt(t *testing.T) {
	ctx, c, faults, calls, state := faultyDriver(t)
	setFaults(t, faults, FaultRule{Method: "CreateVolume", Code: "DeadlineExceeded", AfterCall: true, Count: 1})

	_, err := c.CreateVolume(ctx, newCreateRequest("pvc-1"))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("first CreateVolume = %v, want the injected DeadlineExceeded", err)
	}
	if n := volumesOnDisk(t, state); n != 1 {
		t.Fatalf("%d volumes on disk after the hidden create, want 1", n)
	}
	resp, err := c.CreateVolume(ctx, newCreateRequest("pvc-1"))
	if err != nil {
		t.Fatalf("second CreateVolume (count 1 used up) = %v", err)
	}
	if n := volumesOnDisk(t, state); n != 1 || resp.GetVolume().GetVolumeId() == "" {
		t.Errorf("%d volumes after the retry (id %q), want the same single one", n, resp.GetVolume().GetVolumeId())
	}
	records, err := ReadCallLog(calls)
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, r := range records {
		if r.Phase == "end" && r.Method == "CreateVolume" && r.Name == "pvc-1" {
			ends = append(ends, r.Code)
		}
	}
	if len(ends) != 2 || ends[0] != "DeadlineExceeded" || ends[1] != "OK" {
		t.Errorf("call log answers of CreateVolume pvc-1 = %v, want [DeadlineExceeded OK]", ends)
	}
}

func TestFaultBeforeTheCallCreatesNothing(t *testing.T) {
	ctx, c, faults, _, state := faultyDriver(t)
	setFaults(t, faults, FaultRule{Method: "CreateVolume", Code: "Unavailable", Count: 2})
	for i := range 2 {
		if _, err := c.CreateVolume(ctx, newCreateRequest("pvc-1")); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d = %v, want Unavailable", i, err)
		}
	}
	if n := volumesOnDisk(t, state); n != 0 {
		t.Fatalf("%d volumes after refused calls, want 0", n)
	}
	if _, err := c.CreateVolume(ctx, newCreateRequest("pvc-1")); err != nil {
		t.Fatalf("third call = %v, want OK once the count is used up", err)
	}
}

func TestFaultsFileIsReadOnEveryCall(t *testing.T) {
	ctx, c, faults, _, _ := faultyDriver(t)
	if _, err := c.CreateVolume(ctx, newCreateRequest("a")); err != nil {
		t.Fatalf("without a faults file: %v", err)
	}
	setFaults(t, faults, FaultRule{Method: "*", Code: "ResourceExhausted"})
	if _, err := c.CreateVolume(ctx, newCreateRequest("b")); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("after writing a rule for every method: %v, want ResourceExhausted", err)
	}
	if _, err := c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "x"}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("DeleteVolume under \"*\": %v, want ResourceExhausted", err)
	}
	setFaults(t, faults, FaultRule{Method: "DeleteVolume", Code: "Aborted"})
	if _, err := c.CreateVolume(ctx, newCreateRequest("b")); err != nil {
		t.Fatalf("a rule for another method hit CreateVolume: %v", err)
	}
	if err := os.Remove(faults); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "x"}); err != nil {
		t.Fatalf("after removing the file: %v", err)
	}
}

func TestAnInvalidFaultsFileFailsEveryCall(t *testing.T) {
	ctx, c, faults, _, state := faultyDriver(t)
	if err := os.WriteFile(faults, []byte(`{"rules":[{"method":"CreateVolume","code":"NoSuchCode"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVolume(ctx, newCreateRequest("a")); status.Code(err) != codes.Internal {
		t.Fatalf("CreateVolume with a mistyped code = %v, want Internal", err)
	}
	if n := volumesOnDisk(t, state); n != 0 {
		t.Errorf("%d volumes created under an invalid faults file", n)
	}
}

func TestAFaultDelayEndsWhenTheCallerGivesUp(t *testing.T) {
	ctx, c, faults, _, state := faultyDriver(t)
	setFaults(t, faults, FaultRule{Method: "CreateVolume", Delay: "1h"})
	callCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.CreateVolume(callCtx, newCreateRequest("a")); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("delayed CreateVolume = %v, want the caller's DeadlineExceeded", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the call took %v: the delay did not end with the caller", time.Since(start))
	}
	if n := volumesOnDisk(t, state); n != 0 {
		t.Errorf("%d volumes created by a call that was given up before it ran", n)
	}
}

func TestParseFaults(t *testing.T) {
	tests := map[string]struct {
		json    string
		wantErr bool
	}{
		"a code by its Go name":              {json: `{"rules":[{"method":"CreateVolume","code":"DeadlineExceeded"}]}`},
		"a delay after the call":             {json: `{"rules":[{"method":"*","delay":"2s","afterCall":true,"count":3,"probability":0.5}]}`},
		"an unknown code is refused":         {json: `{"rules":[{"method":"CreateVolume","code":"Deadline"}]}`, wantErr: true},
		"a rule without method is refused":   {json: `{"rules":[{"code":"Unavailable"}]}`, wantErr: true},
		"a bad delay is refused":             {json: `{"rules":[{"method":"*","delay":"soon"}]}`, wantErr: true},
		"a probability above 1 is refused":   {json: `{"rules":[{"method":"*","probability":2}]}`, wantErr: true},
		"a misspelled field is refused":      {json: `{"rules":[{"method":"*","after":true}]}`, wantErr: true},
		"a negative count is refused":        {json: `{"rules":[{"method":"*","count":-1}]}`, wantErr: true},
		"an empty rule list injects nothing": {json: `{"rules":[]}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseFaults([]byte(tc.json)); (err != nil) != tc.wantErr {
				t.Errorf("ParseFaults(%s) = %v, want error %v", tc.json, err, tc.wantErr)
			}
		})
	}
}
