package optionalapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// scanArray splits the JSON array text r reads into its items' bytes, as
// decodeItems does.
func scanArray(r io.Reader) ([]string, error) {
	s := newValueScanner(r)
	var items []string
	err := s.array(func(v []byte) error {
		items = append(items, string(v))
		return nil
	})
	if err == nil {
		err = s.end()
	}
	return items, err
}

// decoderItems splits data as encoding/json's Decoder does.
func decoderItems(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the array")
	}
	items := make([]string, 0, len(raw))
	for _, r := range raw {
		items = append(items, string(r))
	}
	return items, nil
}

// readers are the ways a scanner reads data: whole, a byte at a time (every
// value crosses a refill), and in odd-sized pieces.
func readers(data []byte) map[string]io.Reader {
	return map[string]io.Reader{
		"whole":       bytes.NewReader(data),
		"byte a time": iotest.OneByteReader(bytes.NewReader(data)),
		"half":        iotest.HalfReader(bytes.NewReader(data)),
	}
}

func TestValueScannerSplitsAnArrayAsEncodingJSON(t *testing.T) {
	long := `{"a":"` + strings.Repeat("x", 3*scanBufferSize) + `"}`
	for name, data := range map[string]string{
		"objects":                          `[{"a":1},{"b":[1,2,{"c":null}]}]`,
		"brackets inside strings":          `[{"a":"}]{["},"]}"]`,
		"escaped quotes and backslashes":   `[{"a":"\"}\\"},"\\\\","\"\\\""]`,
		"unicode escapes":                  `[{"\u0061":"\u007d"}]`,
		"literals, numbers, white space":   " [ true ,false,\nnull\t, -1.5e3 , 0 ] \n",
		"empty containers":                 `[{},[],"",[[]]]`,
		"empty array":                      `[ ]`,
		"a value longer than the buffer":   `[` + long + `,` + long + `]`,
		"a literal right before the close": `[1]`,
	} {
		want, err := decoderItems([]byte(data))
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		for how, r := range readers([]byte(data)) {
			got, err := scanArray(r)
			if err != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("%s, %s: items %.80q, %v; want %.80q", name, how, got, err, want)
			}
		}
	}
}

func TestValueScannerFailsOnTruncatedOrMalformedArrays(t *testing.T) {
	for name, data := range map[string]string{
		"cut in a string":          `[{"a":"}`,
		"cut in an object":         `[{"a":1`,
		"cut after an item":        `[{"a":1}`,
		"cut after a comma":        `[1,`,
		"missing comma":            `[{"a":1} {"b":2}]`,
		"unterminated escape":      `["\`,
		"data after the array":     `[1] 2`,
		"nothing":                  ``,
		"a closing bracket alone":  `]`,
		"an object, not an array":  `{"a":1}`,
		"comma before the first":   `[,1]`,
		"two commas":               `[1,,2]`,
		"a string cut at its end":  `["a`,
		"brackets of another kind": `[{"a":1]]`,
	} {
		for how, r := range readers([]byte(data)) {
			items, err := scanArray(r)
			if err == nil {
				// The scanner leaves validity to the decoder: each item it
				// returns must then fail there.
				valid := true
				for _, item := range items {
					valid = valid && json.Valid([]byte(item))
				}
				if valid {
					t.Errorf("%s, %s: items %q and no error; want an error, or an item the decoder refuses", name, how, items)
				}
			}
		}
	}
}

// FuzzValueScanner: on any input, the scanner splits a valid array as
// encoding/json does, and never returns items that are all valid JSON
// from an invalid array.
func FuzzValueScanner(f *testing.F) {
	for _, seed := range []string{
		`[{"a":"}]"},"\\",1,true,null,[[]]]`,
		`[{"metadata":{"name":"a"}}]`,
		`["\"]"]`, `[1 2]`, `[{]`, `[1,]`, ` [ ] `, `["\u005d"]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := decoderItems(data)
		for how, r := range readers(data) {
			got, err := scanArray(r)
			if wantErr == nil {
				if err != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
					t.Fatalf("%s: items %q, %v; encoding/json: %q", how, got, err, want)
				}
				continue
			}
			if err == nil {
				for _, item := range got {
					if !json.Valid([]byte(item)) {
						return
					}
				}
				t.Fatalf("%s: %q split into valid items %q; encoding/json refuses it: %v", how, data, got, wantErr)
			}
		}
	})
}
