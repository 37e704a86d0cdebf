// Package kubeclients builds the core Kubernetes clients every binary of
// this project uses, the same way.
package kubeclients

import (
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Core returns the client of core objects and a client of its own for
// events, both from config.
//
// Core objects travel as protobuf: a fraction of JSON's decoding cost and
// garbage when informers list thousands of claims. Clients of CRDs
// (snapshots, grants, links) keep JSON, the only encoding CRDs have, so
// build them from config, not from these. Events get a client and rate
// limit of their own, so a burst of them cannot slow the core client's
// writes or relists down.
func Core(config *rest.Config) (kube, events kubernetes.Interface, err error) {
	protobuf := Protobuf(config)
	if kube, err = kubernetes.NewForConfig(protobuf); err != nil {
		return nil, nil, err
	}
	if events, err = kubernetes.NewForConfig(rest.CopyConfig(protobuf)); err != nil {
		return nil, nil, err
	}
	return kube, events, nil
}

// Protobuf returns a copy of config that sends and asks for protobuf, for
// clients of core objects only.
func Protobuf(config *rest.Config) *rest.Config {
	protobuf := rest.CopyConfig(config)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	protobuf.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return protobuf
}

// Uncompressed turns gzip off on config's requests and responses, as
// kube-controller-manager and kube-scheduler do for theirs: between a pod
// and its API server the network is fast, and compression costs the API
// server and the client more CPU than it saves in time. On Kubernetes 1.37
// the API server gzips the informers' watch-list streams too, flushing
// after every event, which cost the sidecar 18% of its CPU per claim and
// held back its start at tens of thousands of objects
// (docs/benchmarks.md).
func Uncompressed(config *rest.Config) {
	config.DisableCompression = true
}

// RestConfig builds the API client configuration as the upstream
// components do: from kubeconfig when set, else in-cluster; with the
// component and the host name as its user agent, and without compression
// (see Uncompressed).
func RestConfig(kubeconfig, component string) (*rest.Config, error) {
	var config *rest.Config
	var err error
	if kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client configuration: %w", err)
	}
	Uncompressed(config)
	config.UserAgent = component
	if host, err := os.Hostname(); err == nil {
		config.UserAgent += "/" + host
	}
	return config, nil
}
