package localapi

import (
	"context"
	"errors"
	"net/http"
)

// A key's long-lived requests (the SSE streams and the WebSocket) end as soon as
// the secret that opened them stops working. Rotation and revocation close the
// channel keys.Service.AuthenticateWatch handed out when the request was
// authenticated: that cancels a stream's context, so its loop wakes and returns,
// and every frame checks the channel before it is written, so nothing reaches the
// client once the call that rotated or revoked the key has answered.

type keyEndCtx struct{}

// errKeyEnded stops a writer whose key was rotated or revoked.
var errKeyEnded = errors.New("the API key was rotated or revoked")

func withKeyEnd(ctx context.Context, end <-chan struct{}) context.Context {
	return context.WithValue(ctx, keyEndCtx{}, end)
}

// keyEnd is the channel closed when the request's key stops working; nil (never
// closed) on public routes.
func keyEnd(r *http.Request) <-chan struct{} {
	end, _ := r.Context().Value(keyEndCtx{}).(<-chan struct{})
	return end
}

// keyGone reports whether end has closed.
func keyGone(end <-chan struct{}) bool {
	select {
	case <-end:
		return true
	default:
		return false
	}
}

// untilKeyEnds returns r with a context that is also cancelled when its key stops
// working. cancel releases the watch; call it when the request is done.
func untilKeyEnds(r *http.Request) (*http.Request, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	if end := keyEnd(r); end != nil {
		go func() {
			select {
			case <-end:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return r.WithContext(ctx), cancel
}
