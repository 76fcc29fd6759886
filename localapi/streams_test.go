package localapi

import (
	"errors"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// Revoking or rotating a key ends every stream it opened at once: SSE of one
// order, of a batch and of the account, and the WebSocket. Nothing is delivered
// afterwards, not even the completion (and output id) of orders that finish after
// the revocation, and a ticket bought before it no longer opens a connection.
func TestRevokedOrRotatedKeyEndsItsStreams(t *testing.T) {
	for _, how := range []string{"revoke", "rotate"} {
		t.Run(how, func(t *testing.T) {
			g := newGate()
			f := startFull(t, withStep(g.step()))
			in := f.uploadSmall(f.key, 160, photoA...)
			order := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
			br := f.do("POST", "/v1/batches", f.key, map[string]any{"name": "held", "scenes": []any{
				map[string]any{"inputs": []string{in}, "sky": true},
			}})
			f.want(br, 201)
			batch := br.data()["batchId"].(string)
			g.waitEntered(t)
			g.waitEntered(t)

			// Every stream is open and has sent its opening snapshot.
			orderSSE := f.openSSE(f.key, "/v1/orders/"+order+"/events", nil)
			batchSSE := f.openSSE(f.key, "/v1/batches/"+batch+"/events", nil)
			feed := f.openSSE(f.key, "/v1/events", nil)
			for _, c := range []*sseConn{orderSSE, batchSSE, feed} {
				if _, ok := c.nextOf(10 * time.Second); !ok {
					t.Fatal("a stream ended before the key did")
				}
			}
			ws := f.dialWS(f.ticket(f.key))
			ws.until(t, func(m wsMessage) bool { return m.Type == core.EventOrder })
			spare := f.ticket(f.key)

			rec, _ := f.bus.Subscribe(events.Filter{Owner: f.keyID}, 0)
			defer rec.Close()
			if how == "revoke" {
				f.want(f.do("DELETE", "/v1/api-keys/"+f.keyID, f.admin, nil), 200)
			} else {
				f.want(f.do("POST", "/v1/api-keys/rotate", f.key, nil), 200)
			}
			// The work goes on and finishes after the key ended.
			g.open()
			waitSettled(t, rec, order, batch)

			for name, c := range map[string]*sseConn{"order": orderSSE, "batch": batchSSE, "account": feed} {
				for _, fr := range c.untilEnd(10 * time.Second) {
					if st, _ := fr.Body["status"].(string); st == "completed" || fr.Body["outputAssetId"] != nil || fr.Body["done"] == true {
						t.Errorf("%s stream delivered after the key ended: %+v", name, fr.Body)
					}
				}
			}
			for m := range ws.msgs {
				if st, _ := m.Data["status"].(string); st == "completed" || m.Data["outputAssetId"] != nil || m.Data["done"] == true {
					t.Errorf("WebSocket delivered after the key ended: %+v", m)
				}
			}
			var ce *websocket.CloseError
			if !errors.As(ws.err, &ce) || ce.Code != websocket.ClosePolicyViolation {
				t.Errorf("WebSocket ended with %v, want a policy-violation close", ws.err)
			}
			f.refused(spare, 401, "rotated or revoked")
		})
	}
}

// waitSettled waits on the bus until the order is terminal and the batch done.
func waitSettled(t *testing.T, sub *events.Subscription, order, batch string) {
	t.Helper()
	orderDone, batchDone := false, false
	timeout := time.After(60 * time.Second)
	for !orderDone || !batchDone {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatalf("the bus dropped the test's subscription: %v", sub.Err())
			}
			if st, ok := orderStatus(ev); ok && ev.OrderID == order && st.Terminal() {
				orderDone = true
			}
			if agg, ok := ev.Data.(core.BatchAggregate); ok && ev.BatchID == batch && agg.Done {
				batchDone = true
			}
		case <-timeout:
			t.Fatal("the order and the batch did not settle within 60 s")
		}
	}
}
