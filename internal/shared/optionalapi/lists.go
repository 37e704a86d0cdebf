package optionalapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"
)

// StreamLists returns a Candidate.ListStream that lists resource through
// client, in every namespace, asking for JSON; nil when client is nil, as
// the fake clientsets' are. codec encodes the list options, as the typed
// client's scheme does.
func StreamLists(client rest.Interface, resource string, codec runtime.ParameterCodec) func(context.Context, metav1.ListOptions) (io.ReadCloser, error) {
	if client == nil || reflect.ValueOf(client).IsNil() {
		return nil
	}
	return func(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error) {
		return client.Get().Resource(resource).VersionedParams(&opts, codec).
			SetHeader("Accept", "application/json").Stream(ctx)
	}
}

// streamList lists the candidate's objects with one consistent list (no
// resourceVersion, no limit) and decodes the JSON response one object at a
// time as it arrives, transforming each before the next is read: a first
// sync holds no more whole objects than a watch-list stream does. From
// Kubernetes 1.34 the API server serves a consistent list from its watch
// cache, copying no object, where a stream deep-copies each one, and the
// client decodes each object once rather than through a watch event's
// several passes: at 50,000 snapshots and grants, the list costs the API
// server and the sidecar about a third less CPU (docs/benchmarks.md). A
// consistent list is never older than any resourceVersion the reflector
// could ask for. Should the API server paginate it anyway, the continue
// tokens are followed.
func (lw *listWatch) streamList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch, opts.Limit, opts.Continue = "", "", 0, ""
	list := &transformedList{}
	for {
		page, err := lw.decodeStream(ctx, opts, list)
		if err != nil {
			return nil, err
		}
		if list.ResourceVersion == "" {
			list.ResourceVersion = page.ResourceVersion
		}
		if page.Continue == "" {
			return list, nil
		}
		opts.Continue = page.Continue
	}
}

// decodeStream makes one list request and appends its transformed objects
// to list; it returns the response's list metadata.
func (lw *listWatch) decodeStream(ctx context.Context, opts metav1.ListOptions, list *transformedList) (metav1.ListMeta, error) {
	body, err := lw.stream(ctx, opts)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer body.Close() //nolint:errcheck // a read-only body
	// As the typed client's decoder: the last of repeated keys wins (a
	// repeated "metadata" is decoded over the first, as into one struct), a
	// Status is an error even when answered 200, nothing may follow the
	// list, and every value must be well formed, whether it is read or not.
	s, start, head := newValueScanner(body), len(list.Items), listHead{others: map[string]json.RawMessage{}}
	err = s.object(func(key string) error {
		if err := lw.decodeMember(s, key, list, start, &head); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return head.meta, fmt.Errorf("decoding the list: %w", err)
	}
	switch head.kind {
	case "", lw.listKind():
		return head.meta, nil
	case "Status":
		list.Items = list.Items[:start]
		return head.meta, statusError(head.others)
	}
	list.Items = list.Items[:start]
	return head.meta, fmt.Errorf("decoding the list: the API server answered with a %q, not a %q", head.kind, lw.listKind())
}

// listHead is what a list response holds besides its items: its kind,
// its metadata, and its other members (a Status's).
type listHead struct {
	kind   string
	meta   metav1.ListMeta
	others map[string]json.RawMessage
}

// decodeMember decodes the list's member key: its items into list (from
// start), anything else into head.
func (lw *listWatch) decodeMember(s *valueScanner, key string, list *transformedList, start int, head *listHead) error {
	if key == "items" {
		list.Items = list.Items[:start]
		return lw.decodeItems(s, list)
	}
	value, err := s.value()
	if err != nil {
		return err
	}
	switch {
	case !json.Valid(value):
		return fmt.Errorf("invalid value %.40q", value)
	case strings.EqualFold(key, "kind"):
		// The typed client finds a body's kind with encoding/json
		// (runtime.SimpleMetaFactory), which takes the last key spelt
		// "kind" in any case.
		return json.Unmarshal(value, &head.kind)
	case key == "metadata":
		return kjson.UnmarshalCaseSensitivePreserveInts(value, &head.meta)
	}
	head.others[key] = append(json.RawMessage(nil), value...)
	return nil
}

// listKind is the kind of the lists of the candidate's objects.
func (lw *listWatch) listKind() string {
	return reflect.TypeOf(lw.newObject()).Elem().Name() + "List"
}

// statusError is the error of a Status the API server answered a list
// with, from its fields other than kind and metadata.
func statusError(fields map[string]json.RawMessage) error {
	raw, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	var status metav1.Status
	if err := json.Unmarshal(raw, &status); err != nil {
		return fmt.Errorf("decoding the Status the list was answered with: %w", err)
	}
	return &apierrors.StatusError{ErrStatus: status}
}

// decodeItems decodes a list's items array, each item as the API
// machinery's JSON serializer would (case-sensitive field names), and
// appends each transformed to list. "items": null is no items.
func (lw *listWatch) decodeItems(s *valueScanner, list *transformedList) error {
	if c, err := s.peek(); err != nil {
		return unexpectedEOF(err)
	} else if c != '[' {
		raw, err := s.value()
		if err != nil {
			return err
		}
		if string(raw) != "null" {
			return fmt.Errorf("got %.40q, want an array", raw)
		}
		return nil
	}
	return s.array(func(raw []byte) error {
		obj := lw.newObject()
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
			return err
		}
		return lw.appendTransformed(list, obj)
	})
}

// newObjectLike returns a function making new empty objects of object's
// type.
func newObjectLike(object runtime.Object) func() runtime.Object {
	if object == nil {
		return nil
	}
	typ := reflect.TypeOf(object).Elem()
	return func() runtime.Object { return reflect.New(typ).Interface().(runtime.Object) }
}

// appendTransformed appends obj, transformed, to list.
func (lw *listWatch) appendTransformed(list *transformedList, obj runtime.Object) error {
	t, err := lw.transform(obj)
	if err != nil {
		return err
	}
	o, ok := t.(runtime.Object)
	if !ok {
		return fmt.Errorf("the transform returned %T, not a runtime.Object", t)
	}
	list.Items = append(list.Items, o)
	return nil
}

// listPageSize is the number of objects a page of a transformed list
// holds, when it cannot be streamed (no Candidate.ListStream). Pages come from the API server's watch cache, so their number
// costs the API server little, but each is a request under the client's
// rate limit (--kube-api-qps, 5 by default): 5,000 keeps 50,000 objects
// of a kind within the default burst, and an untransformed page to a few
// megabytes.
const listPageSize = 5000

// listPages lists the candidate's objects in pages of listPageSize, with
// a consistent list as streamList, and transforms each page's objects as
// the page arrives, so that no more than one page of whole objects is held
// at a time. An expired continue token is an error: the reflector lists
// again.
func (lw *listWatch) listPages(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch, opts.Limit, opts.Continue = "", "", listPageSize, ""
	list := &transformedList{}
	for {
		page, err := lw.ListWatch.ListWithContext(ctx, opts)
		if err != nil {
			return nil, err
		}
		m, err := meta.ListAccessor(page)
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractListWithAlloc(page)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if err := lw.appendTransformed(list, item); err != nil {
				return nil, err
			}
		}
		if list.ResourceVersion == "" {
			list.ResourceVersion = m.GetResourceVersion()
		}
		if m.GetContinue() == "" {
			return list, nil
		}
		opts.Continue = m.GetContinue()
	}
}

// transformedList is a list of transformed objects, as listPages returns
// it to the reflector: the objects themselves, not copies in a typed
// list's slice.
type transformedList struct {
	metav1.ListMeta
	Items []runtime.Object
}

// GetObjectKind makes transformedList a runtime.Object; it has no kind.
func (l *transformedList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject makes transformedList a runtime.Object.
func (l *transformedList) DeepCopyObject() runtime.Object {
	out := &transformedList{Items: make([]runtime.Object, len(l.Items))}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i, o := range l.Items {
		out.Items[i] = o.DeepCopyObject()
	}
	return out
}
