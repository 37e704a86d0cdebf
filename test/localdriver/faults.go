package localdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// FaultRule is one fault switch of the driver: which calls it hits and what
// it does to them. The fault-injection suite (test/faults) writes rules
// into Config.FaultsFile while the driver runs.
type FaultRule struct {
	// Method is the short name of the CSI method, e.g. "CreateVolume";
	// "*" hits every method.
	Method string `json:"method"`
	// Code, if set, is the gRPC code the call answers, by name, e.g.
	// "Unavailable" or "DeadlineExceeded".
	Code string `json:"code,omitempty"`
	// Delay is waited before the answer (Go duration, e.g. "2s"). The wait
	// ends early, with the caller's context error, when the caller gives up.
	Delay string `json:"delay,omitempty"`
	// AfterCall runs the call first and applies Delay and Code to its
	// answer: with Code "DeadlineExceeded", CreateVolume creates the volume
	// and the caller never learns it. Without it the call does not run
	// when Code is set.
	AfterCall bool `json:"afterCall,omitempty"`
	// Count is how many calls the rule hits after the file last changed;
	// 0 hits every call.
	Count int `json:"count,omitempty"`
	// Probability of hitting a matching call; 0 means 1.
	Probability float64 `json:"probability,omitempty"`
}

// Faults is the content of Config.FaultsFile.
type Faults struct {
	Rules []FaultRule `json:"rules"`
}

// faultAction is what applies to one call: the first matching rule that
// fires.
type faultAction struct {
	code      codes.Code
	inject    bool // code is set
	delay     time.Duration
	afterCall bool
}

// faultSwitch reads the faults file on every call, so that a test can
// change the driver's behavior at run time without restarting it. The
// hit counters restart whenever the file's content changes.
type faultSwitch struct {
	path string

	mu      sync.Mutex
	content []byte
	rules   []compiledRule
	err     error
}

type compiledRule struct {
	FaultRule
	code  codes.Code
	delay time.Duration
	hits  int
}

// ParseFaults parses and checks the content of a faults file.
func ParseFaults(data []byte) (Faults, error) {
	var f Faults
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Faults{}, fmt.Errorf("parse faults: %w", err)
	}
	_, err := compileRules(f.Rules)
	return f, err
}

func compileRules(rules []FaultRule) ([]compiledRule, error) {
	out := make([]compiledRule, 0, len(rules))
	for i, r := range rules {
		c := compiledRule{FaultRule: r}
		if r.Method == "" {
			return nil, fmt.Errorf("fault rule %d: method is empty", i)
		}
		if r.Code != "" {
			if err := c.code.UnmarshalJSON([]byte(`"` + toUpperSnake(r.Code) + `"`)); err != nil {
				return nil, fmt.Errorf("fault rule %d: unknown gRPC code %q", i, r.Code)
			}
		}
		if r.Delay != "" {
			d, err := time.ParseDuration(r.Delay)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("fault rule %d: delay %q is not a duration >= 0", i, r.Delay)
			}
			c.delay = d
		}
		if r.Count < 0 || r.Probability < 0 || r.Probability > 1 {
			return nil, fmt.Errorf("fault rule %d: count must be >= 0 and probability within [0, 1]", i)
		}
		out = append(out, c)
	}
	return out, nil
}

// toUpperSnake turns a code name as codes.Code.String spells it
// ("DeadlineExceeded") into the form its JSON decoding reads
// ("DEADLINE_EXCEEDED").
func toUpperSnake(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' && i > 0 && s[i-1] >= 'a' && s[i-1] <= 'z' {
			b = append(b, '_')
		}
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// next returns the action for a call of method, counting the hit. An
// unreadable or invalid file fails every call, so that a mistyped rule
// cannot pass a test unnoticed; a missing file means no faults.
func (s *faultSwitch) next(method string) (faultAction, error) {
	data, err := os.ReadFile(s.path)
	if os.IsNotExist(err) {
		data, err = nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return faultAction{}, status.Errorf(codes.Internal, "faults file: %v", err)
	}
	if !bytes.Equal(data, s.content) || s.rules == nil && s.err == nil {
		s.content, s.rules, s.err = data, []compiledRule{}, nil
		if len(bytes.TrimSpace(data)) > 0 {
			var f Faults
			if f, s.err = ParseFaults(data); s.err == nil {
				s.rules, s.err = compileRules(f.Rules)
			}
		}
	}
	if s.err != nil {
		return faultAction{}, status.Errorf(codes.Internal, "faults file %s: %v", s.path, s.err)
	}
	for i := range s.rules {
		r := &s.rules[i]
		if r.Method != "*" && r.Method != method {
			continue
		}
		if r.Count > 0 && r.hits >= r.Count {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && rand.Float64() >= r.Probability { //nolint:gosec // test faults
			continue
		}
		r.hits++
		return faultAction{code: r.code, inject: r.Code != "", delay: r.delay, afterCall: r.AfterCall}, nil
	}
	return faultAction{}, nil
}

// wait waits d or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// injectFaults returns an interceptor that applies the rules of the faults
// file at path to each call.
func injectFaults(path string) grpc.UnaryServerInterceptor {
	s := &faultSwitch{path: path}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method := shortMethod(info.FullMethod)
		act, err := s.next(method)
		if err != nil {
			return nil, err
		}
		if act == (faultAction{}) {
			return handler(ctx, req)
		}
		logger := klog.FromContext(ctx)
		if !act.afterCall {
			if err := wait(ctx, act.delay); err != nil {
				return nil, err
			}
			if act.inject {
				logger.Info("Injected fault", "code", act.code.String())
				return nil, status.Errorf(act.code, "injected fault before %s", method)
			}
			return handler(ctx, req)
		}
		resp, err := handler(ctx, req)
		if werr := wait(ctx, act.delay); werr != nil {
			return nil, werr
		}
		if act.inject {
			logger.Info("Injected fault after the call ran", "code", act.code.String(), "callErr", err)
			return nil, status.Errorf(act.code, "injected fault after %s ran", method)
		}
		return resp, err
	}
}

// shortMethod returns "CreateVolume" for "/csi.v1.Controller/CreateVolume".
func shortMethod(full string) string { return path.Base(full) }

// CallRecord is one line of Config.CallLog: a call as the driver received
// it (Phase "start") or answered it (Phase "end", with its gRPC code).
type CallRecord struct {
	Time   time.Time `json:"time"`
	Phase  string    `json:"phase"`
	Method string    `json:"method"`
	// Name is CreateVolume's and CreateSnapshot's name, or the volume or
	// snapshot ID the call names.
	Name string `json:"name,omitempty"`
	Code string `json:"code,omitempty"`
}

// journalCalls returns an interceptor that appends a CallRecord to the file
// at path when each call starts and ends. Each record is one write, so a
// driver killed mid-call leaves whole lines.
func journalCalls(path string) grpc.UnaryServerInterceptor {
	var mu sync.Mutex
	write := func(ctx context.Context, r CallRecord) {
		line, _ := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.Write(append(line, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			klog.FromContext(ctx).Error(err, "Could not write the call log", "path", path)
		}
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method, name := shortMethod(info.FullMethod), callName(req)
		write(ctx, CallRecord{Time: time.Now(), Phase: "start", Method: method, Name: name})
		resp, err := handler(ctx, req)
		write(ctx, CallRecord{Time: time.Now(), Phase: "end", Method: method, Name: name, Code: status.Code(err).String()})
		return resp, err
	}
}

// callName is what a request names: a name to create, or an ID.
func callName(req any) string {
	switch r := req.(type) {
	case interface{ GetName() string }:
		return r.GetName()
	case interface{ GetVolumeId() string }:
		return r.GetVolumeId()
	case interface{ GetSnapshotId() string }:
		return r.GetSnapshotId()
	}
	return ""
}

// ReadCallLog reads the records of a call log; a missing file has none.
func ReadCallLog(path string) ([]CallRecord, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CallRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r CallRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("call log %s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// WriteFaults replaces the faults file at path atomically, so that the
// driver never reads half of it.
func WriteFaults(path string, f Faults) error {
	if _, err := compileRules(f.Rules); err != nil {
		return err
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp := tempPath(path)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
