//go:build tools

// Package monitoring pins Prometheus' promtool, which `make
// test-monitoring` runs on deploy/overlays/monitoring: `promtool check
// rules` parses every expression with Prometheus' own PromQL parser, and
// `promtool test rules` shows each alert firing and resolving on recorded
// series (test/monitoring/rules_test.yaml).
package monitoring

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
