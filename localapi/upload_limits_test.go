package localapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawPut is an upload on its own connection whose body the test sends when it
// chooses.
type rawPut struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// startPut sends the headers of a PUT to the signed path up, declaring length
// bytes and asking for 100-continue, so the server's first read of the body shows.
func (f *fullEnv) startPut(up string, length int) *rawPut {
	f.t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		up, f.addr, length)
	return &rawPut{t: f.t, conn: conn, br: bufio.NewReader(conn)}
}

// next reads the next answer (100 Continue included) and decodes an envelope.
func (p *rawPut) next() (*http.Response, map[string]any) {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // the test's own guard
	res, err := http.ReadResponse(p.br, nil)
	if err != nil {
		p.t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var env map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &env); err != nil {
			p.t.Fatalf("%d answer is not JSON: %s", res.StatusCode, b)
		}
	}
	return res, env
}

// admitted waits until the server starts reading the body.
func (p *rawPut) admitted() {
	p.t.Helper()
	if res, env := p.next(); res.StatusCode != http.StatusContinue {
		p.t.Fatalf("HTTP %d %v, want 100 Continue (the body admitted)", res.StatusCode, env)
	}
}

// finish sends the body and wants it stored.
func (p *rawPut) finish(body []byte) {
	p.t.Helper()
	p.conn.Write(body)
	if res, env := p.next(); res.StatusCode != http.StatusOK {
		p.t.Fatalf("HTTP %d %v, want 200", res.StatusCode, env)
	}
}

func errorOf(env map[string]any) (int, string) {
	e, _ := env["error"].(map[string]any)
	st, _ := e["status"].(float64)
	reason, _ := e["reason"].(string)
	return int(st), reason
}

// At most 8 upload bodies of one key are in flight at once; the signed address
// carries no key, so they are counted for the key that declared the asset.
func TestConcurrentUploadsPerKey(t *testing.T) {
	f := startFull(t)
	const size = 1000
	body := bytes.Repeat([]byte{0xff}, size)
	var held []*rawPut
	for range DefaultMaxConcurrentUploads {
		_, up := f.declare(f.key, "a.jpg", "image/jpeg")
		p := f.startPut(up, size)
		p.admitted()
		held = append(held, p)
	}
	_, ninth := f.declare(f.key, "a.jpg", "image/jpeg")
	res, env := f.startPut(ninth, size).next()
	status, reason := errorOf(env)
	if res.StatusCode != http.StatusTooManyRequests || status != 429 || !strings.Contains(reason, "8") {
		t.Fatalf("the 9th upload answered %d %v, want 429", res.StatusCode, env)
	}
	if res.Header.Get("Retry-After") != "1" || hasRateHeaders(res.Header) {
		t.Errorf("429 headers %v", res.Header)
	}
	// Declarations are limited only by the upload bucket, and another key is not
	// affected.
	f.declare(f.key, "b.jpg", "image/jpeg")
	_, otherUp := f.declare(f.other, "b.jpg", "image/jpeg")
	o := f.startPut(otherUp, size)
	o.admitted()
	o.finish(body)

	// A finished body frees its slot before its answer arrives.
	held[0].finish(body)
	p := f.startPut(ninth, size)
	p.admitted()
	p.finish(body)
}

// A stalled body is answered 408 after the configured idle time, the asset stays
// pending and the slot is free again.
func TestStalledUploadThroughTheAPI(t *testing.T) {
	f := startFull(t, withConfig(func(c *Config) {
		c.UploadIdleTimeout = 200 * time.Millisecond
		c.MaxConcurrentUploads = 1
	}))
	id, up := f.declare(f.key, "big.jpg", "image/jpeg")
	p := f.startPut(up, 100_000_000)
	p.admitted()
	p.conn.Write(make([]byte, 1024))
	res, env := p.next()
	if status, reason := errorOf(env); res.StatusCode != http.StatusRequestTimeout || status != 408 || !strings.Contains(reason, "stalled") {
		t.Fatalf("stalled upload answered %d %v, want 408", res.StatusCode, env)
	}
	if st := f.do("GET", "/v1/assets/"+id+"/status", f.key, nil); st.data()["status"] != "pending" {
		t.Errorf("asset after the stalled upload: %v", st.data())
	}
	f.want(f.do("POST", "/v1/assets/"+id+"/uploaded", f.key, nil), 409, "PUT")
	photo := readPhoto(t, photoA...)
	f.want(f.do("PUT", up, "", photo, withHeader("Content-Type", "image/jpeg")), 200)
}
