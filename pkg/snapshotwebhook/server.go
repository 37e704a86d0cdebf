package snapshotwebhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// The server's timeouts against slow or stuck clients, those of upstream
// external-snapshotter's conversion webhook: kube-apiserver gives a
// webhook timeoutSeconds (at most 30 s, 2 s in deploy/) anyway.
const (
	readTimeout  = 10 * time.Second
	writeTimeout = 10 * time.Second
	idleTimeout  = 15 * time.Second
	// shutdownTimeout bounds how long requests in flight may take once the
	// webhook is told to stop.
	shutdownTimeout = 10 * time.Second
)

// ServerConfig says where and with which certificate to serve.
type ServerConfig struct {
	// Addr is the address to listen on, e.g. ":443".
	Addr string
	// CertFile and KeyFile are the serving certificate and key, watched
	// and reloaded when they change.
	CertFile, KeyFile string
	Handler           http.Handler
}

// Server serves HTTPS (TLS 1.2 or later) with a certificate reloaded from
// disk when its files change: controller-runtime's certwatcher watches them
// (and polls, as a Secret volume's symlink swap can escape a watch), and
// every new TLS connection gets the latest certificate, while connections
// and requests in flight keep the one they started with.
type Server struct {
	listener net.Listener
	watcher  *certwatcher.CertWatcher
	server   *http.Server
}

// Listen loads the certificate and binds the address. A certificate that
// cannot be loaded or a port that cannot be bound is a start-up error.
func Listen(ctx context.Context, cfg ServerConfig) (*Server, error) {
	watcher, err := certwatcher.New(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading --tls-cert-file and --tls-private-key-file: %w", err)
	}
	listener, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	base := context.WithoutCancel(ctx)
	server := &http.Server{
		Handler:      cfg.Handler,
		ReadTimeout:  readTimeout,
		WriteTimeout: writeTimeout,
		IdleTimeout:  idleTimeout,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: watcher.GetCertificate,
			NextProtos:     []string{"h2", "http/1.1"},
		},
		// Requests log with the webhook's logger.
		BaseContext: func(net.Listener) context.Context { return base },
		// So do the server's own errors (TLS handshakes that failed: TCP
		// probes, clients that do not trust the certificate), verbosely.
		ErrorLog: log.New(logWriter{klog.FromContext(ctx).V(2)}, "", 0),
	}
	return &Server{listener: listener, watcher: watcher, server: server}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Serve serves until ctx is done, then waits up to shutdownTimeout for
// requests in flight. It returns nil after a shutdown, the error otherwise.
func (s *Server) Serve(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan error, 1)
	go func() { watched <- s.watcher.Start(ctx) }()
	served := make(chan error, 1)
	go func() { served <- s.server.ServeTLS(s.listener, "", "") }()
	logger.Info("Serving admission reviews over HTTPS", "address", s.Addr().String())
	select {
	case err := <-served:
		return fmt.Errorf("HTTPS server stopped: %w", err)
	case err := <-watched:
		if err != nil {
			_ = s.server.Close()
			return fmt.Errorf("watching the certificate: %w", err)
		}
		<-ctx.Done()
	case <-ctx.Done():
	}
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer stop()
	if err := s.server.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping the HTTPS server: %w", err)
	}
	return nil
}

// logWriter writes net/http's error log lines to a logger.
type logWriter struct{ logger klog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.logger.Info("HTTPS server", "msg", strings.TrimSpace(string(p)))
	return len(p), nil
}
