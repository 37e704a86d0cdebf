package csi

import (
	"context"
	"testing"
	"time"

	"github.com/xns-csi/csi-provisioner/test/csitest"
	"k8s.io/klog/v2/ktesting"
)

// testTimeout is the per-call timeout of test clients: generous, because
// only the timeout test wants calls to time out, and it sets its own.
const testTimeout = 10 * time.Second

// connectTo starts a csitest driver with opts and returns a Client connected
// to it over its unix socket, closed when the test ends.
func connectTo(t *testing.T, timeout time.Duration, opts ...csitest.Option) (context.Context, *Client, *csitest.Driver) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	driver := csitest.Start(t, opts...)
	client, err := Connect(ctx, Config{Address: driver.Address(), Timeout: timeout})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := client.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ctx, client, driver
}

func TestDriverName(t *testing.T) {
	tests := map[string]struct {
		opts []csitest.Option
		want string
	}{
		"driver without a configured name reports the default name": {
			want: csitest.DefaultName,
		},
		"driver reports the name it was configured with": {
			opts: []csitest.Option{csitest.WithName("block.example.com")},
			want: "block.example.com",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, client, _ := connectTo(t, testTimeout, tc.opts...)
			got, err := client.DriverName(ctx)
			if err != nil {
				t.Fatalf("DriverName: %v", err)
			}
			if got != tc.want {
				t.Errorf("DriverName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProbeReturnsOnceTheDriverIsReady(t *testing.T) {
	ctx, client, _ := connectTo(t, testTimeout)
	if err := client.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
}

func TestConnectGivesUpWhenTheContextIsDone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()

	client, err := Connect(ctx, Config{Address: "unix://" + t.TempDir() + "/missing.sock"})
	if err == nil {
		_ = client.Close()
		t.Fatal("Connect to a missing socket succeeded, want an error")
	}
}
