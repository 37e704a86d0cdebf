package optionalapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	kjson "sigs.k8s.io/json"
)

// Review 35 of d7c56f2: a list's items are found by a hand-written
// scanner (valueScanner) that counts brackets outside strings and leaves
// validity to whoever decodes the bytes it returns. The items are decoded
// by sigs.k8s.io/json, which checks them; but the list's other top-level
// values (apiVersion, or any key the stream does not read) are kept as raw
// bytes and never decoded, and the object's own framing (its commas) is
// checked by nextKey/nextMember alone. The contract (lists.go): the
// stream's result is what the typed client decodes from the same body, or
// an error; a malformed body is never a list.

// r35LW is a listWatch whose every list request is answered with body,
// read through reader(body).
func r35LW(body []byte, reader func([]byte) io.Reader) *listWatch {
	return &listWatch{ListWatch: &cache.ListWatch{}, transform: r24cIdentity,
		stream: func(context.Context, metav1.ListOptions) (io.ReadCloser, error) {
			return io.NopCloser(reader(body)), nil
		},
		newObject: newObjectLike(&gatewayv1.ReferenceGrant{})}
}

// r35ChunkReader returns data k bytes at a time, the last piece together
// with io.EOF; with zeros it answers (0, nil) before every piece.
type r35ChunkReader struct {
	data  []byte
	k     int
	zeros bool
	flip  bool
}

func (r *r35ChunkReader) Read(p []byte) (int, error) {
	if r.zeros {
		if r.flip = !r.flip; r.flip {
			return 0, nil
		}
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(r.k, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// r35Readers are the ways a response body may arrive: whole, with its
// last bytes and io.EOF together, in pieces of the sizes around the
// scanner's buffer, and with empty reads in between.
func r35Readers(oneByte bool) map[string]func([]byte) io.Reader {
	rs := map[string]func([]byte) io.Reader{
		"whole":         func(b []byte) io.Reader { return bytes.NewReader(b) },
		"data with EOF": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
		"half":          func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"zero reads":    func(b []byte) io.Reader { return &r35ChunkReader{data: b, k: 1000, zeros: true} },
	}
	for _, k := range []int{7, 4096, scanBufferSize - 1, scanBufferSize, scanBufferSize + 1} {
		rs[fmt.Sprintf("pieces of %d", k)] = func(b []byte) io.Reader { return &r35ChunkReader{data: b, k: k} }
	}
	if oneByte {
		rs["a byte at a time"] = func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }
	}
	return rs
}

// r35Typed decodes body as the typed client's serializer decodes a list
// (sigs.k8s.io/json, case-sensitive): the reference for well-formed
// bodies.
func r35Typed(body []byte) (*gatewayv1.ReferenceGrantList, error) {
	var l gatewayv1.ReferenceGrantList
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// r35Grant is a grant as the API server writes it (encoding/json, which
// escapes '"', '\\', control characters and invalid UTF-8), with the
// tenant's strings in its annotations and labels' values.
func r35Grant(t *testing.T, name string, annotations map[string]string) string {
	t.Helper()
	g := gatewayv1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1", Annotations: annotations},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: "a"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}},
		},
	}
	b, err := json.Marshal(&g)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// r35Smuggle is a string that, were a quote inside it taken for the end
// of the string, would close the grant and open a second one: a grant of
// namespace victim allowing claims of namespace attacker.
const r35Smuggle = `"}},{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant","metadata":{"name":"evil","namespace":"victim"},"spec":{"from":[{"group":"","kind":"PersistentVolumeClaim","namespace":"attacker"}],"to":[{"group":"snapshot.storage.k8s.io","kind":"VolumeSnapshot"}]}},{"metadata":{"annotations":{"x":"`

// r35CheckAsTyped lists body through every reader and checks the stream
// returns exactly the typed client's items, names in order.
func r35CheckAsTyped(t *testing.T, body []byte, wantNames string, oneByte bool) {
	t.Helper()
	want, err := r35Typed(body)
	if err != nil {
		t.Fatalf("the reference decoder refuses the body: %v", err)
	}
	var names []string
	for _, g := range want.Items {
		names = append(names, g.Name)
	}
	if got := strings.Join(names, ","); got != wantNames {
		t.Fatalf("reference decoded %q, want %q (test body wrong)", got, wantNames)
	}
	for how, reader := range r35Readers(oneByte) {
		obj, err := r35LW(body, reader).streamList(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Errorf("%s: %v; the typed client decodes %q", how, err, wantNames)
			continue
		}
		list := obj.(*transformedList)
		if got := r24cNames(t, list); got != wantNames {
			t.Errorf("%s: stream items %q, typed client %q", how, got, wantNames)
			continue
		}
		if list.ResourceVersion != want.ResourceVersion {
			t.Errorf("%s: stream rv %q, typed client %q", how, list.ResourceVersion, want.ResourceVersion)
		}
		for i := range want.Items {
			if !reflect.DeepEqual(&want.Items[i], list.Items[i]) {
				t.Errorf("%s: item %d differs from the typed client's", how, i)
			}
		}
	}
}

func r35Body(items ...string) []byte {
	return []byte(r24cList("9", "", false, items...))
}

// TestReview35TenantStringsNeitherSplitNorMergeGrants: whatever a tenant
// puts in a grant's strings, as the API server escapes it, the stream
// finds the same grants as the typed client, through any reader: no grant
// smuggled in by a quote, none dropped.
func TestReview35TenantStringsNeitherSplitNorMergeGrants(t *testing.T) {
	for name, value := range map[string]string{
		"a smuggled grant":             r35Smuggle,
		"backslash then smuggle":       `\` + r35Smuggle,
		"two backslashes then smuggle": `\\` + r35Smuggle,
		"escaped quote then smuggle":   `\"` + r35Smuggle,
		"brackets":                     `}]}]]]}}{[{[`,
		"a trailing backslash":         `abc\`,
		"only backslashes":             strings.Repeat(`\`, 9),
		"unicode and separators":       "\u2028\u2029é€😀<>&",
		"invalid UTF-8":                "\xff\xfe\"\xc0\\",
		"control characters":           "\x00\x01\x1f\t\n\r",
		"long quotes":                  strings.Repeat(`"`, 3*scanBufferSize/2),
		"long backslashes":             strings.Repeat(`\`, scanBufferSize+1),
	} {
		t.Run(name, func(t *testing.T) {
			body := r35Body(r35Grant(t, "a", map[string]string{"k": value, value: "v"}), r35Grant(t, "b", nil))
			r35CheckAsTyped(t, body, "a,b", len(body) < 1<<17)
		})
	}
}

// TestReview35EscapesAcrossEveryBufferBoundary: a run of escaped quotes
// and backslashes slid across the scanner's first buffer (64 KiB) and its
// growth to 128 KiB, so that each reader's refill falls inside an escape
// at every parity.
func TestReview35EscapesAcrossEveryBufferBoundary(t *testing.T) {
	run := strings.Repeat("\"\\", 24) + r35Smuggle
	body := func(pad int) []byte {
		return r35Body(r35Grant(t, "a", map[string]string{"k": strings.Repeat("x", pad) + run}), r35Grant(t, "b", nil))
	}
	// Where the escaped run begins and how long it is, with no padding.
	b0 := string(body(0))
	off := strings.Index(b0, `\"\\`)
	esc, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	runLen := len(esc) - 2
	if off < 0 || !strings.Contains(b0, string(esc)) {
		t.Fatalf("run not found in %s", b0)
	}
	// The whole reader's refills: at 64 KiB, then after the compaction
	// that moves the item to the buffer's start, then after the growth
	// to 128 KiB, and so on; pieces of other sizes land in between.
	var pads []int
	for i, boundary := range []int{scanBufferSize, 2 * scanBufferSize} {
		step := 3 + 10*min(i, 1) // every third byte at the first boundary (each parity of an escape), every 13th after
		for p := boundary - off - runLen - 8; p < boundary-off+300; p += step {
			pads = append(pads, p)
		}
	}
	for i, pad := range pads {
		r35CheckAsTyped(t, body(pad), "a,b", i%97 == 0 && pad < scanBufferSize)
		if t.Failed() {
			t.Fatalf("pad %d", pad)
		}
	}
}

// TestReview35EscapedTopLevelKeysAsTheTypedClient: the list's keys are
// unescaped and matched case-sensitively, as by the typed client; nested
// "items" are not the list's.
func TestReview35EscapedTopLevelKeysAsTheTypedClient(t *testing.T) {
	g := r24cGrant("a", "1")
	for name, body := range map[string]string{
		"escaped items":         `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"\u0069tems":[` + g + `]}`,
		"escaped kind Status":   `{"\u006bind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"Timeout","code":504}`,
		"ITEMS":                 `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"ITEMS":[` + g + `]}`,
		"items with a NUL":      `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"items\u0000":[` + g + `]}`,
		"nested items":          `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9","items":[` + g + `]},"x":{"items":[` + g + `]},"items":[]}`,
		"escaped metadata":      `{"kind":"ReferenceGrantList","m\u0065tadata":{"resourceVersion":"9"},"items":[` + g + `]}`,
		"white space all round": " \r\n\t{ \"kind\" :\"ReferenceGrantList\" ,\n\"metadata\"\t:{\"resourceVersion\":\"9\"} , \"items\" : [ " + g + " , " + g + " ] } \n\r\t",
	} {
		t.Run(name, func(t *testing.T) { r24cParity(t, body) })
	}
}

// TestReview35ABodyFollowedByAReadErrorIsNoList: the whole list arrives,
// then the connection fails (a reset, a bad gzip checksum): the typed
// client, which reads the body to its end, fails; so must the stream.
func TestReview35ABodyFollowedByAReadErrorIsNoList(t *testing.T) {
	body := r35Body(r24cGrant("a", "1"))
	for name, reader := range map[string]func([]byte) io.Reader{
		"error after the body": func(b []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(b), iotest.ErrReader(errors.New("connection reset")))
		},
		"error with the last byte": func(b []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(b[:len(b)-1]), &r35ErrWithData{b: b[len(b)-1:]})
		},
	} {
		if obj, err := r35LW(body, reader).streamList(t.Context(), metav1.ListOptions{}); err == nil {
			t.Errorf("%s: list %q and no error", name, r24cNames(t, obj))
		}
	}
}

// r35ErrWithData returns b together with a read error.
type r35ErrWithData struct{ b []byte }

func (r *r35ErrWithData) Read(p []byte) (int, error) {
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, errors.New("connection reset")
}

// TestReview35MalformedFramingIsNoList: bodies that are not JSON, around
// well-formed items. The typed client refuses every one (its decoder
// checks the whole body); before d7c56f2 the stream did too, for
// encoding/json's Decoder checked each value it skipped and each comma.
// Since d7c56f2 the values of the keys the stream does not read are kept
// unchecked, and a comma before the object's closing brace is taken for
// the end of the members: the stream reported these bodies as complete
// lists (the decoder of 44cdd38 refused each). FAILED at 086113a, but for
// the controls (the cut ones, the list left open).
func TestReview35MalformedFramingIsNoList(t *testing.T) {
	head := `{"kind":"ReferenceGrantList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":[` +
		r24cGrant("a", "1") + `]`
	for name, body := range map[string]string{
		"a trailing comma":                      head + `,}`,
		"a key without a value, last":           head + `,"x":}`,
		"a key without a value, first":          `{"x":,` + head[1:] + `}`,
		"a cut literal":                         head + `,"x":tru}`,
		"a literal and a string":                head + `,"x":nul"l"}`,
		"brackets of the wrong kinds":           head + `,"x":[}}`,
		"an invalid escape":                     head + `,"x":"\q"}`,
		"a raw control character":               head + ",\"x\":\"a\x01b\"}",
		"a member without its colon":            head + `,"x":{"a" 1}}`,
		"two numbers in an array":               head + `,"x":[1 2]}`,
		"a number with two points":              head + `,"x":1.2.3}`,
		"a number with a leading zero":          head + `,"x":01}`,
		"apiVersion broken":                     strings.Replace(head, `"gateway.networking.k8s.io/v1"`, `gateway`, 1) + `}`,
		"cut after a literal":                   head + `,"x":true`,
		"cut inside a literal":                  head + `,"x":tr`,
		"the list left open":                    head + `,"x":{"a":{"b":1}}`,
		"garbage between brackets":              head + `,"x":{abc:def}}`,
		"an unquoted key inside a value":        head + `,"x":[{a:1}]}`,
		"nested deeper than the decoders allow": head + `,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			if json.Valid([]byte(body)) {
				t.Fatalf("test body is valid JSON: %s", body)
			}
			lw := r35LW([]byte(body), func(b []byte) io.Reader { return bytes.NewReader(b) })
			obj, err := lw.streamList(t.Context(), metav1.ListOptions{})
			if err == nil {
				t.Errorf("malformed body %.60q…%q: the stream lists %q; the typed client fails", body, body[len(body)-20:], r24cNames(t, obj))
			}
			r24cParity(t, body)
		})
	}
}

// TestReview35TheListsKindAndMetadataReadAsTheTypedClient: the typed
// client finds a body's kind with encoding/json (SimpleMetaFactory.
// Interpret), case-insensitively, and decodes the list's metadata with
// sigs.k8s.io/json, case-sensitively; the stream does the reverse, at this
// commit as before it (44cdd38 read them the same way). So a Status whose
// kind key is spelled "Kind" is the typed client's error but the stream's
// empty list with no resourceVersion (an informer synced empty: every
// grant deleted), a kind the client does not know is its error but the
// stream's list, a metadata key of another case overrides the
// resourceVersion (or continue token) for the stream only, and a repeated
// "metadata": null empties the stream's metadata where the typed client
// keeps the first (null leaves a struct as it is). These bodies
// come from a server or proxy, not a tenant. FAILS at 086113a (and at
// 44cdd38).
func TestReview35TheListsKindAndMetadataReadAsTheTypedClient(t *testing.T) {
	g := r24cGrant("a", "1")
	for name, body := range map[string]string{
		"a Status spelt Kind":            `{"Kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcd timeout","reason":"Timeout","code":504}`,
		"a Status after the list's kind": `{"kind":"ReferenceGrantList","apiVersion":"v1","metadata":{},"KIND":"Status","status":"Failure","message":"m","code":500}`,
		"an unknown kind":                `{"kind":"NotAList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":[` + g + `]}`,
		"resourceVersion in two cases":   `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9","ResourceVersion":"1"},"items":[` + g + `]}`,
		"metadata then null":             `{"kind":"ReferenceGrantList","metadata":{"resourceVersion":"9"},"items":[` + g + `],"metadata":null}`,
	} {
		t.Run(name, func(t *testing.T) { r24cParity(t, body) })
	}
}

var _ runtime.Object = (*transformedList)(nil)
