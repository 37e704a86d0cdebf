package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// insecureClient talks to the local servers, whose certificates are
// self-signed.
var insecureClient = &http.Client{Timeout: 2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback test servers

// WaitHealthy polls url until it answers 200 OK, for up to two minutes. It
// gives up at once when one of the watched processes exits, pointing at its
// log. token, if not empty, is sent as a bearer token.
func WaitHealthy(ctx context.Context, url, token string, watched ...*Process) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for _, p := range watched {
			if exited, err := p.Exited(); exited {
				return fmt.Errorf("%s exited (%w); see %s", p.Name, err, p.LogPath())
			}
		}
		if healthy(ctx, url, token) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer OK within 2m", url)
}

func healthy(ctx context.Context, url, token string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}
