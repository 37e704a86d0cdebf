package optionalapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	snapscheme "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/scheme"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayscheme "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/scheme"

	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	linkscheme "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/scheme"
)

// Review of issue 24, commit 98dedd9: informers of optional APIs list with
// one consistent list decoded (and transformed) one object at a time, or in
// pages. These tests drive httptest servers speaking the API server's JSON
// and check what the listWatch, and the reflector behind API.Run, make of
// cut, failing and odd responses.

// r24cGrant is a ReferenceGrant's JSON, as the API server writes it.
func r24cGrant(name, rv string) string {
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"labels":{"l":"v"}},"spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"a"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot"}]}}`, name, rv)
}

// r24cList is a ReferenceGrantList's JSON; metadataLast puts the list's
// metadata after its items, as a server may.
func r24cList(rv, cont string, metadataLast bool, items ...string) string {
	m := fmt.Sprintf(`"metadata":{"resourceVersion":%q,"continue":%q}`, rv, cont)
	i := `"items":[` + strings.Join(items, ",") + `]`
	if metadataLast {
		return `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1",` + i + `,` + m + `}`
	}
	return `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1",` + m + `,` + i + `}`
}

// r24cStatus writes an API server error answer.
func r24cStatus(w http.ResponseWriter, code int, reason metav1.StatusReason) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":%q,"code":%d}`, reason, code)
}

// r24cStreamLW is a listWatch that lists through the stream of a real
// gateway client against h (the typed list path is refused, so that a test
// notices it being used), and the typed client itself.
func r24cStreamLW(t *testing.T, h http.Handler, transform cache.TransformFunc) (*listWatch, gatewayclientset.Interface) {
	t.Helper()
	client := r24cClient(t, h)
	stream := StreamLists(client.GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec)
	return &listWatch{ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, errors.New("listed without the stream")
		},
	}, transform: transform, stream: stream, newObject: newObjectLike(&gatewayv1.ReferenceGrant{})}, client
}

// r24cPagedLW is a listWatch that lists in pages through the typed client
// against h (no stream).
func r24cPagedLW(t *testing.T, h http.Handler, transform cache.TransformFunc) *listWatch {
	t.Helper()
	grants := r24cClient(t, h).GatewayV1().ReferenceGrants(metav1.NamespaceAll)
	return &listWatch{ListWatch: NewListWatch(grants.List, grants.Watch), transform: transform}
}

// r24cClient is a gateway client of a server answering with h.
func r24cClient(t *testing.T, h http.Handler) gatewayclientset.Interface {
	t.Helper()
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	client, err := gatewayclientset.NewForConfig(&rest.Config{Host: server.URL, DisableCompression: true, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func r24cIdentity(o any) (any, error) { return o, nil }

func r24cNames(t *testing.T, obj runtime.Object) string {
	t.Helper()
	var names []string
	for _, item := range obj.(*transformedList).Items {
		names = append(names, item.(*gatewayv1.ReferenceGrant).Name)
	}
	return strings.Join(names, ",")
}

// TestReview24cEveryCutOfTheListFailsIt: a list response cut at any byte
// (connection reset, process killed, proxy timeout) must fail the list,
// whatever the framing: with a Content-Length, chunked, or delimited by
// the connection's close, where the client sees a clean end of file. Only
// the whole response is a list; a cut one reported as complete would be
// synced into the cache as if the missing objects were deleted.
func TestReview24cEveryCutOfTheListFailsIt(t *testing.T) {
	for _, metadataLast := range []bool{false, true} {
		body := r24cList("77", "", metadataLast, r24cGrant("a", "1"), r24cGrant("b", "2"), r24cGrant("c", "3"))
		for _, framing := range []string{"content-length", "close", "chunked"} {
			t.Run(fmt.Sprintf("%s/metadataLast=%v", framing, metadataLast), func(t *testing.T) {
				var mu sync.Mutex
				cut := 0
				h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					mu.Lock()
					k := cut
					mu.Unlock()
					conn, buf, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					defer conn.Close() //nolint:errcheck
					header := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					switch framing {
					case "content-length":
						header += fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body[:k])
					case "close":
						header += "Connection: close\r\n\r\n" + body[:k]
					case "chunked":
						header += "Transfer-Encoding: chunked\r\n\r\n"
						if k > 0 {
							header += fmt.Sprintf("%x\r\n%s\r\n", k, body[:k])
						}
						if k == len(body) {
							header += "0\r\n\r\n"
						}
					}
					_, _ = buf.WriteString(header)
					_ = buf.Flush()
				})
				lw, _ := r24cStreamLW(t, h, r24cIdentity)
				for k := 0; k <= len(body); k++ {
					mu.Lock()
					cut = k
					mu.Unlock()
					began := time.Now()
					ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
					obj, err := lw.ListWithContext(ctx, metav1.ListOptions{})
					hung := ctx.Err() != nil
					cancel()
					if d := time.Since(began); d > 500*time.Millisecond {
						t.Logf("cut after %d: %s (%v)", k, d, err)
					}
					if hung {
						t.Fatalf("cut after %d of %d bytes: the list hung (%v)", k, len(body), err)
					}
					if k < len(body) {
						if err == nil || obj != nil {
							t.Fatalf("cut after %d of %d bytes: list %v (names %q), error %v; want an error and no list",
								k, len(body), obj, func() string {
									if obj == nil {
										return ""
									}
									return r24cNames(t, obj)
								}(), err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("whole response: %v", err)
					}
					if got := r24cNames(t, obj); got != "a,b,c" || obj.(*transformedList).ResourceVersion != "77" {
						t.Fatalf("whole response: items %q rv %q, want a,b,c at 77", got, obj.(*transformedList).ResourceVersion)
					}
				}
			})
		}
	}
}

// r24cPagedServer serves two pages of grants (a,b then c), the second
// answered by fail when set; it counts the requests of each page.
type r24cPagedServer struct {
	mu    sync.Mutex
	fail  func(w http.ResponseWriter) bool // true when it answered
	pages [2]int
}

func (s *r24cPagedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Query().Get("continue") == "" {
		s.pages[0]++
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, r24cList("10", "page-1", false, r24cGrant("a", "1"), r24cGrant("b", "2")))
		return
	}
	s.pages[1]++
	if s.fail != nil && s.fail(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// A later page's resourceVersion is the list's (the continue token
	// pins it); a different one here must not be taken.
	_, _ = io.WriteString(w, r24cList("10", "", false, r24cGrant("c", "3")))
}

// TestReview24cErrorsBetweenPagesKeepTheirMeaning: an error answer to a
// continued list fails the whole list with the API server's error, so that
// optionalapi's handling sees what it saw before: refusals (401, 403) stop
// the informer (lw records them), 404 is a CRD gone, 410 an expired token
// the reflector lists again after, 500 a retry. Both paths: the stream of a
// CRD client and the pages of a typed client.
func TestReview24cErrorsBetweenPagesKeepTheirMeaning(t *testing.T) {
	cases := []struct {
		name    string
		fail    func(w http.ResponseWriter) bool
		check   func(error) bool
		refusal bool
	}{
		{"403", func(w http.ResponseWriter) bool { r24cStatus(w, 403, metav1.StatusReasonForbidden); return true }, apierrors.IsForbidden, true},
		{"401", func(w http.ResponseWriter) bool { r24cStatus(w, 401, metav1.StatusReasonUnauthorized); return true }, apierrors.IsUnauthorized, true},
		{"404 Status", func(w http.ResponseWriter) bool { r24cStatus(w, 404, metav1.StatusReasonNotFound); return true }, apierrors.IsNotFound, false},
		{"404 page not found", func(w http.ResponseWriter) bool {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, "404 page not found\n")
			return true
		}, apierrors.IsNotFound, false},
		{"410", func(w http.ResponseWriter) bool { r24cStatus(w, 410, metav1.StatusReasonExpired); return true }, apierrors.IsResourceExpired, false},
		{"500", func(w http.ResponseWriter) bool { r24cStatus(w, 500, metav1.StatusReasonInternalError); return true }, apierrors.IsInternalError, false},
		{"200 cut", func(w http.ResponseWriter) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			_, _ = io.WriteString(w, `{"kind":"ReferenceGrantList","items":[`+r24cGrant("c", "3"))
			return true
		}, func(err error) bool { return err != nil }, false},
	}
	for _, path := range []string{"stream", "pages"} {
		for _, tc := range cases {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				s := &r24cPagedServer{fail: tc.fail}
				var lw *listWatch
				if path == "stream" {
					lw, _ = r24cStreamLW(t, s, r24cIdentity)
				} else {
					lw = r24cPagedLW(t, s, r24cIdentity)
				}
				obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0"})
				if obj != nil || !tc.check(err) {
					t.Fatalf("list = %v, %v; want no list and the page's error", obj, err)
				}
				var r *refusal
				if got := errors.As(err, &r) && lw.refused.Load() != nil; got != tc.refusal {
					t.Errorf("refusal recorded %v, want %v (error %v)", got, tc.refusal, err)
				}
				if s.pages[0] != 1 || s.pages[1] != 1 {
					t.Errorf("pages asked %v, want each once", s.pages)
				}
			})
		}
	}
	// 429 with Retry-After: the client waits and asks again, then the
	// whole list is returned, each item once.
	for _, path := range []string{"stream", "pages"} {
		t.Run(path+"/429 then the page", func(t *testing.T) {
			throttled := false
			s := &r24cPagedServer{fail: func(w http.ResponseWriter) bool {
				if throttled {
					return false
				}
				throttled = true
				w.Header().Set("Retry-After", "0")
				r24cStatus(w, 429, metav1.StatusReasonTooManyRequests)
				return true
			}}
			var lw *listWatch
			if path == "stream" {
				lw, _ = r24cStreamLW(t, s, r24cIdentity)
			} else {
				lw = r24cPagedLW(t, s, r24cIdentity)
			}
			obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := r24cNames(t, obj); got != "a,b,c" || obj.(*transformedList).ResourceVersion != "10" || obj.(*transformedList).Continue != "" {
				t.Errorf("items %q, rv %q, continue %q; want a,b,c at 10, no continue", got, obj.(*transformedList).ResourceVersion, obj.(*transformedList).Continue)
			}
		})
	}
}

// TestReview24cStreamListsOfTheSidecarsClientsAskForTheWholeCollection:
// each production ListStream (snapshots, contents, links, grants of both
// versions) asks for its collection in every namespace, as JSON, with no
// resourceVersion, limit or selector: its client's parameter codec must
// know ListOptions for its group version, or every list fails.
func TestReview24cStreamListsOfTheSidecarsClientsAskForTheWholeCollection(t *testing.T) {
	var mu sync.Mutex
	var got []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Accept"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"metadata":{"resourceVersion":"5"},"items":[]}`)
	}))
	t.Cleanup(server.Close)
	cfg := &rest.Config{Host: server.URL}
	snaps, err := snapclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	links, err := linkclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := gatewayclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	streams := map[string]func(context.Context, metav1.ListOptions) (io.ReadCloser, error){
		"/apis/snapshot.storage.k8s.io/v1/volumesnapshots":           StreamLists(snaps.SnapshotV1().RESTClient(), "volumesnapshots", snapscheme.ParameterCodec),
		"/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents":    StreamLists(snaps.SnapshotV1().RESTClient(), "volumesnapshotcontents", snapscheme.ParameterCodec),
		"/apis/snapshot.storage.k8s.io/v1alpha1/volumesnapshotlinks": StreamLists(links.SnapshotV1alpha1().RESTClient(), "volumesnapshotlinks", linkscheme.ParameterCodec),
		"/apis/gateway.networking.k8s.io/v1/referencegrants":         StreamLists(grants.GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec),
		"/apis/gateway.networking.k8s.io/v1beta1/referencegrants":    StreamLists(grants.GatewayV1beta1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec),
	}
	for path, stream := range streams {
		mu.Lock()
		got = nil
		mu.Unlock()
		lw := &listWatch{ListWatch: &cache.ListWatch{}, transform: r24cIdentity, stream: stream,
			newObject: func() runtime.Object { return &gatewayv1.ReferenceGrant{} }}
		// The reflector's own options: any age, a page of 500.
		obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if rv := obj.(*transformedList).ResourceVersion; rv != "5" {
			t.Errorf("%s: resourceVersion %q, want 5", path, rv)
		}
		if len(got) != 1 || got[0] != path+"? application/json" {
			t.Errorf("requests %q, want one GET %s with no query, accepting JSON", got, path)
		}
	}
}

// r24cAPIServer is a scripted API server for ReferenceGrants: lists
// answered by list (called with the request number, from 0), watches by
// watch (nil: held open until the client goes).
type r24cAPIServer struct {
	mu    sync.Mutex
	lists int
	list  func(n int, w http.ResponseWriter)
	watch func(w http.ResponseWriter, r *http.Request)
}

func (s *r24cAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") == "true" {
		s.mu.Lock()
		watch := s.watch
		s.mu.Unlock()
		if watch != nil {
			watch(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if r.URL.Query().Get("limit") == "1" { // Run's permission probe
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, r24cList("1", "", false))
		return
	}
	s.mu.Lock()
	n := s.lists
	s.lists++
	list := s.list
	s.mu.Unlock()
	list(n, w)
}

func (s *r24cAPIServer) set(list func(n int, w http.ResponseWriter), watch func(w http.ResponseWriter, r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list, s.watch = list, watch
}

func (s *r24cAPIServer) listed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// api is an API of the server's v1 grants listed through the stream.
func (s *r24cAPIServer) api(t *testing.T) *API {
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	client, err := gatewayclientset.NewForConfig(&rest.Config{Host: server.URL, DisableCompression: true, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := grantCandidates(client)[0]
	c.ListStream = StreamLists(client.GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec)
	return New(Config{Name: "ReferenceGrant", Discovery: newDiscovery(v1Grants), Candidates: []Candidate{c},
		PollInterval: 10 * time.Millisecond, RetryRefused: time.Hour, RetryRefusedMax: time.Hour,
		Clock: newManualClock(), Transform: r24cIdentity})
}

func r24cWriteList(w http.ResponseWriter, rv string, items ...string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, r24cList(rv, "", false, items...))
}

// r24cExpireWatch answers a watch with an ERROR event of 410, after which
// the reflector lists again.
// The watch's headers are already sent.
func r24cExpireWatch(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}`+"\n")
}

func r24cStoreNames(api *API) string {
	inf, _, err := api.Informer()
	if err != nil {
		return "error: " + err.Error()
	}
	var names []string
	for _, o := range inf.GetStore().List() {
		names = append(names, o.(*gatewayv1.ReferenceGrant).Name)
	}
	if len(names) == 2 && names[0] > names[1] {
		names[0], names[1] = names[1], names[0]
	}
	return strings.Join(names, ",")
}

// TestReview24cCutListsNeverSync: while every list is cut mid-response the
// informer is never synced, and Informer says so; the first whole list
// syncs it with every object.
func TestReview24cCutListsNeverSync(t *testing.T) {
	s := &r24cAPIServer{}
	body := r24cList("20", "", false, r24cGrant("a", "1"), r24cGrant("b", "2"))
	s.set(func(n int, w http.ResponseWriter) {
		if n < 3 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			_, _ = io.WriteString(w, body[:len(body)*(n+1)/4]) // a quarter, a half, three quarters
			return
		}
		r24cWriteList(w, "20", r24cGrant("a", "1"), r24cGrant("b", "2"))
	}, nil)
	api := s.api(t)
	start(t, api)
	waitUntil(t, "two cut lists", func() bool { return s.listed() >= 2 })
	if _, _, err := api.Informer(); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("after cut lists Informer() error = %v, want ErrNotSynced", err)
	}
	waitUntil(t, "synced with a and b", func() bool { return r24cStoreNames(api) == "a,b" })
}

// TestReview24cRelistAfterALostWatch: a synced cache whose watch expires
// lists again; what the relist meets decides what Informer answers:
// objects deleted meanwhile leave the cache; a refusal (403) stops the
// cache answering (ErrForbidden), a CRD removed (404) too (ErrNotServed),
// never the old objects.
func TestReview24cRelistAfterALostWatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		relist func(w http.ResponseWriter)
		want   func(api *API) bool
	}{
		{"b deleted meanwhile", func(w http.ResponseWriter) { r24cWriteList(w, "30", r24cGrant("a", "1")) },
			func(api *API) bool { return r24cStoreNames(api) == "a" }},
		{"403", func(w http.ResponseWriter) { r24cStatus(w, 403, metav1.StatusReasonForbidden) },
			func(api *API) bool { _, _, err := api.Informer(); return errors.Is(err, ErrForbidden) }},
		{"404", func(w http.ResponseWriter) { r24cStatus(w, 404, metav1.StatusReasonNotFound) },
			func(api *API) bool { _, _, err := api.Informer(); return errors.Is(err, ErrNotServed) }},
		{"404 page not found", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, "404 page not found\n")
		}, func(api *API) bool { _, _, err := api.Informer(); return errors.Is(err, ErrNotServed) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &r24cAPIServer{}
			lost := make(chan struct{})
			s.set(func(n int, w http.ResponseWriter) {
				if n == 0 {
					r24cWriteList(w, "20", r24cGrant("a", "1"), r24cGrant("b", "2"))
					return
				}
				tc.relist(w)
			}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-lost: // the watch is lost: it expires
					r24cExpireWatch(w, r)
				}
			})
			api := s.api(t)
			start(t, api)
			waitUntil(t, "synced with a and b", func() bool { return r24cStoreNames(api) == "a,b" })
			close(lost)
			waitUntil(t, tc.name, func() bool { return tc.want(api) })
		})
	}
}

// r24cParity compares the stream decoder with the typed client's list of
// the same response body.
func r24cParity(t *testing.T, body string) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
	lw, client := r24cStreamLW(t, h, r24cIdentity)
	typed, typedErr := client.GatewayV1().ReferenceGrants("").List(t.Context(), metav1.ListOptions{})
	obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
	if (typedErr == nil) != (err == nil) {
		t.Fatalf("typed client error %v, stream error %v: they disagree", typedErr, err)
	}
	if err != nil {
		return
	}
	list := obj.(*transformedList)
	if typed.ResourceVersion != list.ResourceVersion || typed.Continue != list.Continue {
		t.Errorf("typed client rv %q continue %q, stream rv %q continue %q", typed.ResourceVersion, typed.Continue, list.ResourceVersion, list.Continue)
	}
	if len(typed.Items) != len(list.Items) {
		t.Fatalf("typed client %d items, stream %d", len(typed.Items), len(list.Items))
	}
	for i := range typed.Items {
		if !reflect.DeepEqual(&typed.Items[i], list.Items[i]) {
			t.Errorf("item %d: typed client %+v\nstream %+v", i, typed.Items[i], list.Items[i])
		}
	}
}

// TestReview24cStreamDecodesTenantContentAsTheTypedClient: whatever a
// tenant can put in a grant the API server stores (odd field casing,
// unknown fields, big numbers, a big object) decodes through the stream as
// through the typed client.
func TestReview24cStreamDecodesTenantContentAsTheTypedClient(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for name, item := range map[string]string{
		"case variants":              `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":"real","namespace":"ns","Name":"impostor","NAMESPACE":"other"},"Spec":{"from":[{"kind":"X","namespace":"evil"}]},"spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"a","Namespace":"evil"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","Name":"x"}]}}`,
		"unknown fields and numbers": `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","extra":{"n":9223372036854775807,"f":1e400,"a":[1,{"b":null}]},"metadata":{"name":"n","namespace":"ns","generation":9223372036854775807,"annotations":{"k":"\u0000\ud83d\ude00"}},"spec":{"from":[],"to":[]}}`,
		"big":                        `{"metadata":{"name":"big","namespace":"ns","annotations":{"a":"` + big + `"}}}`,
		"kind Status item":           `{"kind":"Status","apiVersion":"v1","status":"Failure","code":403,"metadata":{"name":"s","namespace":"ns"}}`,
	} {
		t.Run(name, func(t *testing.T) { r24cParity(t, r24cList("9", "", false, item, r24cGrant("after", "2"))) })
	}
}
