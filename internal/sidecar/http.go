package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
)

// legacyGatherer serves the metrics component-base registers globally, the
// workqueue metrics among them.
func legacyGatherer() prometheus.Gatherer { return legacyregistry.DefaultGatherer }
