package signing

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	s, err := New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	exp := now.Add(15 * time.Minute).Unix()
	id := "6f1c2a9e-5b1d-4c35-9b7e-1d2f3a4b5c6d"
	e := strconv.FormatInt(exp, 10)
	sig := s.Sign("PUT", id, exp)
	if err := s.Verify("PUT", id, e, sig, now); err != nil {
		t.Fatalf("valid address refused: %v", err)
	}
	cases := []struct {
		name              string
		method, id, e, sg string
		at                time.Time
		want              error
	}{
		{"other method", "GET", id, e, sig, now, ErrSignature},
		{"other asset", "PUT", "6f1c2a9e-5b1d-4c35-9b7e-1d2f3a4b5c6e", e, sig, now, ErrSignature},
		{"moved expiry", "PUT", id, strconv.FormatInt(exp+3600, 10), sig, now, ErrSignature},
		{"flipped signature", "PUT", id, e, "0" + sig[1:], now, ErrSignature},
		{"not hex", "PUT", id, e, "zz", now, ErrSignature},
		{"empty", "PUT", id, "", "", now, ErrSignature},
		{"expired", "PUT", id, e, sig, time.Unix(exp, 0), ErrExpired},
	}
	for _, c := range cases {
		if c.name == "flipped signature" && sig[0] == '0' {
			c.sg = "1" + sig[1:]
		}
		if err := s.Verify(c.method, c.id, c.e, c.sg, c.at); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	other, _ := New([]byte("another install's secret 0123456"))
	if err := other.Verify("PUT", id, e, sig, now); !errors.Is(err, ErrSignature) {
		t.Errorf("another install accepted the signature: %v", err)
	}
	if _, err := New(nil); err == nil {
		t.Error("empty secret accepted")
	}
}
