package optionalapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// valueScanner walks a JSON text read from r, its objects' keys and its
// arrays' values, without decoding the values: a list's items are then each decoded once, by the
// API machinery's decoder, which checks that the item is well formed.
// encoding/json's Decoder would scan each item twice more and copy it, a
// quarter of a stream's decoding (BenchmarkStreamList).
//
// A value's bytes are found by counting brackets outside strings; whether
// they are valid JSON is for whoever decodes or checks them (json.Valid).
// Malformed input is never taken for well-formed: a bracket of the wrong
// kind or a broken literal reaches that check, which fails on it.
type valueScanner struct {
	r io.Reader
	// buf[pos:] is read and not yet scanned.
	buf []byte
	pos int
	// err is the reader's error once it returned one (io.EOF at the end).
	err error
}

// scanBufferSize is the scanner's first buffer: it grows to hold the
// longest value scanned (an object of up to etcd's 1.5 MiB).
const scanBufferSize = 64 << 10

func newValueScanner(r io.Reader) *valueScanner {
	return &valueScanner{r: r, buf: make([]byte, 0, scanBufferSize)}
}

// fill reads more input into buf, first dropping buf[:keep], which the
// caller has done with; it returns by how many bytes the kept ones moved
// back. It returns the reader's error once the reader has none left.
func (s *valueScanner) fill(keep int) (int, error) {
	n := copy(s.buf, s.buf[keep:])
	s.buf, s.pos = s.buf[:n], s.pos-keep
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, cap(s.buf))...)[:n]
	}
	for s.err == nil {
		var m int
		m, s.err = s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if m > 0 {
			return keep, nil
		}
	}
	return keep, s.err
}

// peek returns the next byte that is not white space, without consuming
// it; io.EOF at a clean end of the input.
func (s *valueScanner) peek() (byte, error) {
	for {
		for ; s.pos < len(s.buf); s.pos++ {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, nil
			}
		}
		if _, err := s.fill(s.pos); err != nil {
			return 0, err
		}
	}
}

// expect consumes the next byte that is not white space, which must be
// want.
func (s *valueScanner) expect(want byte) error {
	c, err := s.peek()
	if err != nil {
		return unexpectedEOF(err)
	}
	if c != want {
		return fmt.Errorf("invalid character %q, want %q", c, want)
	}
	s.pos++
	return nil
}

// value consumes the next value and returns its bytes, which are valid
// until the next call.
func (s *valueScanner) value() ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	start, i := s.pos, s.pos
	depth, inString, escaped := 0, false, false
	for {
		for ; i < len(s.buf); i++ {
			c = s.buf[i]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if depth == 0 {
						return s.consume(start, i+1), nil
					}
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				if depth == 0 { // the end of a literal, in the enclosing value
					return s.consume(start, i), nil
				}
				if depth--; depth == 0 {
					return s.consume(start, i+1), nil
				}
			case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
				return s.consume(start, i), nil
			}
		}
		moved, err := s.fill(start)
		start, i = start-moved, i-moved
		if errors.Is(err, io.EOF) && depth == 0 && !inString && i > start {
			return s.consume(start, i), nil // a literal ends the input
		}
		if err != nil {
			return nil, unexpectedEOF(err)
		}
	}
}

// object consumes the object that comes next, calling member with each
// member's key: member consumes the member's value.
func (s *valueScanner) object(member func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	more, err := s.firstMember('}')
	for more && err == nil {
		var key string
		if key, err = s.key(); err != nil {
			return err
		}
		if err = member(key); err != nil {
			return err
		}
		more, err = s.nextMember('}')
	}
	return err
}

// array consumes the array that comes next, calling item with each of its
// values' bytes, valid until item returns.
func (s *valueScanner) array(item func(value []byte) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	more, err := s.firstMember(']')
	for more && err == nil {
		var value []byte
		if value, err = s.value(); err != nil {
			return err
		}
		if err = item(value); err != nil {
			return err
		}
		more, err = s.nextMember(']')
	}
	return err
}

// end checks that nothing but white space is left.
func (s *valueScanner) end() error {
	c, err := s.peek()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%q after the end", c)
}

// firstMember consumes the closing bracket end of an empty object or
// array (false); true if a member follows.
func (s *valueScanner) firstMember(end byte) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, unexpectedEOF(err)
	}
	if c == end {
		s.pos++
		return false, nil
	}
	return true, nil
}

// nextMember consumes the comma before an object's or array's next member
// (true) or its closing bracket end (false).
func (s *valueScanner) nextMember(end byte) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, unexpectedEOF(err)
	}
	switch c {
	case ',':
		s.pos++
		return true, nil
	case end:
		s.pos++
		return false, nil
	}
	return false, fmt.Errorf("invalid character %q, want ',' or %q", c, end)
}

// key consumes an object member's key and the colon after it.
func (s *valueScanner) key() (string, error) {
	raw, err := s.value()
	if err != nil {
		return "", err
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("invalid key %.40q", raw)
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", err
	}
	return key, s.expect(':')
}

// consume marks buf[start:end] scanned and returns it.
func (s *valueScanner) consume(start, end int) []byte {
	s.pos = end
	return s.buf[start:end]
}

// unexpectedEOF is err, io.ErrUnexpectedEOF if the input ended: a value
// or token was still expected.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
