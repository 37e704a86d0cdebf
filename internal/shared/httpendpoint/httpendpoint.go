// Package httpendpoint serves a component's --http-endpoint: metrics and
// health checks over plain HTTP, stopped with the component's context.
package httpendpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"
)

// shutdownTimeout bounds how long requests in flight may take once ctx ends.
const shutdownTimeout = 5 * time.Second

// Serve starts serving handler on addr and stops when ctx is done. It
// returns the address it listens on. A port that cannot be bound is a
// start-up error, not a silent loss of metrics and health checks.
func Serve(ctx context.Context, addr string, handler http.Handler) (net.Addr, error) {
	listener, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on --http-endpoint %s: %w", addr, err)
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
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	logger.Info("Serving metrics and health checks", "address", listener.Addr().String())
	return listener.Addr(), nil
}
