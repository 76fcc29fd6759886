package localapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// waitStreams waits until key holds n event stream slots.
func (f *fullEnv) waitStreams(key string, n int) {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		held, changed := f.srv.streams.inUse(key)
		if held == n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			f.t.Fatalf("key holds %d event streams, want %d", held, n)
		}
	}
}

// refusedStream opens an SSE stream and wants 429 with Retry-After and an envelope.
func (f *fullEnv) refusedStream(key, path string) {
	f.t.Helper()
	c := f.dialSSE(key, path, nil)
	defer c.close()
	if c.res.StatusCode == http.StatusOK {
		f.t.Fatalf("GET %s was accepted beyond the cap", path)
	}
	body, _ := io.ReadAll(c.res.Body)
	var env struct{ Error ErrorBody }
	json.Unmarshal(body, &env)
	if c.res.StatusCode != http.StatusTooManyRequests || env.Error.Status != 429 || !strings.Contains(env.Error.Reason, "16") {
		f.t.Fatalf("GET %s answered %d %s, want 429", path, c.res.StatusCode, body)
	}
	if c.res.Header.Get("Retry-After") == "" || hasRateHeaders(c.res.Header) {
		f.t.Errorf("GET %s: 429 headers %v", path, c.res.Header)
	}
}

// One key holds at most 16 event streams, SSE and WebSocket together; a slot is
// free again once its stream ends, however it ends.
func TestEventStreamsPerKey(t *testing.T) {
	f := startFull(t)
	var sse []*sseConn
	var ws []*wsClient
	for i := range DefaultMaxStreams {
		if i%4 == 3 {
			ws = append(ws, f.dialWS(f.ticket(f.key)))
			continue
		}
		sse = append(sse, f.openSSE(f.key, "/v1/events", nil))
	}

	// Every kind of stream is refused beyond the cap, before anything else is
	// looked at.
	f.refusedStream(f.key, "/v1/events")
	f.refusedStream(f.key, "/v1/orders/"+uuid.NewString()+"/events")
	f.refusedStream(f.key, "/v1/batches/"+uuid.NewString()+"/events")
	kept := f.ticket(f.key)
	f.refused(kept, http.StatusTooManyRequests, "16")
	// Another key has streams of its own.
	f.openSSE(f.other, "/v1/events", nil).close()

	// A client that goes away frees its slot; the refused ticket was not spent.
	sse[0].close()
	f.waitStreams(f.keyID, DefaultMaxStreams-1)
	ws = append(ws, f.dialWS(kept))
	f.waitStreams(f.keyID, DefaultMaxStreams)
	ws[0].conn.Close()
	f.waitStreams(f.keyID, DefaultMaxStreams-1)

	// A stream the server ends (here before it starts: an unknown order) gives its
	// slot back too.
	f.want(f.do("GET", "/v1/orders/"+uuid.NewString()+"/events", f.key, nil), 404)
	f.waitStreams(f.keyID, DefaultMaxStreams-1)
	f.openSSE(f.key, "/v1/events", nil)
	f.refusedStream(f.key, "/v1/events")

	// Shutting down ends them all.
	if err := f.stop(); err != nil {
		t.Fatal(err)
	}
	f.waitStreams(f.keyID, 0)
}
