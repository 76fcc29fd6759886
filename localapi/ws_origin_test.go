package localapi

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
)

// A handshake refused for its Origin leaves the ticket unspent, so the rightful
// client can still use it.
func TestWebSocketOriginRefusalKeepsTheTicket(t *testing.T) {
	f := startFull(t)
	u := f.ticket(f.key)
	conn, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {"http://evil.example"}})
	if err == nil {
		conn.Close()
		t.Fatal("a cross-origin handshake was accepted")
	}
	if res == nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin handshake: %v %v, want 403", err, res)
	}
	f.dialWS(u).conn.Close()
}
