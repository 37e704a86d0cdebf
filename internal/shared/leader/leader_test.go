package leader

import (
	"context"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestFlagsKeepTheSidecarsNamesAndDefaults(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--leader-election", "--leader-election-namespace=kube-system", "--leader-election-lease-duration=30s"}); err != nil {
		t.Fatal(err)
	}
	want := Options{Enabled: true, Namespace: "kube-system", LeaseDuration: 30 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 5 * time.Second}
	if o != want {
		t.Errorf("Options = %+v, want %+v", o, want)
	}
}

func TestValidate(t *testing.T) {
	for name, tt := range map[string]struct {
		opts    Options
		wantErr bool
	}{
		"the defaults are valid":                    {opts: NewOptions()},
		"anything goes when leader election is off": {opts: Options{RenewDeadline: time.Minute}},
		"a renew deadline as long as the lease is refused": {
			opts: Options{Enabled: true, LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second}, wantErr: true},
		"a zero retry period is refused": {
			opts: Options{Enabled: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			if err := tt.opts.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want an error: %v", err, tt.wantErr)
			}
		})
	}
}

func TestReleaseAfterRunStopsAStandbyAtOnce(t *testing.T) {
	ctx, signal := context.WithCancel(t.Context())
	leaderCtx, _, stop := releaseAfterRun(ctx, func(context.Context) { t.Error("a standby ran the controllers") })
	defer stop()
	if leaderCtx.Err() != nil {
		t.Fatal("leader election stopped before the signal")
	}
	signal()
	<-leaderCtx.Done() // the test times out if it never ends
}

func TestReleaseAfterRunReleasesOnlyAfterTheControllersStopped(t *testing.T) {
	ctx, signal := context.WithCancel(t.Context())
	leading, controllersStopping, finish := make(chan struct{}), make(chan struct{}), make(chan struct{})
	run := func(ctx context.Context) {
		close(leading)
		<-ctx.Done()
		close(controllersStopping)
		<-finish // the controllers' last writes
	}
	leaderCtx, asLeader, stop := releaseAfterRun(ctx, run)
	defer stop()
	leaseCtx, lost := context.WithCancel(leaderCtx) // what leader election hands to the leader
	defer lost()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		asLeader(leaseCtx)
	}()

	<-leading
	signal()
	<-controllersStopping
	if leaderCtx.Err() != nil {
		t.Fatal("the Lease would be released while the controllers still run")
	}
	close(finish)
	<-ran
	if leaderCtx.Err() == nil {
		t.Fatal("the Lease is not released after the controllers stopped")
	}
}
