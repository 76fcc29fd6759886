package localapi

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// The WebSocket: one connection carries every order and batch event of a key as
// {"type", "data"} text messages. A browser cannot set X-API-Key on a WebSocket
// handshake, so the key buys a ticket first (POST /v1/ws-ticket, a write) and the
// handshake presents it: single use, bound to the key, valid WSTicketTTL. The two
// routes' rows are in routes.go.

// WSTicketTTL is how long a WebSocket ticket stays usable.
const WSTicketTTL = 60 * time.Second

// wsReadLimit bounds what a client may send; it has nothing to say but close.
const wsReadLimit = 4 << 10

type wsTicketAnswer struct {
	Ticket    string `json:"ticket" doc:"single use; bound to the key that asked for it"`
	URL       string `json:"url" doc:"the WebSocket address with the ticket: ws://host/v1/ws?ticket=..."`
	ExpiresIn int    `json:"expiresIn" doc:"seconds the ticket stays usable"`
}

func (s *Server) issueWSTicket(r *http.Request) (int, any, error) {
	t, err := s.tickets.issue(Owner(r), keyEnd(r))
	if err != nil {
		return 0, nil, err
	}
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	u := scheme + "://" + r.Host + "/v1/ws?ticket=" + url.QueryEscape(t)
	return 0, wsTicketAnswer{Ticket: t, URL: u, ExpiresIn: int(WSTicketTTL / time.Second)}, nil
}

// ticketStore holds the outstanding tickets in memory: a restart forgets them,
// which only means asking for a new one.
type ticketStore struct {
	now func() time.Time

	mu        sync.Mutex
	tickets   map[string]wsTicket
	lastSweep time.Time
}

type wsTicket struct {
	owner   string
	expires time.Time
	end     <-chan struct{} // closed when the key that bought it is rotated or revoked
}

func newTicketStore(now func() time.Time) *ticketStore {
	return &ticketStore{now: now, tickets: map[string]wsTicket{}}
}

// issue returns a new ticket for owner (32 random bytes, URL-safe), valid while
// end stays open.
func (ts *ticketStore) issue(owner string, end <-chan struct{}) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	t := "wst_" + base64.RawURLEncoding.EncodeToString(b[:])
	now := ts.now()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if now.Sub(ts.lastSweep) >= time.Second { // at most once a second, so issuing stays cheap
		for k, v := range ts.tickets {
			if !now.Before(v.expires) {
				delete(ts.tickets, k)
			}
		}
		ts.lastSweep = now
	}
	ts.tickets[t] = wsTicket{owner: owner, expires: now.Add(WSTicketTTL), end: end}
	return t, nil
}

// take consumes a ticket: it answers its owner and its key's end once, while it
// is valid.
func (ts *ticketStore) take(ticket string) (string, <-chan struct{}, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tickets[ticket]
	if !ok {
		return "", nil, false
	}
	delete(ts.tickets, ticket)
	if !ts.now().Before(t.expires) {
		return "", nil, false
	}
	return t.owner, t.end, true
}

// peek answers a valid ticket's owner without spending it.
func (ts *ticketStore) peek(ticket string) (string, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tickets[ticket]
	if !ok || !ts.now().Before(t.expires) {
		return "", false
	}
	return t.owner, true
}

func (s *Server) upgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		CheckOrigin:      s.wsOriginAllowed,
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			writeError(w, status, "WebSocket handshake: "+reason.Error())
		},
	}
}

// wsOriginAllowed accepts clients that send no Origin (not browsers), pages of
// this server itself and the configured CORS origins.
func (s *Server) wsOriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || s.cors.origins[strings.ToLower(origin)]
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		// Checked before the ticket is spent, so a wrong request does not burn it.
		writeError(w, http.StatusBadRequest, "this address takes a WebSocket handshake (Connection: Upgrade, Upgrade: websocket)")
		return
	}
	if !s.wsOriginAllowed(r) {
		// Before the ticket is spent too: another site's page must not burn it.
		writeError(w, http.StatusForbidden, "WebSocket handshake: Origin "+r.Header.Get("Origin")+" may not open this connection")
		return
	}
	if owner, known := s.tickets.peek(r.URL.Query().Get("ticket")); known {
		// Counted before the ticket is spent, so a client refused for its key's
		// streams keeps it.
		release, ok := s.takeStream(w, owner)
		if !ok {
			return
		}
		defer release()
	}
	owner, end, ok := s.tickets.take(r.URL.Query().Get("ticket"))
	if !ok {
		writeError(w, http.StatusUnauthorized, "ticket: unknown, already used or expired; get a new one from POST /v1/ws-ticket")
		return
	}
	if keyGone(end) {
		writeError(w, http.StatusUnauthorized, "ticket: the key it was issued to was rotated or revoked")
		return
	}
	if _, err := s.deps.Keys.Get(owner); err != nil {
		if core.KindOf(err) == core.KindNotFound {
			writeError(w, http.StatusUnauthorized, "ticket: the key it was issued to was revoked")
			return
		}
		s.writeErr(w, r, err)
		return
	}

	eng := s.deps.Engine
	bus := eng.Events()
	sub, _ := bus.Subscribe(events.Filter{Owner: owner}, 0)
	defer sub.Close()
	mark := bus.LastID()
	running := eng.Running(r.Context(), owner)

	conn, err := s.upgrader().Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	ws := &wsWriter{conn: conn, end: end}

	// The reader handles control frames (pongs, the client's close) and notices a
	// client that went away.
	readDeadline := 2*s.cfg.PingInterval + 10*time.Second
	conn.SetReadLimit(wsReadLimit)
	_ = conn.SetReadDeadline(time.Now().Add(readDeadline))
	conn.SetPongHandler(func(string) error {
		return conn.SetReadDeadline(time.Now().Add(readDeadline))
	})
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
			_ = conn.SetReadDeadline(time.Now().Add(readDeadline))
		}
	}()

	for _, sum := range running {
		if ws.send(core.EventOrder, sum) != nil {
			return
		}
	}
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				if errors.Is(sub.Err(), events.ErrSlowSubscriber) {
					ws.close(websocket.CloseTryAgainLater, "fell behind; reconnect and reconcile through GET /v1/orders/{id}")
				} else {
					ws.close(websocket.CloseGoingAway, "event bus closed")
				}
				return
			}
			if ev.ID <= mark {
				continue // reflected in the opening snapshot
			}
			if ws.send(ev.Type, ev.Data) != nil {
				return
			}
		case <-ping.C:
			if ws.ping() != nil {
				return
			}
		case <-gone:
			return
		case <-end:
			ws.close(websocket.ClosePolicyViolation, "the API key was rotated or revoked")
			return
		case <-s.Stopping():
			ws.close(websocket.CloseGoingAway, "server shutting down")
			return
		}
	}
}

// wsWriter sends messages; only the handler's goroutine writes.
type wsWriter struct {
	conn *websocket.Conn
	end  <-chan struct{} // closed when the key is rotated or revoked: nothing more is sent
}

func (ws *wsWriter) send(typ string, data any) error {
	if keyGone(ws.end) {
		return errKeyEnded
	}
	b, err := json.Marshal(eventMessage{Type: typ, Data: data})
	if err != nil {
		return err
	}
	_ = ws.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	return ws.conn.WriteMessage(websocket.TextMessage, b)
}

func (ws *wsWriter) ping() error {
	if err := ws.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(streamWriteTimeout)); err != nil {
		return err
	}
	return ws.send(core.EventPing, pingData)
}

func (ws *wsWriter) close(code int, reason string) {
	msg := websocket.FormatCloseMessage(code, reason)
	_ = ws.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}
