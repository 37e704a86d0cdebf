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
	"sync/atomic"
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
	// ShutdownDelay is --shutdown-delay-duration: how long Serve keeps
	// answering once its context ends (see Serve).
	ShutdownDelay time.Duration
	// Readiness is what /readyz answers, told when the drain starts; the
	// server's own when nil.
	Readiness *Readiness
	// after waits for the end of the drain; time.After when nil.
	after func(time.Duration) <-chan time.Time
	// MaxConnections bounds the connections open at once (Limits.MaxConnections); 0: no bound.
	MaxConnections int
}

// Readiness answers /readyz: ready until the webhook starts draining
// (Server.Serve, once its context ends), so that whatever routes to it by
// readiness stops sending it calls.
type Readiness struct{ draining atomic.Bool }

// ServeHTTP answers 200 while serving, 503 once draining.
func (r *Readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if r.draining.Load() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
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
	// readiness, shutdownDelay and after are ServerConfig's.
	readiness     *Readiness
	shutdownDelay time.Duration
	after         func(time.Duration) <-chan time.Time
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
	if cfg.MaxConnections > 0 {
		listener = &cappedListener{Listener: listener, max: int64(cfg.MaxConnections)}
	}
	// HTTP/1.1, and HTTP/2 only when asked for (--enable-http2).
	protocols := &http.Protocols{}
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(cfg.EnableHTTP2)
	s := &Server{listener: listener, watcher: watcher, readiness: cfg.Readiness, shutdownDelay: cfg.ShutdownDelay, after: cfg.after,
		http2: cfg.EnableHTTP2, clientCAFile: cfg.ClientCAFile}
	if s.readiness == nil {
		s.readiness = &Readiness{}
	}
	if s.after == nil {
		s.after = time.After
	}
	base := context.WithoutCancel(ctx)
	s.server = &http.Server{
		Handler:        s.closingWhenDraining(cfg.Handler),
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
	return s, nil
}

// closingWhenDraining serves with next, and while draining answers with
// Connection: close (a GOAWAY in HTTP/2): kube-apiserver's next call then
// opens a new connection, which the Service routes to a replica that
// stays, instead of reusing one to this replica.
func (s *Server) closingWhenDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.readiness.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
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

// Serve serves until ctx is done, then drains and stops (issue 22, defect
// 10): for ShutdownDelay it reports not ready and keeps accepting and
// answering, each connection closed after its response, so that calls
// routed to it while endpoints move (kube-proxy, kube-apiserver's caches,
// connections kube-apiserver keeps alive) are answered; then it stops
// accepting and waits up to shutdownTimeout for the requests in flight.
// It returns nil after a shutdown, the error otherwise.
func (s *Server) Serve(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	// The certificate is watched through the drain.
	watching, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	watched := make(chan error, 1)
	go func() { watched <- s.watcher.Start(watching) }()
	served := make(chan error, 1)
	go func() { served <- s.server.ServeTLS(s.listener, "", "") }()
	logger.Info("Serving admission reviews over HTTPS", "address", s.Addr().String(), "http2", s.http2, "clientCAFile", s.clientCAFile)
	select {
	case err := <-served:
		return fmt.Errorf("HTTPS server stopped: %w", err)
	case err := <-watched:
		_ = s.server.Close()
		if err == nil {
			err = errors.New("stopped")
		}
		return fmt.Errorf("watching the certificate: %w", err)
	case <-ctx.Done():
	}
	s.readiness.draining.Store(true)
	if s.shutdownDelay > 0 {
		logger.Info("Draining: not ready, still answering, closing each connection after its response", "for", s.shutdownDelay)
		select {
		case <-s.after(s.shutdownDelay):
		case err := <-served:
			return fmt.Errorf("HTTPS server stopped: %w", err)
		}
	}
	logger.Info("Stopping: no new connections, finishing the requests in flight", "timeout", shutdownTimeout)
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
