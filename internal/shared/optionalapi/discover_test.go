package optionalapi

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

func TestServedCandidate(t *testing.T) {
	tests := []struct {
		name    string
		served  []*metav1.APIResourceList
		failing bool
		want    int
		wantErr bool
	}{
		{name: "nothing served finds no candidate", want: -1},
		{name: "v1 is preferred over v1beta1", served: []*metav1.APIResourceList{v1beta1Grants, v1Grants}, want: 0},
		{name: "only v1beta1 served falls back to it", served: []*metav1.APIResourceList{v1beta1Grants}, want: 1},
		{
			name:   "a served group version without the resource does not count",
			served: []*metav1.APIResourceList{v1Gateways, v1beta1Grants},
			want:   1,
		},
		{
			name:   "a group version without the resource and no other finds nothing",
			served: []*metav1.APIResourceList{v1Gateways},
			want:   -1,
		},
		{name: "a discovery failure is an error, not a fallback", served: []*metav1.APIResourceList{v1beta1Grants}, failing: true, want: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			disc := newDiscovery(tt.served...)
			if tt.failing {
				disc.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection refused")
				})
			}
			got, err := servedCandidate(context.Background(), disc, grantCandidates(nil))
			if (err != nil) != tt.wantErr {
				t.Fatalf("servedCandidate() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("servedCandidate() = %d, want %d", got, tt.want)
			}
		})
	}
}
