package keys

import (
	"sync"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// RotateSecret swaps the presented secret in one transaction: of concurrent
// rotations with it exactly one wins, and only its new secret works.
func TestRotateSecretIsCompareAndSwap(t *testing.T) {
	s, _, _ := newService(t)
	k, secret, err := s.Create("raced", core.ScopeStandard)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		fresh []string
		lost  int
	)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, next, err := s.RotateSecret(secret)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && got.UUID == k.UUID:
				fresh = append(fresh, next)
			case core.KindOf(err) == core.KindUnauthorized:
				lost++
			default:
				t.Errorf("rotation: %+v %v", got, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(fresh) != 1 || lost != n-1 {
		t.Fatalf("%d rotations won, %d lost; want 1 and %d", len(fresh), lost, n-1)
	}
	if got, err := s.Authenticate(fresh[0]); err != nil || got.UUID != k.UUID || got.Prefix != fresh[0][:8] {
		t.Fatalf("the new secret: %+v %v", got, err)
	}
	_, err = s.Authenticate(secret)
	wantKind(t, err, core.KindUnauthorized)
	_, _, err = s.RotateSecret("sk-never-issued-0123456789")
	wantKind(t, err, core.KindUnauthorized)
}
