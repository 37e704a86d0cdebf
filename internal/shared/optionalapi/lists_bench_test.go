package optionalapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkStreamList decodes a list of 5,000 grants as the API server
// sends it, each as long as the bench's (docs/benchmarks.md), transformed
// by a function that keeps every object: the cost of a first sync's
// decoding, per list.
func BenchmarkStreamList(b *testing.B) {
	const objects = 5000
	var items []string
	for i := range objects {
		items = append(items, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"creationTimestamp":"2026-11-28T05:30:17Z","generation":1,"managedFields":[{"apiVersion":"gateway.networking.k8s.io/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:from":{},"f:to":{}}},"manager":"bench","operation":"Update","time":"2026-11-28T05:30:17Z"}],"name":"grant-%d","namespace":"bench-mem-%02d","resourceVersion":"%d","uid":"6c1d3f0a-5b8e-4a57-9f0e-%012d"},"spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"bench-mem-%02d"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"snapshot-%d"}]}}`,
			i, i%50, 1000+i, i, (i+1)%50, i))
	}
	body := []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","items":[` + strings.Join(items, ",") + `],"kind":"ReferenceGrantList","metadata":{"resourceVersion":"77"}}` + "\n")
	lw := &listWatch{
		transform: func(o any) (any, error) { return o, nil },
		stream: func(context.Context, metav1.ListOptions) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(body)), nil
		},
		newObject: newObjectLike(&gatewayv1.ReferenceGrant{}),
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		list, err := lw.streamList(b.Context(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(list.(*transformedList).Items); n != objects {
			b.Fatalf("%d objects, want %d", n, objects)
		}
	}
}
