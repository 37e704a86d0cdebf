package transfer

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
		check   func(*Options) bool
	}{
		"defaults": {args: nil, check: func(o *Options) bool {
			return o.Retention == time.Minute && o.WorkerThreads == 4 && !o.LeaderElection.Enabled && o.MetricsPath == "/metrics"
		}},
		"the sidecar's flags": {args: []string{"--kubeconfig=/k", "--leader-election", "--http-endpoint=:8080", "--worker-threads=2", "--resync-period=1m", "--retention=5s"},
			check: func(o *Options) bool {
				return o.Kubeconfig == "/k" && o.LeaderElection.Enabled && o.HTTPEndpoint == ":8080" && o.WorkerThreads == 2 && o.Retention == 5*time.Second
			}},
		"a negative retention is refused":   {args: []string{"--retention=-1s"}, wantErr: "--retention"},
		"no worker is refused":              {args: []string{"--worker-threads=0"}, wantErr: "--worker-threads"},
		"a metrics path without slash":      {args: []string{"--http-endpoint=:8080", "--metrics-path=m"}, wantErr: "--metrics-path"},
		"an argument that is no flag fails": {args: []string{"retention"}, wantErr: "unexpected arguments"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(o) {
				t.Errorf("parseFlags(%q) = %+v, %v", tc.args, o, err)
			}
		})
	}
}

func TestTokenIs128RandomBitsInBase64URL(t *testing.T) {
	a, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newToken()
	if len(a) != 22 || a == b || strings.ContainsAny(a, "+/=") {
		t.Errorf("Tokens %q and %q, want two different 22-character base64url strings", a, b)
	}
}
