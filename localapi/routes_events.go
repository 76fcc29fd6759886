package localapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// Event streams (Server-Sent Events): one order, one batch, or the whole account
// (their rows are in routes.go). They spend no budget and end when the resource
// settles (order and batch), when the bus drops a subscriber that fell behind, when
// the client goes away, when the key is rotated or revoked (streams.go) or when the
// server shuts down. Closing a stream never touches the order.

// HeaderLastEventID is the SSE resume header: the id of the last frame seen.
const HeaderLastEventID = "Last-Event-ID"

// streamWriteTimeout bounds one frame's write, so a client that stopped reading
// cannot hold a handler forever.
const streamWriteTimeout = 30 * time.Second

// eventMessage is one event: the JSON of an SSE data: line and of a WebSocket text
// message.
type eventMessage struct {
	Type string `json:"type" enum:"order,batch,ping" doc:"order: data is an order summary; batch: a batch aggregate without orders; ping: {}. Unknown types may be added: ignore them."`
	Data any    `json:"data"`
}

// frame is one message to send; id 0 sends no id: line.
type frame struct {
	id  uint64
	typ string
	msg any
}

// streamSpec is what differs between the three streams.
type streamSpec struct {
	filter events.Filter
	// snapshot reads the resource's current state; done means it is settled and the
	// stream ends after it. An error (404 for another key's resource) is answered
	// before the stream starts.
	snapshot func() (frames []frame, done bool, err error)
	// ends reports whether ev is the stream's terminal event.
	ends func(ev core.Event) bool
}

var lastEventIDHeader = Param{
	Name: HeaderLastEventID,
	Description: "resume after this frame id: the events held since then are replayed instead of a snapshot; " +
		"when they are no longer held a fresh snapshot is sent",
}

// sseFrames opens the documentation of every event stream.
const sseFrames = "Server-Sent Events. Each frame has id: (increasing), event: (the type) and data: " +
	"({\"type\", \"data\"} JSON). "

func (s *Server) orderEvents(w http.ResponseWriter, r *http.Request) {
	eng := s.deps.Engine
	owner, id := Owner(r), PathVar(r, "id")
	s.serveStream(w, r, streamSpec{
		filter: events.Filter{Owner: owner, OrderID: id},
		snapshot: func() ([]frame, bool, error) {
			sum, err := eng.Order(r.Context(), owner, id)
			if err != nil {
				return nil, false, err
			}
			return []frame{{typ: core.EventOrder, msg: sum}}, sum.Status.Terminal(), nil
		},
		ends: func(ev core.Event) bool {
			st, ok := orderStatus(ev)
			return ok && ev.OrderID == id && st.Terminal()
		},
	})
}

func (s *Server) batchEvents(w http.ResponseWriter, r *http.Request) {
	eng := s.deps.Engine
	owner, id := Owner(r), PathVar(r, "id")
	s.serveStream(w, r, streamSpec{
		filter: events.Filter{Owner: owner, BatchID: id},
		snapshot: func() ([]frame, bool, error) {
			agg, err := eng.Batch(r.Context(), owner, id)
			if err != nil {
				return nil, false, err
			}
			out := make([]frame, 0, len(agg.Orders)+1)
			for _, sc := range agg.Orders {
				out = append(out, frame{typ: core.EventOrder, msg: sc})
			}
			agg.Orders = nil
			return append(out, frame{typ: core.EventBatch, msg: agg}), agg.Done, nil
		},
		ends: func(ev core.Event) bool {
			agg, ok := ev.Data.(core.BatchAggregate)
			return ok && ev.Type == core.EventBatch && ev.BatchID == id && agg.Done
		},
	})
}

func (s *Server) accountEvents(w http.ResponseWriter, r *http.Request) {
	eng := s.deps.Engine
	owner := Owner(r)
	s.serveStream(w, r, streamSpec{
		filter: events.Filter{Owner: owner},
		snapshot: func() ([]frame, bool, error) {
			running := eng.Running(r.Context(), owner)
			out := make([]frame, len(running))
			for i, sum := range running {
				out[i] = frame{typ: core.EventOrder, msg: sum}
			}
			return out, false, nil
		},
		ends: func(core.Event) bool { return false },
	})
}

func orderStatus(ev core.Event) (core.OrderStatus, bool) {
	if ev.Type != core.EventOrder {
		return "", false
	}
	switch d := ev.Data.(type) {
	case core.OrderSummary:
		return d.Status, true
	case *core.OrderSummary:
		return d.Status, d != nil
	}
	return "", false
}

// serveStream runs one SSE stream. It subscribes before reading the snapshot so no
// event falls between them; events the snapshot already reflects (published before
// it was read) are skipped, and the snapshot's last frame carries the bus id it is
// current to, so resuming from it replays exactly what came after.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, spec streamSpec) {
	release, ok := s.takeStream(w, Owner(r))
	if !ok {
		return
	}
	defer release()
	bus := s.deps.Engine.Events()
	afterID := lastEventID(r)
	sub, complete := bus.Subscribe(spec.filter, afterID)
	defer sub.Close()
	// Every event with an id up to mark is already in sub's channel: the bus
	// delivers under the lock LastID takes.
	mark := bus.LastID()
	snap, done, err := spec.snapshot()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), end: keyEnd(r)}
	if err := sw.flush(); err != nil {
		return
	}

	var held *core.Event // an event read ahead while replaying
	if afterID != 0 && complete {
		// Resume: replay what the client missed instead of a snapshot. When the
		// resource has settled and the replay did not end with its terminal event,
		// the snapshot says how it ended.
	replay:
		for {
			select {
			case ev, ok := <-sub.C():
				if !ok {
					s.streamDropped(r, sub)
					return
				}
				if ev.ID > mark {
					held = &ev
					break replay
				}
				if sw.event(ev) != nil || spec.ends(ev) {
					return
				}
			default:
				break replay
			}
		}
		if done {
			sw.snapshot(snap, mark)
			return
		}
		sw.last = max(sw.last, mark)
	} else {
		if sw.snapshot(snap, mark) != nil || done {
			return
		}
	}

	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	if held != nil {
		if sw.event(*held) != nil || spec.ends(*held) {
			return
		}
	}
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				s.streamDropped(r, sub)
				return
			}
			if ev.ID <= sw.last {
				continue // already reflected in the snapshot or replayed
			}
			if sw.event(ev) != nil || spec.ends(ev) {
				return
			}
		case <-ping.C:
			if sw.ping() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.Stopping():
			return
		}
	}
}

func (s *Server) streamDropped(r *http.Request, sub *events.Subscription) {
	if err := sub.Err(); err != nil && !errors.Is(err, events.ErrBusClosed) {
		s.log.Info("event stream ended", "path", r.URL.Path, "reason", err)
	}
}

// lastEventID reads the resume header; anything that is not a positive integer
// counts as absent (a fresh start with a snapshot).
func lastEventID(r *http.Request) uint64 {
	v := strings.TrimSpace(r.Header.Get(HeaderLastEventID))
	if v == "" {
		return 0
	}
	id, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// sseWriter writes frames and flushes each one.
type sseWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	buf  []byte
	last uint64          // the highest id sent (or skipped as reflected by the snapshot)
	end  <-chan struct{} // closed when the key is rotated or revoked: nothing more is sent
}

func (sw *sseWriter) event(ev core.Event) error {
	return sw.write(frame{id: ev.ID, typ: ev.Type, msg: ev.Data})
}

// snapshot sends the snapshot frames; only the last carries an id (mark), so ids
// still increase and a resume from it starts after the snapshot. A mark already
// sent (the replay reached it) is not repeated.
func (sw *sseWriter) snapshot(frames []frame, mark uint64) error {
	for i, f := range frames {
		if i == len(frames)-1 && mark > sw.last {
			f.id = mark
		}
		if err := sw.write(f); err != nil {
			return err
		}
	}
	sw.last = max(sw.last, mark)
	return nil
}

var pingData = struct{}{}

func (sw *sseWriter) ping() error {
	return sw.write(frame{typ: core.EventPing, msg: pingData})
}

func (sw *sseWriter) write(f frame) error {
	if keyGone(sw.end) {
		return errKeyEnded
	}
	data, err := json.Marshal(eventMessage{Type: f.typ, Data: f.msg})
	if err != nil {
		return err
	}
	b := sw.buf[:0]
	if f.id != 0 {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, f.id, 10)
		b = append(b, '\n')
		sw.last = max(sw.last, f.id)
	}
	b = append(b, "event: "...)
	b = append(b, f.typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	sw.buf = b
	_ = sw.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.flush()
}

func (sw *sseWriter) flush() error { return sw.rc.Flush() }
