package optionalapi

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestStatusErr(t *testing.T) {
	candidates := grantCandidates(nil)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}, "",
		errors.New(`User "system:serviceaccount:kube-system:csi-provisioner" cannot list resource "referencegrants"`))
	forbiddenWatch := apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}, "",
		errors.New(`User "system:serviceaccount:kube-system:csi-provisioner" cannot watch resource "referencegrants"`))
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}, "")

	tests := []struct {
		name   string
		status status
		is     error
		want   string
		// state is what the availability gauges say (API.Status).
		state State
	}{
		{
			name:   "before the first discovery the cache is not synced",
			status: status{chosen: -1},
			is:     ErrNotSynced,
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants or gateway.networking.k8s.io/v1beta1/referencegrants): cache not synced yet: discovery has not completed",
			state:  StateNotSynced,
		},
		{
			name:   "no served candidate asks whether the CRD is installed",
			status: status{chosen: -1, discovered: true},
			is:     ErrNotServed,
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants or gateway.networking.k8s.io/v1beta1/referencegrants) is not served by the API server: is the CRD installed?",
			state:  StateNotServed,
		},
		{
			name:   "a discovery failure is reported with its cause",
			status: status{chosen: -1, discovered: true, discoveryErr: errors.New("connection refused")},
			want:   "cannot discover whether the ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants or gateway.networking.k8s.io/v1beta1/referencegrants) is served: connection refused",
			state:  StateFailed,
		},
		{
			name:   "a served candidate that has not listed yet is not synced",
			status: status{chosen: 1, discovered: true},
			is:     ErrNotSynced,
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1beta1/referencegrants): cache not synced yet",
			state:  StateNotSynced,
		},
		{
			name:   "a forbidden list says which RBAC rule is missing",
			status: status{chosen: 0, discovered: true, listErr: forbidden, refused: &refusal{verb: verbList, err: forbidden}},
			is:     ErrForbidden,
			want:   `cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: grant get, list and watch on referencegrants.gateway.networking.k8s.io to this sidecar's ServiceAccount (referencegrants.gateway.networking.k8s.io is forbidden: User "system:serviceaccount:kube-system:csi-provisioner" cannot list resource "referencegrants")`,
			state:  StateForbidden,
		},
		{
			name:   "a forbidden watch after an allowed list asks for watch only",
			status: status{chosen: 0, discovered: true, refused: &refusal{verb: verbWatch, err: forbiddenWatch}},
			is:     ErrForbidden,
			want:   `cannot watch gateway.networking.k8s.io/v1/referencegrants: forbidden: grant watch on referencegrants.gateway.networking.k8s.io to this sidecar's ServiceAccount (referencegrants.gateway.networking.k8s.io is forbidden: User "system:serviceaccount:kube-system:csi-provisioner" cannot watch resource "referencegrants")`,
			state:  StateForbidden,
		},
		{
			name:   "a refusal outlives the informer that synced after it was recorded",
			status: status{chosen: 0, discovered: true, listErr: errors.New("i/o timeout"), refused: &refusal{verb: verbWatch, err: forbiddenWatch}},
			is:     ErrForbidden,
			want:   `cannot watch gateway.networking.k8s.io/v1/referencegrants: forbidden: grant watch on referencegrants.gateway.networking.k8s.io to this sidecar's ServiceAccount (referencegrants.gateway.networking.k8s.io is forbidden: User "system:serviceaccount:kube-system:csi-provisioner" cannot watch resource "referencegrants")`,
			state:  StateForbidden,
		},
		{
			name:   "a list that finds no resource means the CRD was removed",
			status: status{chosen: 0, discovered: true, listErr: notFound},
			is:     ErrNotServed,
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants) is not served by the API server: is the CRD installed?",
			state:  StateNotServed,
		},
		{
			name:   "any other list error is reported with the not-synced cache",
			status: status{chosen: 0, discovered: true, listErr: errors.New("i/o timeout")},
			is:     ErrNotSynced,
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants): cache not synced yet: last list error: i/o timeout",
			state:  StateNotSynced,
		},
		{
			name:   "a failed Prepare is reported",
			status: status{chosen: 0, discovered: true, prepareErr: errors.New("informer has already started")},
			want:   "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants): cannot prepare its informer: informer has already started",
			state:  StateFailed,
		},
		{
			name:   "a synced informer stays usable after a transient list error",
			status: status{chosen: 0, discovered: true, listErr: errors.New("connection refused"), synced: true},
			state:  StateAvailable,
		},
		{
			name:   "refused credentials are reported as such",
			status: status{chosen: 0, discovered: true, refused: &refusal{verb: verbList, err: apierrors.NewUnauthorized("token expired")}},
			is:     ErrForbidden,
			want:   "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: the API server does not accept this sidecar's credentials (token expired)",
			state:  StateForbidden,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.status.err("ReferenceGrant", candidates)
			if got := stateOf(err); got != tt.state {
				t.Errorf("state = %q, want %q", got, tt.state)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err() = %q, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("err() = nil, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("err() = %q\nwant     %q", got, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%q, %v) = false", err, tt.is)
			}
		})
	}
}

func TestCandidateString(t *testing.T) {
	got := grantCandidates(nil)[1].String()
	if want := "gateway.networking.k8s.io/v1beta1/referencegrants"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !strings.Contains(grantCandidates(nil)[0].groupResource(), "referencegrants.gateway.networking.k8s.io") {
		t.Errorf("groupResource() = %q", grantCandidates(nil)[0].groupResource())
	}
}
