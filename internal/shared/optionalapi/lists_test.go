package optionalapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gatewayscheme "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/scheme"
)

// pagedServer answers lists of grants in pages, as the API server does
// with a limit: it records each request's options, and serves page i of
// pages when the continue token is "page-<i>".
type pagedServer struct {
	pages    [][]string // the names of each page's grants
	rv       string
	requests []metav1.ListOptions
	fail     map[int]error // the error of a page, by index
}

func (s *pagedServer) list(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.requests = append(s.requests, opts)
	i := 0
	if opts.Continue != "" {
		if _, err := fmt.Sscanf(opts.Continue, "page-%d", &i); err != nil {
			return nil, err
		}
	}
	if err := s.fail[i]; err != nil {
		return nil, err
	}
	list := &gatewayv1.ReferenceGrantList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
	if i+1 < len(s.pages) {
		list.Continue = fmt.Sprintf("page-%d", i+1)
	}
	for _, name := range s.pages[i] {
		list.Items = append(list.Items, gatewayv1.ReferenceGrant{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"trimmed": "no"}},
			Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: "a"}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}},
			},
		})
	}
	return list, nil
}

func (s *pagedServer) listWatch(transform cache.TransformFunc) *listWatch {
	return &listWatch{ListWatch: &cache.ListWatch{
		ListWithContextFunc: s.list,
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("not watched here")
		},
	}, transform: transform}
}

// dropLabels is a transform that leaves a mark of each object it saw.
func dropLabels(seen *int) cache.TransformFunc {
	return func(obj any) (any, error) {
		*seen++
		g, ok := obj.(*gatewayv1.ReferenceGrant)
		if !ok {
			return obj, nil
		}
		g.Labels = nil
		return g, nil
	}
}

func TestListPagesTransformsEveryPageAndFollowsTheContinueTokens(t *testing.T) {
	s := &pagedServer{pages: [][]string{{"a", "b"}, {"c"}, {"d", "e"}}, rv: "42"}
	seen := 0
	// The reflector asks for the cache's contents at any age, in pages of
	// its own size.
	obj, err := s.listWatch(dropLabels(&seen)).ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 3 {
		t.Fatalf("%d requests, want one per page (3)", len(s.requests))
	}
	for i, r := range s.requests {
		if r.ResourceVersion != "" || r.ResourceVersionMatch != "" || r.Limit != listPageSize {
			t.Errorf("request %d: resourceVersion %q (match %q), limit %d; want a consistent read (no resourceVersion) of %d",
				i, r.ResourceVersion, r.ResourceVersionMatch, r.Limit, listPageSize)
		}
		if want := map[bool]string{true: "", false: fmt.Sprintf("page-%d", i)}[i == 0]; r.Continue != want {
			t.Errorf("request %d: continue %q, want %q", i, r.Continue, want)
		}
	}
	m, err := metaList(obj)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetResourceVersion() != "42" || m.GetContinue() != "" {
		t.Errorf("list resourceVersion %q continue %q, want 42 and none: the reflector watches from there", m.GetResourceVersion(), m.GetContinue())
	}
	items := obj.(*transformedList).Items
	var names []string
	for _, item := range items {
		g := item.(*gatewayv1.ReferenceGrant)
		if g.Labels != nil {
			t.Errorf("grant %s kept its labels: not transformed", g.Name)
		}
		names = append(names, g.Name)
	}
	if fmt.Sprint(names) != "[a b c d e]" || seen != 5 {
		t.Errorf("items %v, transformed %d; want [a b c d e], each transformed once", names, seen)
	}
}

func TestListPagesFailsWholeWhenAPageFails(t *testing.T) {
	expired := apierrors.NewResourceExpired("the continue token is too old")
	s := &pagedServer{pages: [][]string{{"a"}, {"b"}, {"c"}}, rv: "7", fail: map[int]error{1: expired}}
	seen := 0
	obj, err := s.listWatch(dropLabels(&seen)).ListWithContext(t.Context(), metav1.ListOptions{})
	if !apierrors.IsResourceExpired(err) || obj != nil {
		t.Fatalf("ListWithContext() = %v, %v; want no list and the expired token's error, so that the reflector lists again", obj, err)
	}
}

func TestListPagesRefusesATransformThatIsNoObject(t *testing.T) {
	s := &pagedServer{pages: [][]string{{"a"}}}
	_, err := s.listWatch(func(any) (any, error) { return "not an object", nil }).ListWithContext(t.Context(), metav1.ListOptions{})
	if err == nil {
		t.Fatal("a transform returning a string went unnoticed")
	}
}

func TestWithoutTransformTheListIsTheServersOwn(t *testing.T) {
	s := &pagedServer{pages: [][]string{{"a"}, {"b"}}, rv: "3"}
	obj, err := s.listWatch(nil).ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 1 || s.requests[0].ResourceVersion != "0" || s.requests[0].Limit != 500 {
		t.Errorf("requests %+v, want the reflector's own, once", s.requests)
	}
	if _, ok := obj.(*gatewayv1.ReferenceGrantList); !ok {
		t.Errorf("got %T, want the server's list", obj)
	}
}

func TestTransformedListIsAListTheReflectorReads(t *testing.T) {
	l := &transformedList{ListMeta: metav1.ListMeta{ResourceVersion: "9"},
		Items: []runtime.Object{&gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}}
	items, err := extractForReflector(l)
	if err != nil || len(items) != 1 || items[0] != l.Items[0] {
		t.Fatalf("extracted %v, %v; want the list's own object", items, err)
	}
	c := l.DeepCopyObject().(*transformedList)
	c.Items[0].(*gatewayv1.ReferenceGrant).Name = "changed"
	if l.Items[0].(*gatewayv1.ReferenceGrant).Name != "a" || c.ResourceVersion != "9" {
		t.Error("DeepCopyObject shares the items or drops the list metadata")
	}
	if c.GetObjectKind().GroupVersionKind() != (schema.GroupVersionKind{}) {
		t.Error("a transformed list has a kind")
	}
}

// metaList and extractForReflector read a list as client-go's reflector
// does.
func metaList(obj runtime.Object) (metav1.ListInterface, error) { return meta.ListAccessor(obj) }

func extractForReflector(obj runtime.Object) ([]runtime.Object, error) {
	return meta.ExtractListWithAlloc(obj)
}

// listServer serves ReferenceGrant lists as JSON, as the API server does:
// page i of pages when the continue token is "page-<i>"; it records each
// request's query and Accept header.
type listServer struct {
	pages   []string // each page's items, as JSON array elements
	status  int      // if not 0, every answer's status, with a Status body
	queries []string
	accepts []string
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.queries = append(s.queries, r.URL.RawQuery)
	s.accepts = append(s.accepts, r.Header.Get("Accept"))
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		w.WriteHeader(s.status)
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":%d,"message":"no"}`, s.status)
		return
	}
	i := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		_, _ = fmt.Sscanf(c, "page-%d", &i)
	}
	next := ""
	if i+1 < len(s.pages) {
		next = fmt.Sprintf("page-%d", i+1)
	}
	_, _ = fmt.Fprintf(w, `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{"resourceVersion":"77","continue":%q},"unknown":{"a":[1,2]},"items":[%s]}`, next, s.pages[i])
}

func grant(name string) string {
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":%q,"namespace":"ns","labels":{"trimmed":"no"}},"spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"a"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot"}]}}`, name)
}

func (s *listServer) listWatch(t *testing.T, transform cache.TransformFunc) *listWatch {
	t.Helper()
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	client, err := gatewayclientset.NewForConfig(&rest.Config{Host: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	stream := StreamLists(client.GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec)
	if stream == nil {
		t.Fatal("no stream from a real client")
	}
	return &listWatch{ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, errors.New("listed without the stream")
		},
	}, transform: transform, stream: stream, newObject: newObjectLike(&gatewayv1.ReferenceGrant{})}
}

func TestStreamListDecodesAndTransformsEveryObject(t *testing.T) {
	s := &listServer{pages: []string{grant("a") + "," + grant("b"), grant("c")}}
	seen := 0
	obj, err := s.listWatch(t, dropLabels(&seen)).ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	list := obj.(*transformedList)
	var names []string
	for _, item := range list.Items {
		g := item.(*gatewayv1.ReferenceGrant)
		if g.Labels != nil || g.Namespace != "ns" || len(g.Spec.To) != 1 || g.Spec.To[0].Kind != "VolumeSnapshot" {
			t.Errorf("grant %+v: not decoded whole, or not transformed", g)
		}
		names = append(names, g.Name)
	}
	if fmt.Sprint(names) != "[a b c]" || seen != 3 || list.ResourceVersion != "77" || list.Continue != "" {
		t.Errorf("items %v (%d transformed), resourceVersion %q, continue %q; want [a b c], 3, 77 and none",
			names, seen, list.ResourceVersion, list.Continue)
	}
	if len(s.queries) != 2 {
		t.Fatalf("%d requests, want 2 (the server paginated)", len(s.queries))
	}
	for i, q := range s.queries {
		v, _ := url.ParseQuery(q)
		if v.Has("resourceVersion") || v.Has("limit") || (i == 1) != (v.Get("continue") == "page-1") {
			t.Errorf("request %d: query %q; want a consistent list, unlimited, continued only after the first", i, q)
		}
		if !strings.HasPrefix(s.accepts[i], "application/json") {
			t.Errorf("request %d: Accept %q, want JSON", i, s.accepts[i])
		}
	}
}

func TestStreamListDecodesFieldNamesCaseSensitively(t *testing.T) {
	// The API machinery's serializer ignores "Metadata"; encoding/json
	// alone would take it for "metadata".
	s := &listServer{pages: []string{`{"metadata":{"name":"real","namespace":"ns"},"Metadata":{"name":"impostor"}}`}}
	obj, err := s.listWatch(t, func(o any) (any, error) { return o, nil }).ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := obj.(*transformedList).Items[0].(*gatewayv1.ReferenceGrant); g.Name != "real" {
		t.Errorf("name %q, want real", g.Name)
	}
}

func TestStreamListRefusalIsTheAPIServersError(t *testing.T) {
	s := &listServer{status: http.StatusForbidden}
	_, err := s.listWatch(t, func(o any) (any, error) { return o, nil }).ListWithContext(t.Context(), metav1.ListOptions{})
	var r *refusal
	if !apierrors.IsForbidden(err) || !errors.As(err, &r) {
		t.Errorf("error %v, want the API server's Forbidden, marked as a refusal", err)
	}
}

func TestStreamListFailsOnABrokenResponse(t *testing.T) {
	for name, page := range map[string]string{
		"truncated item":        `{"metadata":{"name":"a"`,
		"item of a wrong shape": `{"metadata":"not an object"}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := &listServer{pages: []string{page}}
			obj, err := s.listWatch(t, func(o any) (any, error) { return o, nil }).ListWithContext(t.Context(), metav1.ListOptions{})
			if err == nil || obj != nil {
				t.Errorf("ListWithContext() = %v, %v; want an error and no list", obj, err)
			}
		})
	}
}

func TestStreamListsWithoutARealClient(t *testing.T) {
	if StreamLists(gatewayfake.NewClientset().GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec) != nil {
		t.Error("a fake clientset, which has no REST client, got a stream")
	}
}
