package iopaint

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// IOPaint pushes the diffusion's progress over Socket.IO (python-socketio, Engine.IO
// protocol 4) at /socket.io/: event "diffusion_progress" with {"step": n} after each
// sampler step and "diffusion_finish" at the end. This is the small part of the
// protocol needed to listen: the WebSocket transport, the namespace connect, and
// answering the server's pings.

// progressListener follows the events until ctx ends.
type progressListener struct {
	conn *websocket.Conn
	done chan struct{}
}

// listenProgress connects to the Socket.IO endpoint of base and calls onStep with the
// step numbers of "diffusion_progress". It returns nil when the server offers no
// Socket.IO (progress is then reported only at the end).
func listenProgress(ctx context.Context, base *url.URL, header http.Header, onStep func(step int)) *progressListener {
	u := *base
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path = base.Path + "/socket.io/"
	u.RawQuery = url.Values{"EIO": {"4"}, "transport": {"websocket"}}.Encode()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, res, err := websocket.DefaultDialer.DialContext(dctx, u.String(), header)
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	if err != nil {
		return nil
	}
	// Engine.IO open packet, then connect to the default namespace.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := conn.ReadMessage()
	if err != nil || len(msg) == 0 || msg[0] != '0' {
		conn.Close()
		return nil
	}
	if err := conn.WriteMessage(websocket.TextMessage, []byte("40")); err != nil {
		conn.Close()
		return nil
	}
	// Events flow once the server acknowledged the namespace ("40{sid}").
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			conn.Close()
			return nil
		}
		if strings.HasPrefix(string(msg), "40") {
			break
		}
		if string(msg) == "2" {
			conn.WriteMessage(websocket.TextMessage, []byte("3"))
		}
	}
	conn.SetReadDeadline(time.Time{})
	l := &progressListener{conn: conn, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			s := string(msg)
			switch {
			case s == "2": // ping
				if conn.WriteMessage(websocket.TextMessage, []byte("3")) != nil {
					return
				}
			case strings.HasPrefix(s, "42"):
				var ev []json.RawMessage
				if json.Unmarshal([]byte(s[2:]), &ev) != nil || len(ev) == 0 {
					continue
				}
				var name string
				if json.Unmarshal(ev[0], &name) != nil || name != "diffusion_progress" || len(ev) < 2 {
					continue
				}
				var data struct {
					Step *int `json:"step"`
				}
				if json.Unmarshal(ev[1], &data) == nil && data.Step != nil {
					onStep(*data.Step)
				}
			}
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			conn.Close()
		case <-l.done:
		}
	}()
	return l
}

// close disconnects and waits for the reader to stop, so onStep is never called
// after it returns.
func (l *progressListener) close() {
	if l == nil {
		return
	}
	l.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	l.conn.Close()
	<-l.done
}
