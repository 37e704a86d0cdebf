package transfer

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// tokenBytes is the size of a request token: 128 bits (seed 002 wants it
// unguessable; the CRD requires at least 22 base64url characters).
const tokenBytes = 16

// newToken returns a new request token: tokenBytes from crypto/rand,
// base64url without padding. Never log it.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading a random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
