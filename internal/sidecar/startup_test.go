package sidecar

import (
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
			if !config.DisableCompression {
				t.Error("the client asks for gzip'ed responses, want compression off")
			}
		})
	}
}
