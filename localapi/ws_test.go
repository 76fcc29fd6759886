package localapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/porchlight/porchlight/core"
)

// ticket asks for a WebSocket ticket and answers its address.
func (f *fullEnv) ticket(key string) string {
	f.t.Helper()
	r := f.do("POST", "/v1/ws-ticket", key, nil)
	f.want(r, 200)
	d := r.data()
	t, u := d["ticket"].(string), d["url"].(string)
	if t == "" || u != "ws://"+f.addr+"/v1/ws?ticket="+url.QueryEscape(t) || d["expiresIn"] != float64(60) {
		f.t.Fatalf("ticket answered %v", d)
	}
	return u
}

type wsMessage struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// wsClient reads a connection's messages in the background.
type wsClient struct {
	conn  *websocket.Conn
	msgs  chan wsMessage
	err   error // why reading ended, once msgs is closed
	pings atomic.Int32
}

func (f *fullEnv) dialWS(u string) *wsClient {
	f.t.Helper()
	conn, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		code := 0
		if res != nil {
			code = res.StatusCode
		}
		f.t.Fatalf("dial %s: %v (HTTP %d)", u, err, code)
	}
	c := &wsClient{conn: conn, msgs: make(chan wsMessage, 1024)}
	conn.SetPingHandler(func(data string) error {
		c.pings.Add(1)
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	f.t.Cleanup(func() { conn.Close() })
	go func() {
		defer close(c.msgs)
		for {
			typ, data, err := conn.ReadMessage()
			if err != nil {
				c.err = err
				return
			}
			if typ != websocket.TextMessage {
				c.err = errors.New("a binary message")
				return
			}
			var m wsMessage
			if err := json.Unmarshal(data, &m); err != nil {
				c.err = err
				return
			}
			c.msgs <- m
		}
	}()
	return c
}

// until reads messages until match says so; it fails on the end or a timeout.
func (c *wsClient) until(t *testing.T, match func(wsMessage) bool) []wsMessage {
	t.Helper()
	var seen []wsMessage
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("the connection ended: %v (after %d messages)", c.err, len(seen))
			}
			seen = append(seen, m)
			if match(m) {
				return seen
			}
		case <-deadline:
			t.Fatalf("no matching message within 30 s (%d others)", len(seen))
		}
	}
}

// refused dials and wants the handshake answered with status and an envelope.
func (f *fullEnv) refused(u string, status int, mention string) {
	f.t.Helper()
	conn, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err == nil {
		conn.Close()
		f.t.Fatalf("dial %s was accepted", u)
	}
	if res == nil || res.StatusCode != status {
		f.t.Fatalf("dial %s: %v, response %v, want %d", u, err, res, status)
	}
	body, _ := io.ReadAll(res.Body)
	var env struct{ Error ErrorBody }
	if json.Unmarshal(body, &env) != nil || env.Error.Status != status || !strings.Contains(env.Error.Reason, mention) {
		f.t.Errorf("dial %s answered %s", u, body)
	}
}

func TestWebSocketCarriesTheKeysEvents(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()))
	in := f.uploadSmall(f.key, 160, photoA...)
	held := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
	g.waitEntered(t)

	r := f.do("POST", "/v1/ws-ticket", f.key, nil)
	f.want(r, 200)
	if r.Header.Get(HeaderRateLimit) != "60" || r.Header.Get(HeaderRateRemaining) != "58" { // the order, then the ticket
		t.Errorf("a ticket spends a write: %q of %q left", r.Header.Get(HeaderRateRemaining), r.Header.Get(HeaderRateLimit))
	}
	f.want(f.do("POST", "/v1/ws-ticket", "", nil), 401)
	c := f.dialWS(f.ticket(f.key))

	// The connection opens with the running orders.
	first := c.until(t, func(wsMessage) bool { return true })[0]
	if first.Type != core.EventOrder || first.Data["orderUuid"] != held || first.Data["status"] != "running" {
		t.Fatalf("first message %+v", first)
	}
	otherIn := f.uploadSmall(f.other, 160, photoB...)
	foreign := f.submit(f.other, map[string]any{"inputs": []string{otherIn}})["orderId"].(string)
	fresh := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	seen := c.until(t, func(m wsMessage) bool {
		return m.Type == core.EventOrder && m.Data["orderUuid"] == fresh && m.Data["status"] == "completed"
	})
	br := f.do("POST", "/v1/batches", f.key, map[string]any{"scenes": []any{map[string]any{"inputs": []string{in}}}})
	f.want(br, 201)
	seen = append(seen, c.until(t, func(m wsMessage) bool {
		return m.Type == core.EventBatch && m.Data["batchId"] == br.data()["batchId"] && m.Data["done"] == true
	})...)
	for _, m := range seen {
		if m.Data["orderUuid"] == foreign {
			t.Fatal("another key's order came over the connection")
		}
	}
	// Closing the connection cancels nothing.
	c.conn.Close()
	g.open()
	if s := f.waitOrder(f.key, held); s["status"] != "completed" {
		t.Errorf("held order ended %v", s)
	}
	f.waitOrder(f.other, foreign)
}

func TestWebSocketTickets(t *testing.T) {
	f := startFull(t)
	u := f.ticket(f.key)

	// A request that is not a handshake does not spend the ticket.
	f.want(f.do("GET", f.path(strings.Replace(u, "ws://", "http://", 1)), "", nil), 400, "WebSocket")
	c := f.dialWS(u)
	c.conn.Close()
	// Single use.
	f.refused(u, 401, "ticket")
	// Made up, or none at all.
	f.refused("ws://"+f.addr+"/v1/ws?ticket=wst_made-up", 401, "ticket")
	f.refused("ws://"+f.addr+"/v1/ws", 401, "ticket")
	// Expired: tickets live 60 seconds.
	stale := f.ticket(f.key)
	f.clock.Add(WSTicketTTL)
	f.refused(stale, 401, "ticket")
	fresh := f.ticket(f.key)
	f.clock.Add(WSTicketTTL - time.Second)
	f.dialWS(fresh).conn.Close()
	// A ticket of a key revoked meanwhile.
	k, secret := f.newKey("short-lived", core.ScopeStandard)
	revoked := f.ticket(secret)
	if err := f.keys.Revoke(k.UUID); err != nil {
		t.Fatal(err)
	}
	f.refused(revoked, 401, "revoked")
	// Another site's page may not open it.
	h := http.Header{"Origin": {"http://evil.example"}}
	conn, res, err := websocket.DefaultDialer.Dial(f.ticket(f.key), h)
	if err == nil {
		conn.Close()
		t.Fatal("a cross-origin handshake was accepted")
	}
	if res == nil || res.StatusCode != 403 {
		t.Errorf("cross-origin handshake: %v %v", err, res)
	}
}

func TestWebSocketPingsAndShutdown(t *testing.T) {
	f := startFull(t, withConfig(func(c *Config) { c.PingInterval = 30 * time.Millisecond }))
	c := f.dialWS(f.ticket(f.key))
	for n := 0; n < 3; n++ {
		m := c.until(t, func(wsMessage) bool { return true })[0]
		if m.Type != core.EventPing || m.Data == nil || len(m.Data) != 0 {
			t.Fatalf("message %+v, want a ping", m)
		}
	}
	if c.pings.Load() == 0 {
		t.Error("no ping control frame")
	}
	start := time.Now()
	if err := f.stop(); err != nil {
		t.Fatal(err)
	}
	for range c.msgs {
	}
	var ce *websocket.CloseError
	if !errors.As(c.err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Errorf("connection ended with %v, want a going-away close", c.err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("shutdown with an open WebSocket took %s", el)
	}
}
