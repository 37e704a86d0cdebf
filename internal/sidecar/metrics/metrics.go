// Package metrics holds the sidecar's own Prometheus metrics: the
// cross-namespace counters KEP-3294 names, a provisioning counter broken
// down by data-source kind, which the KEP lists as missing, and the state
// gauges an operator alerts on (state.go).
package metrics

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Metrics are the counters; the zero value is not usable, call New.
type Metrics struct {
	crossNamespaceTotal  *prometheus.CounterVec
	crossNamespaceFailed *prometheus.CounterVec
	bySourceTotal        *prometheus.CounterVec
	bySourceFailed       *prometheus.CounterVec
}

// New creates the metrics and registers them with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		crossNamespaceTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cross_namespace_persistentvolumeclaim_provision_total",
			Help: "Number of volumes provisioned successfully from a data source in another namespace, by storage class.",
		}, []string{"storage_class"}),
		crossNamespaceFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cross_namespace_persistentvolumeclaim_provision_failed_total",
			Help: "Number of failed attempts to provision a volume from a data source in another namespace, grant refusals included, by storage class.",
		}, []string{"storage_class"}),
		bySourceTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "persistentvolumeclaim_provision_by_source_total",
			Help: "Number of volumes provisioned successfully, by data source kind and whether the source is named across namespaces.",
		}, []string{"source_kind", "cross_namespace"}),
		bySourceFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "persistentvolumeclaim_provision_by_source_failed_total",
			Help: "Number of failed provisioning attempts, by data source kind and whether the source is named across namespaces.",
		}, []string{"source_kind", "cross_namespace"}),
	}
	for _, c := range []prometheus.Collector{m.crossNamespaceTotal, m.crossNamespaceFailed, m.bySourceTotal, m.bySourceFailed} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return nil, err
			}
		}
	}
	return m, nil
}

// Observe counts one provisioning attempt of a claim of class with source
// src, which crosses namespaces when crosses is set (a namespaced
// dataSourceRef, or a VolumeSnapshotLink to a snapshot in another
// namespace); err is the attempt's result. A nil receiver counts nothing.
func (m *Metrics) Observe(class string, src datasource.Source, crosses bool, err error) {
	if m == nil {
		return
	}
	kind, cross := string(src.Type()), strconv.FormatBool(crosses)
	if err != nil {
		m.bySourceFailed.WithLabelValues(kind, cross).Inc()
		if crosses {
			m.crossNamespaceFailed.WithLabelValues(class).Inc()
		}
		return
	}
	m.bySourceTotal.WithLabelValues(kind, cross).Inc()
	if crosses {
		m.crossNamespaceTotal.WithLabelValues(class).Inc()
	}
}
