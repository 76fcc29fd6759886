// Package signing makes and checks the signed storage addresses of DESIGN: an HMAC-SHA256
// over the HTTP method, the asset id and the expiry (Unix seconds), keyed with the
// per-install secret. A signature binds all three, so an upload address cannot be used
// to download, another asset's bytes cannot be reached and the expiry cannot be moved.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Errors of Verify. Both answer 403; the reason tells people which it was.
var (
	ErrExpired   = errors.New("the signed address has expired; request a new one")
	ErrSignature = errors.New("the signed address is invalid or was altered")
)

// Signer signs with one secret.
type Signer struct{ secret []byte }

// New returns a signer for the secret (which must not be empty).
func New(secret []byte) (*Signer, error) {
	if len(secret) < 16 {
		return nil, errors.New("signing secret shorter than 16 bytes")
	}
	return &Signer{secret: append([]byte(nil), secret...)}, nil
}

func (s *Signer) mac(method, id string, exp int64) []byte {
	m := hmac.New(sha256.New, s.secret)
	// Fields are joined with a newline, which none of them can contain.
	m.Write([]byte(method + "\n" + id + "\n" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// Sign returns the hex signature of method, id and exp.
func (s *Signer) Sign(method, id string, exp int64) string {
	return hex.EncodeToString(s.mac(method, id, exp))
}

// Verify checks a signature given as the query values exp and sig, at time now.
func (s *Signer) Verify(method, id, exp, sig string, now time.Time) error {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || len(exp) > 19 {
		return ErrSignature
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(method, id, e)) {
		return ErrSignature
	}
	if now.Unix() >= e {
		return ErrExpired
	}
	return nil
}
