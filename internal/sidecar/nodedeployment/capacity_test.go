package nodedeployment

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

func TestHasCapacity(t *testing.T) {
	segment := func(n string) *csi.Topology { return &csi.Topology{Segments: map[string]string{topologyKey: n}} }
	available := map[string]int64{"": 100, "foo": 100, "bar": 50}
	tests := []struct {
		name      string
		requested int64
		requisite []*csi.Topology
		want      bool
		wantCalls []string
		wantErr   bool
	}{
		{"nothing requested always fits, without asking", 0, []*csi.Topology{segment("foo")}, true, nil, false},
		{"distributed immediate, no capacity: one byte short does not fit", 101, []*csi.Topology{segment("foo")}, false, []string{"foo"}, false},
		{"exactly the available capacity fits", 100, []*csi.Topology{segment("foo")}, true, []string{"foo"}, false},
		{"without requisite topology the driver is asked without one", 100, nil, true, []string{""}, false},
		{"any segment with room is enough", 80, []*csi.Topology{segment("bar"), segment("foo")}, true, []string{"bar", "foo"}, false},
		{"a GetCapacity error is returned", 80, []*csi.Topology{segment("broken"), segment("foo")}, false, []string{"broken"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			got, err := HasCapacity(context.Background(), tt.requested, tt.requisite, func(_ context.Context, s *csi.Topology) (int64, error) {
				name := s.GetSegments()[topologyKey]
				calls = append(calls, name)
				if name == "broken" {
					return 0, errors.New("unavailable")
				}
				return available[name], nil
			})
			if got != tt.want || (err != nil) != tt.wantErr || strings.Join(calls, ",") != strings.Join(tt.wantCalls, ",") {
				t.Errorf("HasCapacity = %v, %v after GetCapacity for %q; want %v, error %v, after %q", got, err, calls, tt.want, tt.wantErr, tt.wantCalls)
			}
		})
	}
}
