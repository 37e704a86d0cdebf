package referencegrant

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// Review of issue 24, commit 98dedd9: the ReferenceGrant cache lists
// through Candidate.ListStream, decoding and transforming (toCached) each
// grant as it arrives, then the informer transforms it again. Checked end
// to end against an API server speaking JSON: what a tenant writes in a
// grant allows exactly what the typed object says, in its own namespace
// only, for both versions.

// r24cServer serves the grants of version (v1 or v1beta1) as a JSON list
// (items by namespace/name => spec JSON and metadata extras), and holds
// watches open.
type r24cServer struct {
	mu    sync.Mutex
	items []string
	paths []string
}

func (s *r24cServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.Path)
	items := strings.Join(s.items, ",")
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") == "true" {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	_, _ = fmt.Fprintf(w, `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1","items":[%s],"metadata":{"resourceVersion":"5"}}`, items)
}

func TestReview24cStreamedGrantsDecideAsWritten(t *testing.T) {
	// A tenant of "evil" writes grants with case variants of keys, hoping
	// one decoder reads them as another's: only the exact keys count (the
	// API server's own decoding, and the typed client's).
	items := []string{
		// Allows test's claims to read prod's foo-backup.
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":"bar","namespace":"prod","resourceVersion":"3","managedFields":[{"manager":"m"}]},
		  "spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"test"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"foo-backup"}]}}`,
		// evil's grant, claiming prod as its namespace in a case variant.
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":"spoof","namespace":"evil","Namespace":"prod","NAMESPACE":"prod"},
		  "spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"evil"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot"}]},
		  "Spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"evil"}]}}`,
		// A grant in prod whose from names evil only in a case variant.
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":"variant","namespace":"prod"},
		  "spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"other","Namespace":"evil"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","Name":"x"}]}}`,
	}
	for _, version := range []string{"v1", "v1beta1"} {
		t.Run(version, func(t *testing.T) {
			s := &r24cServer{items: items}
			server := httptest.NewServer(s)
			t.Cleanup(server.Close)
			client, err := gatewayclientset.NewForConfig(&rest.Config{Host: server.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			c := NewChecker(Config{Client: client, Discovery: servedVersions(version)})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); c.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			waitUntil(t, "the grants are cached", func() bool { return c.Err() == nil })

			ref := func(fromNS, toNS, name string) Reference {
				return Reference{FromGroup: "", FromKind: "PersistentVolumeClaim", FromNamespace: fromNS,
					ToGroup: "snapshot.storage.k8s.io", ToKind: "VolumeSnapshot", ToNamespace: toNS, ToName: name}
			}
			for _, tc := range []struct {
				ref  Reference
				want bool
			}{
				{ref("test", "prod", "foo-backup"), true},
				{ref("test", "prod", "other"), false},
				{ref("evil", "prod", "foo-backup"), false},
				{ref("evil", "prod", "x"), false},
				{ref("other", "prod", "x"), true}, // "variant" allows other to every prod snapshot ("Name" is not "name")
				{ref("evil", "evil", "anything"), true},
			} {
				if d := c.Check(tc.ref); d.Allowed != tc.want {
					t.Errorf("%+v: allowed %v (%s), want %v", tc.ref, d.Allowed, d.Message, tc.want)
				}
			}
			s.mu.Lock()
			for _, p := range s.paths {
				if !strings.HasPrefix(p, "/apis/gateway.networking.k8s.io/"+version+"/referencegrants") {
					t.Errorf("asked %s, want the %s collection", p, version)
				}
			}
			s.mu.Unlock()
		})
	}
}
