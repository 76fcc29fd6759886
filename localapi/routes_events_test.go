package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// sseFrame is one dispatched event of a stream, with its JSON decoded.
type sseFrame struct {
	ID    uint64 // 0: the frame had no id: line
	Event string
	Data  string
	Type  string         // the JSON's type
	Body  map[string]any // the JSON's data
}

// sseConn is a client of one event stream.
type sseConn struct {
	t      *testing.T
	res    *http.Response
	frames chan sseFrame
	cancel context.CancelFunc
}

// openSSE opens a stream and wants 200 text/event-stream without rate headers.
func (f *fullEnv) openSSE(key, path string, header map[string]string) *sseConn {
	f.t.Helper()
	c := f.dialSSE(key, path, header)
	if c.res.StatusCode != 200 {
		f.t.Fatalf("GET %s: %d", path, c.res.StatusCode)
	}
	go c.read()
	return c
}

// dialSSE opens a stream; the caller starts reading it.
func (f *fullEnv) dialSSE(key, path string, header map[string]string) *sseConn {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if key != "" {
		req.Header.Set(HeaderAPIKey, key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// No client timeout: streams live long; the context ends them.
	res, err := (&http.Client{Transport: f.client.Transport}).Do(req)
	if err != nil {
		cancel()
		f.t.Fatalf("GET %s: %v", path, err)
	}
	c := &sseConn{t: f.t, res: res, frames: make(chan sseFrame, 4096), cancel: cancel}
	f.t.Cleanup(c.close)
	if res.StatusCode != 200 {
		return c
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		f.t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	if hasRateHeaders(res.Header) {
		f.t.Errorf("GET %s: an event stream carries rate limit headers", path)
	}
	return c
}

func (c *sseConn) read() {
	defer close(c.frames)
	sc := bufio.NewScanner(c.res.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var fr sseFrame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if fr.Data != "" {
				var m struct {
					Type string         `json:"type"`
					Data map[string]any `json:"data"`
				}
				if err := json.Unmarshal([]byte(fr.Data), &m); err != nil {
					c.t.Errorf("frame data is not a JSON message: %v: %.200s", err, fr.Data)
				}
				fr.Type, fr.Body = m.Type, m.Data
				c.frames <- fr
			}
			fr = sseFrame{}
		case strings.HasPrefix(line, "id: "):
			id, err := strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
			if err != nil {
				c.t.Errorf("id line %q", line)
			}
			fr.ID = id
		case strings.HasPrefix(line, "event: "):
			fr.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			fr.Data += strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, ":"):
		default:
			c.t.Errorf("unexpected stream line %q", line)
		}
	}
}

// next answers the next frame, or false when the stream ended.
func (c *sseConn) next(timeout time.Duration) (sseFrame, bool) {
	c.t.Helper()
	select {
	case fr, ok := <-c.frames:
		return fr, ok
	case <-time.After(timeout):
		c.t.Fatalf("no frame and no end of the stream within %s", timeout)
	}
	return sseFrame{}, false
}

// nextOf skips pings.
func (c *sseConn) nextOf(timeout time.Duration) (sseFrame, bool) {
	c.t.Helper()
	for {
		fr, ok := c.next(timeout)
		if !ok || fr.Type != core.EventPing {
			return fr, ok
		}
	}
}

// untilEnd reads the frames (pings left out) until the stream ends.
func (c *sseConn) untilEnd(timeout time.Duration) []sseFrame {
	c.t.Helper()
	var out []sseFrame
	deadline := time.Now().Add(timeout)
	for {
		fr, ok := c.nextOf(time.Until(deadline))
		if !ok {
			return out
		}
		out = append(out, fr)
	}
}

func (c *sseConn) close() {
	c.cancel()
	c.res.Body.Close()
}

// checkFrames asserts what every stream promises: event: equals the JSON type,
// ids increase, and an order's status never changes after a terminal one.
func checkFrames(t *testing.T, frames []sseFrame, after uint64) {
	t.Helper()
	last := after
	settled := map[string]string{}
	for i, fr := range frames {
		if fr.Event != fr.Type {
			t.Errorf("frame %d: event %q, JSON type %q", i, fr.Event, fr.Type)
		}
		if fr.ID != 0 {
			if fr.ID <= last {
				t.Errorf("frame %d: id %d after %d", i, fr.ID, last)
			}
			last = fr.ID
		}
		if fr.Type == core.EventOrder {
			id, st := fr.Body["orderUuid"].(string), fr.Body["status"].(string)
			if s, ok := settled[id]; ok && s != st {
				t.Errorf("frame %d: order %s went %s after %s", i, id, st, s)
			}
			if core.OrderStatus(st).Terminal() {
				settled[id] = st
			}
		}
	}
}

func TestOrderStreamFollowsARunningOrder(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()), withBus(events.Config{ProgressInterval: time.Millisecond}))
	in := f.uploadSmall(f.key, 160, photoA...)
	id := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)

	c := f.openSSE(f.key, "/v1/orders/"+id+"/events", nil)
	snap, ok := c.nextOf(10 * time.Second)
	if !ok || snap.Type != core.EventOrder || snap.ID == 0 || snap.Body["orderUuid"] != id ||
		(snap.Body["status"] != "pending" && snap.Body["status"] != "running") {
		t.Fatalf("snapshot %+v", snap)
	}
	g.waitEntered(t)
	// The held order shows running with progress before the gate opens.
	all := []sseFrame{snap}
	running := snap
	for running.Body["progressStage"] != "replacing sky" {
		if running, ok = c.nextOf(10 * time.Second); !ok {
			t.Fatal("the stream ended while the order was held")
		}
		all = append(all, running)
	}
	if running.Body["status"] != "running" || running.Body["progressPercent"].(float64) <= 0 || running.Body["etaSeconds"] == nil {
		t.Errorf("running frame %v", running.Body)
	}
	g.open()
	rest := c.untilEnd(30 * time.Second)
	all = append(all, rest...)
	checkFrames(t, all, 0)
	last := all[len(all)-1]
	if last.Body["status"] != "completed" || last.Body["outputAssetId"] == nil {
		t.Errorf("last frame %v", last.Body)
	}
	if s := f.order(f.key, id); s["status"] != "completed" {
		t.Errorf("order after the stream: %v", s)
	}
}

func TestOrderStreamOfASettledOrder(t *testing.T) {
	f := startFull(t)
	in := f.uploadSmall(f.key, 160, photoA...)
	id := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	f.waitOrder(f.key, id)

	frames := f.openSSE(f.key, "/v1/orders/"+id+"/events", nil).untilEnd(10 * time.Second)
	if len(frames) != 1 || frames[0].Body["status"] != "completed" || frames[0].ID == 0 {
		t.Fatalf("stream of a completed order: %+v", frames)
	}
	// Another key, an unknown order: 404 envelopes before any stream; HEAD: 405.
	for _, key := range []string{f.other, f.key} {
		path := "/v1/orders/" + id + "/events"
		if key == f.key {
			path = "/v1/orders/" + uuid.NewString() + "/events"
		}
		r := f.do("GET", path, key, nil)
		f.want(r, 404)
		if hasRateHeaders(r.Header) {
			t.Errorf("GET %s: 404 carries rate headers", path)
		}
	}
	f.want(f.do("GET", "/v1/orders/"+id+"/events", "", nil), 401)
	if r := f.do("HEAD", "/v1/orders/"+id+"/events", f.key, nil); r.Code != 405 {
		t.Errorf("HEAD of an event stream: %d", r.Code)
	}
}

func TestOrderStreamResumesFromLastEventID(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()), withBus(events.Config{ProgressInterval: time.Millisecond}))
	in := f.uploadSmall(f.key, 160, photoA...)
	id := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
	g.waitEntered(t)
	// What the bus carries for the order from here on.
	rec, _ := f.bus.Subscribe(events.Filter{OrderID: id}, 0)
	defer rec.Close()

	c := f.openSSE(f.key, "/v1/orders/"+id+"/events", nil)
	snap, _ := c.nextOf(10 * time.Second)
	if snap.ID == 0 || snap.Body["status"] != "running" {
		t.Fatalf("snapshot %+v", snap)
	}
	c.close()
	// While nobody listens the order completes; closing the stream cancelled nothing.
	g.open()
	if s := f.waitOrder(f.key, id); s["status"] != "completed" {
		t.Fatalf("order ended %v", s)
	}
	var missed []uint64
	for ended := false; !ended; {
		select {
		case ev := <-rec.C():
			if ev.ID > snap.ID {
				missed = append(missed, ev.ID)
			}
			st, _ := orderStatus(ev)
			ended = st.Terminal()
		case <-time.After(10 * time.Second):
			t.Fatal("no terminal event on the bus")
		}
	}

	// Resuming replays exactly the events after the last id seen, then closes.
	frames := f.openSSE(f.key, "/v1/orders/"+id+"/events", map[string]string{HeaderLastEventID: strconv.FormatUint(snap.ID, 10)}).untilEnd(10 * time.Second)
	checkFrames(t, frames, snap.ID)
	var got []uint64
	for _, fr := range frames {
		got = append(got, fr.ID)
	}
	if len(got) != len(missed) || got[len(got)-1] != missed[len(missed)-1] || frames[len(frames)-1].Body["status"] != "completed" {
		t.Errorf("resumed frames %v, bus events after %d: %v", got, snap.ID, missed)
	}
	// An id the bus no longer holds (or never held) gets a fresh snapshot.
	for _, stale := range []string{"1", "junk"} {
		frames = f.openSSE(f.key, "/v1/orders/"+id+"/events", map[string]string{HeaderLastEventID: stale}).untilEnd(10 * time.Second)
		if len(frames) != 1 || frames[0].Body["status"] != "completed" || frames[0].ID < missed[len(missed)-1] {
			t.Errorf("Last-Event-ID %s: %+v", stale, frames)
		}
	}
	// Resuming after the terminal frame repeats how the order ended and closes.
	frames = f.openSSE(f.key, "/v1/orders/"+id+"/events", map[string]string{HeaderLastEventID: strconv.FormatUint(got[len(got)-1], 10)}).untilEnd(10 * time.Second)
	if len(frames) != 1 || frames[0].Body["status"] != "completed" {
		t.Errorf("resume after the end: %+v", frames)
	}
}

func TestBatchStream(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()))
	a := f.uploadSmall(f.key, 160, photoA...)
	b := f.uploadSmall(f.key, 160, photoB...)
	r := f.do("POST", "/v1/batches", f.key, map[string]any{"name": "streamed", "scenes": []any{
		map[string]any{"inputs": []string{a}, "sky": true},
		map[string]any{"inputs": []string{b}},
	}})
	f.want(r, 201)
	id := r.data()["batchId"].(string)
	g.waitEntered(t)

	c := f.openSSE(f.key, "/v1/batches/"+id+"/events", nil)
	var snap []sseFrame
	for len(snap) < 3 {
		fr, ok := c.nextOf(10 * time.Second)
		if !ok {
			t.Fatal("stream ended during the snapshot")
		}
		snap = append(snap, fr)
	}
	if snap[0].Type != "order" || snap[0].Body["sceneIndex"] != float64(0) || snap[0].ID != 0 ||
		snap[1].Type != "order" || snap[1].Body["sceneIndex"] != float64(1) || snap[1].ID != 0 ||
		snap[2].Type != "batch" || snap[2].ID == 0 || snap[2].Body["total"] != float64(2) || snap[2].Body["orders"] != nil ||
		snap[2].Body["done"] != false {
		t.Fatalf("batch snapshot: %+v", snap)
	}
	g.open()
	rest := c.untilEnd(30 * time.Second)
	checkFrames(t, append(snap, rest...), 0)
	last := rest[len(rest)-1]
	if last.Type != "batch" || last.Body["done"] != true || last.Body["completed"] != float64(2) {
		t.Errorf("last batch frame %v", last.Body)
	}
	completions := 0
	for _, fr := range rest {
		if fr.Type == "order" && fr.Body["status"] == "completed" {
			completions++
		}
	}
	if completions < 1 {
		t.Errorf("no scene completion on the stream: %+v", rest)
	}
	// A done batch: the snapshot, then the end.
	frames := f.openSSE(f.key, "/v1/batches/"+id+"/events", nil).untilEnd(10 * time.Second)
	if len(frames) != 3 || frames[2].Body["done"] != true {
		t.Errorf("stream of a done batch: %+v", frames)
	}
	f.want(f.do("GET", "/v1/batches/"+id+"/events", f.other, nil), 404)
}

func TestAccountFeed(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()))
	in := f.uploadSmall(f.key, 160, photoA...)
	done := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	f.waitOrder(f.key, done)
	held := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
	g.waitEntered(t)

	c := f.openSSE(f.key, "/v1/events", nil)
	snap, _ := c.nextOf(10 * time.Second)
	if snap.Body["orderUuid"] != held || snap.Body["status"] != "running" || snap.ID == 0 {
		t.Fatalf("the feed opens with %+v, want the running order only", snap)
	}
	otherIn := f.uploadSmall(f.other, 160, photoB...)
	foreign := f.submit(f.other, map[string]any{"inputs": []string{otherIn}})["orderId"].(string)
	fresh := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	frames := []sseFrame{snap}
	for {
		fr, ok := c.nextOf(30 * time.Second)
		if !ok {
			t.Fatal("the account feed ended by itself")
		}
		frames = append(frames, fr)
		if fr.Body["orderUuid"] == foreign {
			t.Fatal("another key's order appeared on the feed")
		}
		if fr.Body["orderUuid"] == fresh && fr.Body["status"] == "completed" {
			break
		}
	}
	checkFrames(t, frames, 0)
	c.close()
	// Closing the feed cancels nothing.
	g.open()
	if s := f.waitOrder(f.key, held); s["status"] != "completed" {
		t.Errorf("held order ended %v after the feed closed", s)
	}
	f.waitOrder(f.other, foreign)
}

func TestStreamPings(t *testing.T) {
	f := startFull(t, withConfig(func(c *Config) { c.PingInterval = 30 * time.Millisecond }))
	c := f.openSSE(f.key, "/v1/events", nil)
	start := time.Now()
	for n := 0; n < 3; {
		fr, ok := c.next(5 * time.Second)
		if !ok {
			t.Fatal("the feed ended")
		}
		if fr.Type != core.EventPing || fr.Event != "ping" || fr.ID != 0 || fr.Data != `{"type":"ping","data":{}}` {
			t.Fatalf("frame %+v", fr)
		}
		n++
	}
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Errorf("3 pings in %s at a 30 ms interval", el)
	}
}

func TestStreamsEndOnShutdown(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()))
	in := f.uploadSmall(f.key, 160, photoA...)
	id := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
	g.waitEntered(t)
	feed := f.openSSE(f.key, "/v1/events", nil)
	order := f.openSSE(f.key, "/v1/orders/"+id+"/events", nil)
	feed.nextOf(5 * time.Second)
	order.nextOf(5 * time.Second)

	start := time.Now()
	if err := f.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, c := range []*sseConn{feed, order} {
		c.untilEnd(5 * time.Second)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("shutdown with open streams took %s", el)
	}
	g.open()
}

func TestSlowSubscriberIsDropped(t *testing.T) {
	f := startFull(t, withBus(events.Config{Buffer: 8}))
	c := f.dialSSE(f.key, "/v1/events", nil)
	if c.res.StatusCode != 200 {
		t.Fatal(c.res.Status)
	}
	// Read nothing while the bus publishes far more than the socket buffers hold.
	pad := strings.Repeat("x", 256<<10)
	waitFor(t, func() bool { return f.bus.Subscribers() == 1 }, "the stream to subscribe")
	for i := 0; i < 400 && f.bus.Subscribers() > 0; i++ {
		f.bus.Publish(core.Event{Type: core.EventOrder, Owner: f.keyID, OrderID: "o", Data: map[string]any{"orderUuid": "o", "status": "running", "pad": pad}})
	}
	waitFor(t, func() bool { return f.bus.Subscribers() == 0 }, "the bus to drop the stalled stream")
	// The client catches up: it gets what was in flight, then the end.
	go c.read()
	n := 0
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				if n >= 400 {
					t.Errorf("all %d frames arrived; nothing was dropped", n)
				}
				t.Logf("the dropped stream delivered %d of the frames, then ended", n)
				return
			}
			n++
		case <-deadline:
			t.Fatalf("the dropped stream did not end (%d frames read)", n)
		}
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
