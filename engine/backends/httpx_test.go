package backends

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

func caller(t *testing.T, base string, retries int) *Caller {
	t.Helper()
	u, _ := url.Parse(base)
	return &Caller{Backend: "test (x)", Base: u, Client: &http.Client{}, Header: http.Header{"Authorization": {"Bearer k"}},
		Retries: retries, Backoff: time.Millisecond}
}

func TestCallerRetries(t *testing.T) {
	var hits atomic.Int32
	statuses := []int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(hits.Add(1))
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if n <= len(statuses) {
			if statuses[n-1] == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(statuses[n-1])
			io.WriteString(w, `{"error": {"message": "nope", "type": "x"}}`)
			return
		}
		io.WriteString(w, `{"ok": true}`)
	}))
	defer srv.Close()
	run := func(st []int, retry Retry) (int, error) {
		hits.Store(0)
		statuses = st
		var out struct{ OK bool }
		err := caller(t, srv.URL, 3).JSON(context.Background(), Call{Op: "probe", Method: http.MethodGet, Path: "/x", Retry: retry}, &out)
		return int(hits.Load()), err
	}
	if n, err := run([]int{503, 500}, RetrySafe); err != nil || n != 3 {
		t.Errorf("two 5xx then success: %d hits, %v", n, err)
	}
	n, err := run([]int{400}, RetrySafe)
	var be *Error
	if n != 1 || !errors.As(err, &be) || be.Status != 400 || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "probe") {
		t.Errorf("400: %d hits, %v", n, err)
	}
	if n, err := run([]int{503, 503, 503, 503, 503}, RetrySafe); err == nil || n != 4 {
		t.Errorf("5xx until the retries run out: %d hits, %v", n, err)
	}
	if n, err := run([]int{503}, RetryNever); err == nil || n != 1 {
		t.Errorf("RetryNever: %d hits, %v", n, err)
	}
	// A request that starts a job is sent again only when refused before any work.
	if n, err := run([]int{503}, RetryUnsent); err != nil || n != 2 {
		t.Errorf("503 on a job: %d hits, %v", n, err)
	}
	for _, st := range []int{500, 502, 504} {
		if n, err := run([]int{st}, RetryUnsent); err == nil || n != 1 {
			t.Errorf("%d on a job (it may have run, or run on): %d hits, %v", st, n, err)
		}
	}
	start := time.Now()
	if n, err := run([]int{429}, RetryUnsent); err != nil || n != 2 || time.Since(start) < time.Second {
		t.Errorf("429 with Retry-After 1: %d hits in %v, %v", n, time.Since(start), err)
	}
}

// A request that creates something is not sent again when the connection died after
// it was sent; a safe one is.
func TestCallerConnectionErrors(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.ReadAll(r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // the server dies with the request in hand
	}))
	defer srv.Close()
	body, _ := JSONBody(map[string]int{"a": 1})
	for _, c := range []struct {
		retry Retry
		hits  int32
	}{{RetryUnsent, 1}, {RetrySafe, 3}} {
		hits.Store(0)
		_, err := caller(t, srv.URL, 2).Do(context.Background(), Call{Op: "queue", Method: http.MethodPost, Path: "/p", Body: body, Retry: c.retry})
		if err == nil || hits.Load() != c.hits {
			t.Errorf("retry %d: %d hits, %v", c.retry, hits.Load(), err)
		}
		if c.retry == RetryUnsent && !errors.Is(err, ErrMaybeStarted) {
			t.Errorf("a job request lost after it was sent: %v", err)
		}
	}
	// Nobody listening: not even sent, so retried either way.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := caller(t, "http://"+addr, 2).Do(context.Background(), Call{Op: "queue", Method: http.MethodPost, Path: "/p", Body: body, Retry: RetryUnsent})
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("refused connection: %v", err)
	}
}

func TestCallerHonoursContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := caller(t, srv.URL, 10)
	c.Backoff = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Do(ctx, Call{Method: http.MethodGet, Path: "/"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error": "OutOfMemoryError", "detail": "", "errors": "CUDA out of memory"}`:    "OutOfMemoryError; CUDA out of memory",
		`{"error": {"message": "Invalid size", "type": "invalid_request_error"}}`:        "Invalid size",
		`{"detail": [{"loc": ["body", "seed"], "msg": "value is not a valid integer"}]}`: "body.seed: value is not a valid integer",
		`{"error": {"type": "x", "message": "Prompt outputs failed validation"}, "node_errors": {"6": {"class_type": "KSampler", "errors": [{"message": "Value not in list", "details": "sampler_name"}]}}}`: "node 6 (KSampler): Value not in list: sampler_name",
		`<html>Bad Gateway</html>`: "<html>Bad Gateway</html>",
	} {
		if got := ErrorMessage([]byte(body)); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestMasksAndAnswers(t *testing.T) {
	m := imaging.New(8, 4, 1)
	m.Set(2, 1, 0, 1)
	m.Set(3, 1, 0, 0.4)
	decode := func(b []byte, err error) image.Image {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	gray := decode(EncodeMask(m, 0, 0, MaskGray)).(*image.Gray)
	if gray.GrayAt(2, 1).Y != 255 || gray.GrayAt(3, 1).Y != 102 || gray.GrayAt(0, 0).Y != 0 {
		t.Errorf("gray mask %v", gray.Pix)
	}
	tr := decode(EncodeMask(m, 0, 0, MaskTransparent)).(*image.NRGBA)
	if tr.NRGBAAt(2, 1).A != 0 || tr.NRGBAAt(3, 1).A != 255 || tr.NRGBAAt(0, 0).A != 255 {
		t.Errorf("transparent mask: edit where alpha is 0 only: %v %v %v", tr.NRGBAAt(2, 1), tr.NRGBAAt(3, 1), tr.NRGBAAt(0, 0))
	}
	wt := decode(EncodeMask(m, 0, 0, MaskWhiteOnTransparent)).(*image.NRGBA)
	if c := wt.NRGBAAt(2, 1); c.R != 255 || c.A != 255 || wt.NRGBAAt(3, 1).A != 102 || wt.NRGBAAt(0, 0).A != 0 {
		t.Errorf("white on transparent %v", wt.Pix[:40])
	}
	full := decode(EncodeMask(nil, 5, 3, MaskGray)).(*image.Gray)
	if full.Rect.Dx() != 5 || full.GrayAt(4, 2).Y != 255 {
		t.Error("a nil mask must cover the whole frame")
	}

	photo := imaging.New(32, 20, 3)
	for i := range photo.Pix {
		photo.Pix[i] = float32(i%7) / 7
	}
	b, err := EncodePNG(photo)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeAnswer(b)
	if err != nil || back.W() != 32 || back.H() != 20 || back.C != 3 {
		t.Fatalf("round trip %v", err)
	}
	var tiny bytes.Buffer
	png.Encode(&tiny, image.NewGray(image.Rect(0, 0, 4, 4)))
	for name, data := range map[string][]byte{"empty": nil, "html": []byte("<html>oops</html>"), "tiny": tiny.Bytes(), "truncated": b[:len(b)/2]} {
		if _, err := DecodeAnswer(data); err == nil {
			t.Errorf("%s answer accepted", name)
		}
	}
}

// An RGBA PNG keeps its alpha channel when opaque, decodes to the same pixels, and
// its transparent pixels are where it was told.
func TestEncodePNGAlpha(t *testing.T) {
	photo := imaging.New(37, 21, 3)
	for i := range photo.Pix {
		photo.Pix[i] = float32((i*7919)%251) / 251
	}
	want := photo.ToNRGBA()
	for _, clear := range []func(x, y int) bool{nil, func(x, y int) bool { return x < 5 && y > 10 }} {
		b, err := EncodePNGAlpha(photo, clear, 6)
		if err != nil {
			t.Fatal(err)
		}
		if b[25] != 6 {
			t.Errorf("colour type %d, want 6 (RGBA)", b[25])
		}
		m, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*image.NRGBA)
		for y := 0; y < 21; y++ {
			for x := 0; x < 37; x++ {
				c, w := got.NRGBAAt(x, y), want.NRGBAAt(x, y)
				transparent := clear != nil && clear(x, y)
				if (c.A == 0) != transparent || (!transparent && c != w) {
					t.Fatalf("pixel %d,%d: %v, want %v (transparent %v)", x, y, c, w, transparent)
				}
			}
		}
	}
	m := imaging.New(8, 4, 1) // marks nothing: still RGBA
	if b, err := EncodeMask(m, 0, 0, MaskTransparent); err != nil || b[25] != 6 {
		t.Errorf("a transparent-style mask that marks nothing: colour type %d, %v", b[25], err)
	}
}
