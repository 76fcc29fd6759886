package membudget

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// waitFor blocks until ok holds for the budget's state, woken by its changes.
func waitFor(t *testing.T, b *Budget, ok func(Stats) bool) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.Await(ctx, ok)
	if err != nil {
		t.Fatalf("budget state never reached: %+v", s)
	}
	return s
}

func TestTooLargeFailsAtOnce(t *testing.T) {
	b := New(100)
	err := b.Acquire(context.Background(), 101)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Need != 101 || tl.Size != 100 {
		t.Fatalf("Acquire(101) of 100 = %v", err)
	}
	if _, err := b.Reserve(101); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Reserve(101) of 100 = %v", err)
	}
	if b.TryAcquire(101) {
		t.Fatal("TryAcquire(101) of 100 succeeded")
	}
	if s := b.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Fatalf("refused claims left %+v", s)
	}
	if err := b.Acquire(context.Background(), 100); err != nil {
		t.Fatalf("the whole budget: %v", err)
	}
}

func TestFIFO(t *testing.T) {
	b := New(100)
	if err := b.Acquire(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	big, _ := b.Reserve(80) // waits for the 60
	small, _ := b.Reserve(10)
	select {
	case <-small.Ready():
		t.Fatal("a small claim overtook the big one waiting before it")
	default:
	}
	if b.TryAcquire(10) {
		t.Fatal("TryAcquire overtook waiting claims")
	}
	b.Release(60)
	<-big.Ready()
	<-small.Ready()
	if s := b.Stats(); s.Used != 90 || s.Waiting != 0 {
		t.Fatalf("after grants %+v", s)
	}
	b.Release(80)
	b.Release(10)
}

func TestCancelledWaiterLeavesBudgetBalanced(t *testing.T) {
	b := New(100)
	if err := b.Acquire(context.Background(), 70); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx, 50) }()
	waitFor(t, b, func(s Stats) bool { return s.Waiting == 1 })
	// A claim queued behind the cancelled one goes through once it leaves the front.
	behind, _ := b.Reserve(30)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v", err)
	}
	<-behind.Ready()
	if s := b.Stats(); s.Used != 100 || s.Waiting != 0 {
		t.Fatalf("after cancel %+v", s)
	}
	behind.Cancel() // a granted claim withdrawn gives its bytes back
	behind.Cancel()
	b.Release(70)
	if s := b.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Fatalf("not balanced: %+v", s)
	}
}

func TestAcquireWithDoneContext(t *testing.T) {
	b := New(10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Acquire(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a done context = %v", err)
	}
	if s := b.Stats(); s.Used != 0 {
		t.Fatalf("used %d", s.Used)
	}
}

// Many claimants with random cancellation: nothing deadlocks, the budget never
// overflows and ends balanced.
func TestConcurrentClaimsStayWithinBudget(t *testing.T) {
	b := New(100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	inUse, peak := int64(0), int64(0)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(10 + i%7*10)
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
			defer cancel()
			if i%5 == 0 {
				ctx = context.Background()
			}
			if err := b.Acquire(ctx, n); err != nil {
				return
			}
			mu.Lock()
			inUse += n
			peak = max(peak, inUse)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inUse -= n
			mu.Unlock()
			b.Release(n)
		}()
	}
	wg.Wait()
	if peak > 100 {
		t.Fatalf("%d bytes held at once in a budget of 100", peak)
	}
	if s := b.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Fatalf("not balanced: %+v", s)
	}
}

func TestMemAvailable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(p, []byte("MemTotal:       16303412 kB\nMemFree:         1230000 kB\nMemAvailable:    8000000 kB\n"), 0o600)
	if n, ok := memAvailable(p); !ok || n != 8000000*1024 {
		t.Fatalf("memAvailable = %d, %v", n, ok)
	}
	os.WriteFile(p, []byte("MemTotal: 1 kB\n"), 0o600)
	if _, ok := memAvailable(p); ok {
		t.Fatal("a file without MemAvailable was read")
	}
	if _, ok := memAvailable(filepath.Join(t.TempDir(), "missing")); ok {
		t.Fatal("a missing file was read")
	}
	if b := Share(0.5); b <= 0 {
		t.Fatalf("default budget %d", b)
	}
}
