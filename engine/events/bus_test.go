package events

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

func orderEvent(owner, order string, n int) core.Event {
	return core.Event{Type: core.EventOrder, Owner: owner, OrderID: order, Data: n}
}

func recv(t *testing.T, s *Subscription) core.Event {
	t.Helper()
	select {
	case ev, ok := <-s.C():
		if !ok {
			t.Fatalf("subscription closed: %v", s.Err())
		}
		return ev
	case <-time.After(2 * time.Second):
		t.Fatal("no event within 2s")
	}
	return core.Event{}
}

func TestIDsIncreaseAndFilterSelects(t *testing.T) {
	b := New(Config{})
	all, _ := b.Subscribe(Filter{}, 0)
	alice, _ := b.Subscribe(Filter{Owner: "alice"}, 0)
	batch, _ := b.Subscribe(Filter{BatchID: "b1", Types: []string{core.EventBatch}}, 0)

	var ids []uint64
	ids = append(ids, b.Publish(orderEvent("alice", "o1", 1)))
	ids = append(ids, b.Publish(orderEvent("bob", "o2", 2)))
	ids = append(ids, b.Publish(core.Event{Type: core.EventOrder, Owner: "alice", OrderID: "o3", BatchID: "b1"}))
	ids = append(ids, b.Publish(core.Event{Type: core.EventBatch, Owner: "alice", BatchID: "b1"}))
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids not strictly increasing: %v", ids)
		}
	}
	for i := range ids {
		if ev := recv(t, all); ev.ID != ids[i] {
			t.Fatalf("all: event %d has id %d, want %d", i, ev.ID, ids[i])
		}
	}
	for _, want := range []uint64{ids[0], ids[2], ids[3]} {
		if ev := recv(t, alice); ev.ID != want || ev.Owner != "alice" {
			t.Fatalf("alice got %+v, want id %d", ev, want)
		}
	}
	if ev := recv(t, batch); ev.ID != ids[3] || ev.Type != core.EventBatch {
		t.Fatalf("batch filter got %+v", ev)
	}
	select {
	case ev := <-batch.C():
		t.Fatalf("batch filter let through %+v", ev)
	default:
	}
}

func TestSlowSubscriberDroppedWithoutBlocking(t *testing.T) {
	b := New(Config{Buffer: 4})
	slow, _ := b.Subscribe(Filter{}, 0)
	fast, _ := b.Subscribe(Filter{}, 0)
	var got []uint64
	done := make(chan struct{})
	read := make(chan int, 100) // how many events the fast reader has taken
	go func() {
		defer close(done)
		for ev := range fast.C() {
			got = append(got, ev.ID)
			read <- len(got)
			if len(got) == 100 {
				return
			}
		}
	}()
	// Publish in fours and let the fast reader empty its buffer of four before the
	// next ones; the slow one never reads, so a Publish that blocked on it would
	// never return.
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := 0; i < 100; i++ {
			b.Publish(orderEvent("a", "o", i))
			if i%4 != 3 {
				continue
			}
			for n := 0; n < i+1; {
				select {
				case n = <-read:
				case <-done: // dropped after all: the checks below say so
					return
				}
			}
		}
	}()
	select {
	case <-published:
	case <-time.After(time.Minute):
		t.Fatal("publishing 100 events did not finish: publish blocked on the slow subscriber")
	}
	<-done
	// The slow one got its buffer's worth, then its channel was closed with a reason.
	n := 0
	for range slow.C() {
		n++
	}
	if n != 4 {
		t.Errorf("slow subscriber received %d events before the drop, want 4", n)
	}
	if !errors.Is(slow.Err(), ErrSlowSubscriber) {
		t.Errorf("slow subscriber's reason %v, want ErrSlowSubscriber", slow.Err())
	}
	if fast.Err() != nil {
		t.Errorf("fast subscriber dropped: %v", fast.Err())
	}
	if b.Subscribers() != 1 {
		t.Errorf("%d subscribers left, want 1", b.Subscribers())
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("fast subscriber saw a gap or reorder at %d: %d after %d", i, got[i], got[i-1])
		}
	}
}

func TestReplayAfterID(t *testing.T) {
	b := New(Config{History: 8})
	var ids []uint64
	for i := 0; i < 6; i++ {
		ids = append(ids, b.Publish(orderEvent("a", fmt.Sprint("o", i%2), i)))
	}
	// Everything after ids[2] is held: replay it, filtered, then go live.
	s, complete := b.Subscribe(Filter{OrderID: "o1"}, ids[2])
	if !complete {
		t.Fatal("replay from a held id reported incomplete")
	}
	for _, want := range []uint64{ids[3], ids[5]} {
		if ev := recv(t, s); ev.ID != want {
			t.Fatalf("replayed id %d, want %d", ev.ID, want)
		}
	}
	live := b.Publish(orderEvent("a", "o1", 99))
	if ev := recv(t, s); ev.ID != live {
		t.Fatalf("live id %d, want %d", ev.ID, live)
	}

	// Up to date: complete, nothing replayed.
	s2, complete := b.Subscribe(Filter{}, b.LastID())
	if !complete || len(s2.C()) != 0 {
		t.Fatalf("subscribe at the last id: complete=%v, %d replayed", complete, len(s2.C()))
	}

	// Push the early events out of the ring: a replay from them is incomplete.
	for i := 0; i < 10; i++ {
		b.Publish(orderEvent("a", "o0", i))
	}
	s3, complete := b.Subscribe(Filter{}, ids[0])
	if complete || len(s3.C()) != 0 {
		t.Fatalf("replay from an evicted id: complete=%v, %d replayed", complete, len(s3.C()))
	}
	// An id from the future (a previous process of a clock gone backwards) is unknown.
	if _, complete := b.Subscribe(Filter{}, b.LastID()+10); complete {
		t.Fatal("replay from an unknown future id reported complete")
	}
}

func TestIDsOfANewBusExceedAnOldOne(t *testing.T) {
	old := New(Config{})
	id := old.Publish(orderEvent("a", "o", 0))
	time.Sleep(2 * time.Microsecond)
	fresh := New(Config{})
	if _, complete := fresh.Subscribe(Filter{}, id); complete {
		t.Fatal("an id of an earlier bus replayed as complete on a new one")
	}
	if id2 := fresh.Publish(orderEvent("a", "o", 0)); id2 <= id {
		t.Fatalf("new bus id %d not above earlier bus id %d", id2, id)
	}
}

func TestProgressCoalesced(t *testing.T) {
	interval := 100 * time.Millisecond
	b := New(Config{ProgressInterval: interval})
	s, _ := b.Subscribe(Filter{}, 0)
	start := time.Now()
	// 200 progress reports over ~500 ms for one order.
	for i := 0; i < 200; i++ {
		b.PublishCoalesced("o1", orderEvent("a", "o1", i))
		time.Sleep(2500 * time.Microsecond)
	}
	elapsed := time.Since(start)
	// The last report waits for its interval, then goes out.
	var got []int
	deadline := time.After(time.Minute)
	for len(got) == 0 || got[len(got)-1] != 199 {
		select {
		case ev := <-s.C():
			got = append(got, ev.Data.(int))
		case <-deadline:
			t.Fatalf("the latest progress (199) never went out; delivered %v", got)
		}
	}
	maxWant := int(elapsed/interval) + 2
	if len(got) < 3 || len(got) > maxWant {
		t.Fatalf("%d events for 200 reports over %v, want 3..%d", len(got), elapsed, maxWant)
	}
	if got[len(got)-1] != 199 {
		t.Errorf("last delivered progress %d, want the latest (199)", got[len(got)-1])
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress went backwards: %v", got)
		}
	}
}

func TestStateEventSupersedesWaitingProgress(t *testing.T) {
	b := New(Config{ProgressInterval: 50 * time.Millisecond})
	s, _ := b.Subscribe(Filter{}, 0)
	b.PublishCoalesced("o1", orderEvent("a", "o1", 1)) // goes out at once
	b.PublishCoalesced("o1", orderEvent("a", "o1", 2)) // waits
	b.mu.Lock()
	stale := b.pending["o1"]
	b.mu.Unlock()
	b.Publish(orderEvent("a", "o1", 3)) // terminal state: the waiting one is stale
	b.mu.Lock()
	_, waiting := b.pending["o1"]
	b.mu.Unlock()
	if stale == nil || waiting {
		t.Fatalf("progress waiting before the state event: %v, after it: %v; want one, then none", stale != nil, waiting)
	}
	// Its timer may fire even so, when Stop comes too late: the flush must send nothing.
	b.flush("o1", stale)
	var got []int
	for len(s.C()) > 0 {
		got = append(got, (<-s.C()).Data.(int))
	}
	if fmt.Sprint(got) != "[1 3]" {
		t.Fatalf("delivered %v, want [1 3] (stale progress dropped)", got)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	b := New(Config{})
	s, _ := b.Subscribe(Filter{}, 0)
	mine, _ := b.Subscribe(Filter{}, 0)
	mine.Close()
	mine.Close()
	if _, ok := <-mine.C(); ok || mine.Err() != nil {
		t.Fatalf("closed subscription: open=%v err=%v", ok, mine.Err())
	}
	b.Close()
	if _, ok := <-s.C(); ok || !errors.Is(s.Err(), ErrBusClosed) {
		t.Fatalf("after bus close: open=%v err=%v", ok, s.Err())
	}
	if id := b.Publish(orderEvent("a", "o", 1)); id != 0 {
		t.Fatalf("publish on a closed bus returned id %d", id)
	}
	late, _ := b.Subscribe(Filter{}, 0)
	if _, ok := <-late.C(); ok || !errors.Is(late.Err(), ErrBusClosed) {
		t.Fatal("subscribe on a closed bus gave a live subscription")
	}
}

func TestConcurrentPublishersKeepOrderPerSubscriber(t *testing.T) {
	b := New(Config{Buffer: 10000})
	s, _ := b.Subscribe(Filter{}, 0)
	var wg sync.WaitGroup
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				b.Publish(orderEvent("a", fmt.Sprint(p), i))
				b.PublishCoalesced(fmt.Sprint("k", p), orderEvent("a", fmt.Sprint("k", p), i))
			}
		}(p)
	}
	wg.Wait()
	var last uint64
	n := 0
	for len(s.C()) > 0 {
		ev := <-s.C()
		if ev.ID <= last {
			t.Fatalf("id %d after %d", ev.ID, last)
		}
		last = ev.ID
		n++
	}
	if n < 4000 {
		t.Fatalf("received %d events, want at least the 4000 plain ones", n)
	}
}

func BenchmarkPublish1000Subscribers(b *testing.B) {
	bus := New(Config{Buffer: 1 << 20})
	for i := 0; i < 1000; i++ {
		bus.Subscribe(Filter{Owner: fmt.Sprint("owner", i)}, 0)
	}
	ev := orderEvent("owner7", "o", 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bus.Publish(ev)
	}
}
