package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// serve starts the HTTP server on addr and stops it when ctx is done. A
// port that cannot be bound is a start-up error, not a silent loss of
// metrics and health checks.
func serve(ctx context.Context, addr string, handler http.Handler) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on --http-endpoint %s: %w", addr, err)
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	logger := klog.FromContext(ctx)
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "HTTP server stopped")
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	logger.Info("Serving metrics and health checks", "address", listener.Addr().String())
	return nil
}

// legacyGatherer serves the metrics component-base registers globally, the
// workqueue metrics among them.
func legacyGatherer() prometheus.Gatherer { return legacyregistry.DefaultGatherer }
