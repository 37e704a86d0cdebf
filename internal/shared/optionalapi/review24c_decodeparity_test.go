package optionalapi

import "testing"

// Review of issue 24, commit 98dedd9. The stream decoder reads the list's
// keys itself, where the typed client (and so the reflector before the
// change) decodes the body with the API machinery's serializer. At
// 98dedd9 they differed (fixed in 17bb90f):
//   - a Status answered with 200 (a proxy, an aggregated server) was the
//     typed client's error, but the stream's empty list with no
//     resourceVersion: the informer synced an empty cache (fail open);
//   - "items": null was an empty list to the typed client, an error to the
//     stream for ever (the cache never synced);
//   - a repeated "items" key: the typed client keeps the last, the stream
//     concatenated both;
//   - data after the list: the typed client fails, the stream ignored it.

// TestReview24cStreamDecodesServerFramingAsTheTypedClient: list bodies a
// server or proxy may produce, around the items; the stream must take them
// as the typed client does, or fail where it fails.
func TestReview24cStreamDecodesServerFramingAsTheTypedClient(t *testing.T) {
	for name, body := range map[string]string{
		"items null":            `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":null}`,
		"a Status answered 200": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcd timeout","reason":"Timeout","code":504}`,
		"items twice":           `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"items":[` + r24cGrant("a", "1") + `],"items":[` + r24cGrant("b", "1") + `]}`,
		"metadata twice":        `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"items":[],"metadata":{"resourceVersion":"10"}}`,
		"Items capitalised":     `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"Items":[` + r24cGrant("a", "1") + `]}`,
		"trailing data":         r24cList("9", "", false, r24cGrant("a", "1")) + `{"items":[` + r24cGrant("b", "1") + `]}`,
	} {
		t.Run(name, func(t *testing.T) { r24cParity(t, body) })
	}
}
