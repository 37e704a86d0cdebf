package optionalapi

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// syncCounter records OnSynced calls.
type syncCounter struct {
	calls   atomic.Int32
	version atomic.Value // string
}

func (s *syncCounter) onSynced(c Candidate) {
	s.version.Store(c.GroupVersion.Version)
	s.calls.Add(1)
}

func newAPI(disc *discoveryStub, client *gatewayfake.Clientset, synced *syncCounter) *API {
	return New(Config{
		Name:         "ReferenceGrant",
		Discovery:    disc,
		Candidates:   grantCandidates(client),
		PollInterval: 10 * time.Millisecond,
		OnSynced:     synced.onSynced,
	})
}

// available reports whether Informer returns a synced informer.
func available(api *API) bool {
	_, _, err := api.Informer()
	return err == nil
}

func TestAbsentAPIBecomesAvailableWithoutRestart(t *testing.T) {
	disc := newDiscovery()
	synced := &syncCounter{}
	api := newAPI(disc, gatewayfake.NewClientset(), synced)
	start(t, api)

	waitUntil(t, "discovery has found that the API is not served", func() bool {
		_, _, err := api.Informer()
		return errors.Is(err, ErrNotServed)
	})
	_, _, err := api.Informer()
	if !strings.Contains(err.Error(), "is the CRD installed?") {
		t.Errorf("Informer() error = %q, want it to ask whether the CRD is installed", err)
	}
	if n := synced.calls.Load(); n != 0 {
		t.Fatalf("OnSynced called %d times before the API is served", n)
	}
	if got, want := api.Status(), (Status{Name: "ReferenceGrant", State: StateNotServed}); got != want {
		t.Errorf("Status() = %+v, want %+v", got, want)
	}

	disc.serve(v1Grants, v1beta1Grants)
	waitUntil(t, "the API is available", func() bool { return available(api) })
	waitUntil(t, "OnSynced is called", func() bool { return synced.calls.Load() == 1 })
	inf, c, _ := api.Informer()
	if inf == nil || !inf.HasSynced() {
		t.Errorf("Informer() returned an unsynced informer")
	}
	if c.GroupVersion.Version != "v1" {
		t.Errorf("Informer() candidate = %s, want v1", c)
	}
	if got := api.Status().State; got != StateAvailable {
		t.Errorf("Status().State = %q once synced, want %q", got, StateAvailable)
	}
}

func TestVersionChoice(t *testing.T) {
	tests := []struct {
		name   string
		served []*metav1.APIResourceList
		want   string
	}{
		{name: "v1 is preferred over v1beta1", served: []*metav1.APIResourceList{v1beta1Grants, v1Grants}, want: "v1"},
		{name: "only v1beta1 served uses v1beta1", served: []*metav1.APIResourceList{v1Gateways, v1beta1Grants}, want: "v1beta1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synced := &syncCounter{}
			api := newAPI(newDiscovery(tt.served...), gatewayfake.NewClientset(), synced)
			start(t, api)

			waitUntil(t, "OnSynced is called", func() bool { return synced.calls.Load() == 1 })
			if got := synced.version.Load(); got != tt.want {
				t.Errorf("OnSynced got version %v, want %s", got, tt.want)
			}
			_, c, err := api.Informer()
			if err != nil {
				t.Fatalf("Informer() error = %v", err)
			}
			if c.GroupVersion.Version != tt.want {
				t.Errorf("Informer() candidate = %s, want %s", c, tt.want)
			}
		})
	}
}

func TestPrepareRunsBeforeTheInformerAndItsFailureIsReported(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(Candidate, cache.SharedIndexInformer) error
		wantErr string
	}{
		{
			name: "an indexer added by Prepare is usable once synced",
			prepare: func(_ Candidate, inf cache.SharedIndexInformer) error {
				return inf.AddIndexers(cache.Indexers{"byName": func(obj any) ([]string, error) {
					return []string{obj.(metav1.Object).GetName()}, nil
				}})
			},
		},
		{
			name:    "a failing Prepare is reported by Informer",
			prepare: func(Candidate, cache.SharedIndexInformer) error { return errors.New("bad indexer") },
			wantErr: "ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants): cannot prepare its informer: bad indexer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := gatewayfake.NewClientset(&gatewayv1.ReferenceGrant{
				ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "bar"},
			})
			api := New(Config{
				Name:         "ReferenceGrant",
				Discovery:    newDiscovery(v1Grants),
				Candidates:   grantCandidates(client),
				PollInterval: 10 * time.Millisecond,
				Prepare:      tt.prepare,
			})
			start(t, api)

			if tt.wantErr != "" {
				waitUntil(t, "the Prepare failure is reported", func() bool {
					_, _, err := api.Informer()
					return err != nil && err.Error() == tt.wantErr
				})
				return
			}
			waitUntil(t, "the API is available", func() bool { return available(api) })
			inf, _, _ := api.Informer()
			objs, err := inf.GetIndexer().ByIndex("byName", "bar")
			if err != nil || len(objs) != 1 {
				t.Errorf("ByIndex(byName, bar) = %d objects, %v; want 1", len(objs), err)
			}
		})
	}
}

func TestSettledIsClosedByTheFirstAnswer(t *testing.T) {
	tests := []struct {
		name   string
		served []*metav1.APIResourceList
		want   func(error) bool
	}{
		{name: "synced", served: []*metav1.APIResourceList{v1Grants}, want: func(err error) bool { return err == nil }},
		{name: "not served", want: func(err error) bool { return errors.Is(err, ErrNotServed) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(newDiscovery(tt.served...), gatewayfake.NewClientset(), &syncCounter{})
			select {
			case <-api.Settled():
				t.Fatal("Settled is closed before Run has an answer")
			default:
			}
			start(t, api)
			select {
			case <-api.Settled():
			case <-time.After(eventually):
				t.Fatal("Settled is not closed")
			}
			if _, _, err := api.Informer(); !tt.want(err) {
				t.Errorf("Informer() error = %v once settled", err)
			}
		})
	}
}
