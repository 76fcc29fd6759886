package keys

import (
	"testing"

	"github.com/porchlight/porchlight/core"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The channel AuthenticateWatch returns closes when that key's secret stops
// working, by the time Rotate, RotateSecret or Revoke returns, and not for
// another key's.
func TestAuthenticateWatchEndsWithTheSecret(t *testing.T) {
	s, _, _ := newService(t)
	a, aSecret, _ := s.Create("a", core.ScopeStandard)
	_, bSecret, _ := s.Create("b", core.ScopeStandard)
	_, bEnd, err := s.AuthenticateWatch(bSecret)
	if err != nil {
		t.Fatal(err)
	}

	_, end1, err := s.AuthenticateWatch(aSecret)
	if err != nil || closed(end1) {
		t.Fatalf("fresh watch: closed %v, %v", closed(end1), err)
	}
	_, next, err := s.RotateSecret(aSecret)
	if err != nil || !closed(end1) {
		t.Fatalf("after RotateSecret: closed %v, %v", closed(end1), err)
	}
	_, end2, err := s.AuthenticateWatch(next)
	if err != nil || closed(end2) {
		t.Fatalf("watch of the new secret: closed %v, %v", closed(end2), err)
	}
	_, next, err = s.Rotate(a.UUID)
	if err != nil || !closed(end2) {
		t.Fatalf("after Rotate: closed %v, %v", closed(end2), err)
	}
	_, end3, _ := s.AuthenticateWatch(next)
	if err := s.Revoke(a.UUID); err != nil || !closed(end3) {
		t.Fatalf("after Revoke: closed %v, %v", closed(end3), err)
	}
	if _, _, err := s.AuthenticateWatch(next); core.KindOf(err) != core.KindUnauthorized {
		t.Fatalf("revoked secret watched: %v", err)
	}
	if closed(bEnd) {
		t.Fatal("another key's watch ended")
	}
}
