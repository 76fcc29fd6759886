package assets

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

// expiryEnv is a service whose clock the test moves and whose committed changes it
// follows; sweep is how often Serve looks for lapsed uploads.
func expiryEnv(t *testing.T, sweep time.Duration) (*env, *clock, *changeLog) {
	t.Helper()
	var clk clock
	changes := &changeLog{c: make(chan core.Asset, 256), last: map[string]core.Asset{}}
	cfg := Config{OnChange: func(a core.Asset) { changes.c <- a }}
	clk.install(&cfg)
	e := openEnv(t, t.TempDir(), cfg, func(s *Service) { s.sweepEvery = sweep })
	return e, &clk, changes
}

// changeLog follows the committed changes of asset records.
type changeLog struct {
	c    chan core.Asset
	last map[string]core.Asset // the latest change of each asset read so far
}

// waitExpired waits for the change that fails asset id with upload_expired.
func (l *changeLog) waitExpired(t *testing.T, id string) core.Asset {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if a, ok := l.last[id]; ok && a.Status != core.AssetPending {
			if a.Status != core.AssetFailed || a.Code != core.CodeUploadExpired || a.Reason == "" {
				t.Fatalf("asset %s went %s (%s) instead of expiring", id, a.Status, a.Code)
			}
			return a
		}
		select {
		case a := <-l.c:
			l.last[a.ID] = a
		case <-deadline:
			t.Fatalf("asset %s did not expire", id)
		}
	}
}

func putBytes(t *testing.T, up string, data []byte) {
	t.Helper()
	if res, body := put(t, up, "image/jpeg", bytes.NewReader(data)); res.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
}

// A declared upload that is never confirmed fails with upload_expired once its
// address lapses, and gives back any bytes it had; one whose address was re-issued
// lives on.
func TestSweeperExpiresUnconfirmedUploads(t *testing.T) {
	e, clk, changes := expiryEnv(t, 10*time.Millisecond)
	empty, _, err := e.s.Declare(owner, "never.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	sent, up, err := e.s.Declare(owner, "sent.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("bytes that were never confirmed")
	putBytes(t, up, data)
	kept, _, err := e.s.Declare(owner, "kept.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	if _, err := e.s.UploadURL(owner, kept.ID); err != nil {
		t.Fatal(err)
	}

	clk.Advance(5*time.Minute + time.Second)
	changes.waitExpired(t, empty.ID)
	changes.waitExpired(t, sent.ID)
	if e.s.blobs.Exists(hexSum(data)) {
		t.Error("the bytes of an expired upload are still stored")
	}
	if n, err := e.s.store.Refs(hexSum(data)); err != nil || n != 0 {
		t.Errorf("%d references left to an expired upload's bytes (%v)", n, err)
	}
	st, err := e.s.Status(owner, sent.ID)
	if err != nil || st.Status != core.AssetFailed || st.Code != core.CodeUploadExpired {
		t.Errorf("status of the expired upload: %+v %v", st, err)
	}
	// Neither takes a new address or a confirmation any more.
	if _, err := e.s.UploadURL(owner, empty.ID); core.KindOf(err) != core.KindConflict {
		t.Errorf("re-issuing an expired upload: %v, want a conflict", err)
	}
	if a, err := e.s.Confirm(owner, sent.ID); err != nil || a.Status != core.AssetFailed {
		t.Errorf("confirming an expired upload: %+v %v", a, err)
	}

	// The re-issued one is still pending: a whole sweep after the deadline of the
	// others has passed over it.
	if n, err := e.s.ExpireUploads(); err != nil || n != 0 {
		t.Errorf("a later sweep expired %d (%v)", n, err)
	}
	if a, _ := e.s.Get(owner, kept.ID); a.Status != core.AssetPending {
		t.Errorf("the re-issued upload went %s", a.Status)
	}
	clk.Advance(10 * time.Minute)
	changes.waitExpired(t, kept.ID)
}

// With no sweep yet, confirming or re-issuing past the deadline sees the upload as
// expired all the same, and another key's asset stays untouched.
func TestLapsedUploadIsExpiredWithoutTheSweep(t *testing.T) {
	e, clk, _ := expiryEnv(t, time.Hour)
	a, up, err := e.s.Declare(owner, "late.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	putBytes(t, up, []byte("late bytes"))
	b, _, err := e.s.Declare(owner, "later.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(15 * time.Minute)
	if _, err := e.s.UploadURL("another-key", b.ID); core.KindOf(err) != core.KindNotFound {
		t.Errorf("another key's re-issue: %v, want not found", err)
	}
	if got, _ := e.s.Get(owner, b.ID); got.Status != core.AssetPending {
		t.Errorf("another key's call changed the asset: %+v", got)
	}
	if _, err := e.s.UploadURL(owner, b.ID); core.KindOf(err) != core.KindConflict {
		t.Errorf("re-issue at the deadline: %v, want a conflict", err)
	}
	c, err := e.s.Confirm(owner, a.ID)
	if err != nil || c.Status != core.AssetFailed || c.Code != core.CodeUploadExpired {
		t.Errorf("confirm at the deadline: %+v %v", c, err)
	}
	if got, _ := e.s.Get(owner, b.ID); got.Status != core.AssetFailed || got.Code != core.CodeUploadExpired {
		t.Errorf("re-issued past the deadline: %+v", got)
	}
}

// An upload whose bytes are still arriving when its address lapses is not expired
// under it; once the bytes are in, the client has a whole lifetime to confirm.
func TestUploadInFlightOutlivesItsAddress(t *testing.T) {
	e, clk, _ := expiryEnv(t, time.Hour)
	a, up, err := e.s.Declare(owner, "slow.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	data := bytes.Repeat([]byte{0xd8}, 4096)
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		u.RequestURI(), u.Host, len(data))
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if res, err := http.ReadResponse(br, nil); err != nil || res.StatusCode != http.StatusContinue {
		t.Fatalf("the body was not taken up: %v %v", res, err)
	}
	clk.Advance(15*time.Minute + time.Second)
	if n, err := e.s.ExpireUploads(); err != nil || n != 0 {
		t.Fatalf("a sweep during the upload expired %d (%v)", n, err)
	}
	conn.Write(data)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the upload in flight: %v %v", res, err)
	}
	clk.Advance(14 * time.Minute)
	if n, err := e.s.ExpireUploads(); err != nil || n != 0 {
		t.Fatalf("a sweep after the bytes arrived expired %d (%v)", n, err)
	}
	if c, err := e.s.Confirm(owner, a.ID); err != nil || c.Status != core.AssetValidating {
		t.Errorf("confirm after the upload: %+v %v", c, err)
	}
}
