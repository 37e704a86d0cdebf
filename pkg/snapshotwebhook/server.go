package snapshotwebhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
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
	// maxHeaderBytes bounds a request's headers: kube-apiserver sends a
	// few hundred bytes (a bearer token from its admission kubeconfig
	// fits too).
	maxHeaderBytes = 64 << 10
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
	// ClientCAFile, when set, is --client-ca-file: every client must
	// present a certificate it signed.
	ClientCAFile string
	// EnableHTTP2 is --enable-http2: HTTP/2 besides HTTP/1.1.
	EnableHTTP2 bool
	// Handler serves every request.
	Handler http.Handler
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
	// http2 and clientCAFile are for the log.
	http2        bool
	clientCAFile string
}

// Listen loads the certificate (and the client CA) and binds the address.
// A certificate that cannot be loaded or a port that cannot be bound is a
// start-up error.
func Listen(ctx context.Context, cfg ServerConfig) (*Server, error) {
	watcher, err := certwatcher.New(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading --tls-cert-file and --tls-private-key-file: %w", err)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: watcher.GetCertificate}
	if cfg.ClientCAFile != "" {
		if tlsConfig.ClientCAs, err = loadCAs(cfg.ClientCAFile); err != nil {
			return nil, err
		}
		tlsConfig.ClientAuth = tls.RequireAndVerifyClientCert
	}
	listener, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	// HTTP/1.1, and HTTP/2 only when asked for (--enable-http2).
	protocols := &http.Protocols{}
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(cfg.EnableHTTP2)
	base := context.WithoutCancel(ctx)
	server := &http.Server{
		Handler:        cfg.Handler,
		ReadTimeout:    readTimeout,
		WriteTimeout:   writeTimeout,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		TLSConfig:      tlsConfig,
		Protocols:      protocols,
		// Requests log with the webhook's logger.
		BaseContext: func(net.Listener) context.Context { return base },
		// So do the server's own errors (TLS handshakes that failed: TCP
		// probes, clients that do not trust the certificate or present
		// none), verbosely.
		ErrorLog: log.New(logWriter{klog.FromContext(ctx).V(2)}, "", 0),
	}
	return &Server{listener: listener, watcher: watcher, server: server, http2: cfg.EnableHTTP2, clientCAFile: cfg.ClientCAFile}, nil
}

// loadCAs reads a PEM file of CA certificates.
func loadCAs(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading --client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", file)
	}
	return pool, nil
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
	logger.Info("Serving admission reviews over HTTPS", "address", s.Addr().String(), "http2", s.http2, "clientCAFile", s.clientCAFile)
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
