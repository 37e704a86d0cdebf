package sidecar

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestRestConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	file := clientcmdapi.NewConfig()
	file.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://from-kubeconfig:6443"}
	file.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	file.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*file, kubeconfig); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		opts      func(*Options)
		wantHost  string
		wantQPS   float32
		wantBurst int
	}{
		{name: "the kubeconfig names the server; QPS and burst are the flags'",
			opts:     func(o *Options) { o.Kubeconfig, o.KubeAPIQPS, o.KubeAPIBurst = kubeconfig, 20.5, 100 },
			wantHost: "https://from-kubeconfig:6443", wantQPS: 20.5, wantBurst: 100},
		{name: "--master overrides the kubeconfig's server",
			opts:     func(o *Options) { o.Kubeconfig, o.Master = kubeconfig, "https://master:6443" },
			wantHost: "https://master:6443", wantQPS: 5, wantBurst: 10},
		{name: "--master alone is enough",
			opts:     func(o *Options) { o.Master = "https://master:6443" },
			wantHost: "https://master:6443", wantQPS: 5, wantBurst: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := NewOptions()
			tt.opts(opts)
			config, err := restConfig(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if config.Host != tt.wantHost || config.QPS != tt.wantQPS || config.Burst != tt.wantBurst {
				t.Errorf("host, QPS, burst = %s, %v, %d; want %s, %v, %d", config.Host, config.QPS, config.Burst, tt.wantHost, tt.wantQPS, tt.wantBurst)
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
	leading, controllersStopping := make(chan struct{}), make(chan struct{})
	finish := make(chan struct{})
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
	select {
	case <-leaderCtx.Done():
		t.Fatal("the Lease would be released while the controllers still run")
	default:
	}
	close(finish)
	<-ran
	if leaderCtx.Err() == nil {
		t.Fatal("the Lease is not released after the controllers stopped")
	}
}
