package assets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

// put sends body to an upload address.
func put(t *testing.T, url, contentType string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

// envelope decodes the JSON error envelope and checks its status member.
func envelope(t *testing.T, resp *http.Response, body []byte, status int) string {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	var env struct {
		Error struct {
			Status int    `json:"status"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Status != status || env.Error.Reason == "" {
		t.Fatalf("not an error envelope with status %d: %s (%v)", status, body, err)
	}
	return env.Error.Reason
}

func TestUploadConfirmIngestDownload(t *testing.T) {
	e := newEnv(t, Config{})
	data := photo(t, "interiors", "houses_109_bedroom.jpg")

	a, upURL, err := e.s.Declare(owner, "C:\\photos\\houses_109_bedroom.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != core.AssetPending || a.Filename != "houses_109_bedroom.jpg" || a.Kind != core.AssetUpload {
		t.Fatalf("declared %+v", a)
	}
	if !strings.HasPrefix(upURL, e.srv.URL+"/storage/upload/"+a.ID+"?") {
		t.Fatalf("upload URL %q is not absolute on %s", upURL, e.srv.URL)
	}
	// Confirming before any bytes arrived is a conflict.
	if _, err := e.s.Confirm(owner, a.ID); core.KindOf(err) != core.KindConflict {
		t.Fatalf("confirm without bytes: %v", err)
	}
	resp, body := put(t, upURL, "image/jpeg", bytes.NewReader(data))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("ETag") != `"`+hexSum(data)+`"` {
		t.Fatalf("PUT ETag %q", resp.Header.Get("ETag"))
	}
	if st, _ := e.s.Status(owner, a.ID); st.Status != core.AssetPending {
		t.Fatalf("uploaded but unconfirmed asset is %s, want pending", st.Status)
	}
	// Another key sees nothing.
	if _, err := e.s.Confirm("another-key", a.ID); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("confirm by another owner: %v", err)
	}
	c, err := e.s.Confirm(owner, a.ID)
	if err != nil || c.Status != core.AssetValidating {
		t.Fatalf("confirm: %+v %v", c, err)
	}
	if again, err := e.s.Confirm(owner, a.ID); err != nil || again.ID != a.ID {
		t.Fatalf("second confirm must be harmless: %v", err)
	}
	got := e.wait(a.ID)
	if got.Status != core.AssetReady || got.Format != "jpeg" || got.Width != 1024 || got.Height != 576 ||
		got.Size != int64(len(data)) || got.SHA256 != hexSum(data) {
		t.Fatalf("ingested %+v", got)
	}
	// The bytes cannot be replaced once confirmed.
	if resp, body := put(t, upURL, "image/jpeg", bytes.NewReader(data[:100])); resp.StatusCode != http.StatusConflict {
		t.Fatalf("PUT after confirm: %d %s", resp.StatusCode, body)
	}

	// Thumbnail: a JPEG within 512 px keeping the aspect ratio.
	tf, err := e.s.Thumbnail(owner, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := jpeg.Decode(tf)
	tf.Close()
	if err != nil || tm.Bounds().Dx() != 512 || tm.Bounds().Dy() != 288 {
		t.Fatalf("thumbnail %v %v", tm.Bounds(), err)
	}

	dl, expiresIn, err := e.s.DownloadURL(owner, a.ID)
	if err != nil || expiresIn != 3600 {
		t.Fatalf("download URL: %q %d %v", dl, expiresIn, err)
	}
	resp, body = get(t, dl)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET: %d, %d bytes (want %d identical)", resp.StatusCode, len(body), len(data))
	}
	h := resp.Header
	etag := `"` + hexSum(data) + `"`
	if h.Get("Content-Type") != "image/jpeg" || h.Get("Content-Length") != strconv.Itoa(len(data)) || h.Get("ETag") != etag {
		t.Fatalf("GET headers %v", h)
	}
	// Ranges.
	resp, body = get(t, dl, "Range", "bytes=100-1099")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[100:1100]) {
		t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(body))
	}
	if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes 100-1099/%d", len(data)) {
		t.Fatalf("Content-Range %q", cr)
	}
	// Conditional GET.
	if resp, _ = get(t, dl, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	// HEAD with the same signature.
	req, _ := http.NewRequest(http.MethodHead, dl, nil)
	resp, body = do(t, req)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(data)) {
		t.Fatalf("HEAD: %d %v", resp.StatusCode, resp.Header)
	}
	// An upload address is no download address and the other way round.
	if resp, body := put(t, strings.Replace(dl, "/download/", "/upload/", 1), "image/jpeg", bytes.NewReader(data)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("download signature used for PUT: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, strings.Replace(upURL, "/upload/", "/download/", 1)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upload signature used for GET: %d %s", resp.StatusCode, body)
	}
	// Wrong methods answer 405 with the envelope.
	req, _ = http.NewRequest(http.MethodDelete, dl, nil)
	resp, body = do(t, req)
	envelope(t, resp, body, http.StatusMethodNotAllowed)
}

func TestSignedAddressesTamperedAndExpired(t *testing.T) {
	var clk clock
	cfg := Config{}
	clk.install(&cfg)
	e := newEnv(t, cfg)
	data := photo(t, "interiors", "houses_158_bedroom.jpg")

	a, upURL, err := e.s.Declare(owner, "room.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	tampered := []string{
		strings.Replace(upURL, "sig=", "sig=00", 1),
		replaceQuery(upURL, "exp", func(v string) string { n, _ := strconv.ParseInt(v, 10, 64); return strconv.FormatInt(n+3600, 10) }),
		replaceQuery(upURL, "sig", func(v string) string { return strings.ToUpper(v[:1]) + flip(v[1:2]) + v[2:] }),
		strings.Replace(upURL, a.ID, "00000000-0000-0000-0000-000000000000", 1),
		strings.Split(upURL, "?")[0],
	}
	for _, u := range tampered {
		resp, body := put(t, u, "image/jpeg", bytes.NewReader(data))
		reason := envelope(t, resp, body, http.StatusForbidden)
		if !strings.Contains(reason, "invalid") {
			t.Errorf("tampered %s: reason %q", u, reason)
		}
	}
	// Upload addresses live 15 minutes; one re-issued meanwhile outlives the first.
	clk.Advance(10 * time.Minute)
	fresh, err := e.s.UploadURL(owner, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(5*time.Minute + time.Second)
	resp, body := put(t, upURL, "image/jpeg", bytes.NewReader(data))
	if reason := envelope(t, resp, body, http.StatusForbidden); !strings.Contains(reason, "expired") {
		t.Fatalf("expired upload: reason %q", reason)
	}
	upURL = fresh
	if resp, body := put(t, upURL, "image/jpeg", bytes.NewReader(data)); resp.StatusCode != http.StatusOK {
		t.Fatalf("fresh upload address: %d %s", resp.StatusCode, body)
	}
	if _, err := e.s.Confirm(owner, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.wait(a.ID); got.Status != core.AssetReady {
		t.Fatalf("ingest: %+v", got)
	}
	dl, _, err := e.s.DownloadURL(owner, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Minute)
	if resp, _ := get(t, dl); resp.StatusCode != http.StatusOK {
		t.Fatalf("download after 59 minutes: %d", resp.StatusCode)
	}
	clk.Advance(time.Minute)
	resp, body = get(t, dl)
	if reason := envelope(t, resp, body, http.StatusForbidden); !strings.Contains(reason, "expired") {
		t.Fatalf("expired download: reason %q", reason)
	}
}

func replaceQuery(u, key string, f func(string) string) string {
	base, q, _ := strings.Cut(u, "?")
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, v, ok := strings.Cut(p, "="); ok && k == key {
			parts[i] = k + "=" + f(v)
		}
	}
	return base + "?" + strings.Join(parts, "&")
}

func flip(c string) string {
	if c == "0" {
		return "1"
	}
	return "0"
}

func TestUploadWrongContentType(t *testing.T) {
	e := newEnv(t, Config{})
	data := photo(t, "interiors", "houses_156_bedroom.jpg")
	a, upURL, err := e.s.Declare(owner, "x.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"image/png", "", "application/octet-stream"} {
		resp, body := put(t, upURL, ct, bytes.NewReader(data))
		if reason := envelope(t, resp, body, http.StatusUnsupportedMediaType); !strings.Contains(reason, "image/jpeg") {
			t.Errorf("Content-Type %q: reason %q does not name the declared type", ct, reason)
		}
	}
	if got, _ := e.s.Get(owner, a.ID); got.SHA256 != "" || got.Size != 0 {
		t.Fatalf("refused bytes were stored: %+v", got)
	}
	// Parameters and case do not matter.
	if resp, body := put(t, upURL, "Image/JPEG; charset=binary", bytes.NewReader(data)); resp.StatusCode != http.StatusOK {
		t.Fatalf("equal media type refused: %d %s", resp.StatusCode, body)
	}
}

func TestDeclareValidation(t *testing.T) {
	e := newEnv(t, Config{})
	for _, c := range []struct{ name, ct, field string }{
		{"a.jpg", "image/gif", "contentType"},
		{"a.jpg", "", "contentType"},
		{"a.jpg", "text/plain", "contentType"},
		{"", "image/jpeg", "filename"},
		{"dir/", "image/jpeg", "filename"},
		{"bad\x00name.jpg", "image/jpeg", "filename"},
		{strings.Repeat("n", 300) + ".jpg", "image/jpeg", "filename"},
	} {
		_, _, err := e.s.Declare(owner, c.name, c.ct)
		var ce *core.Error
		if core.KindOf(err) != core.KindInvalid || !asCore(err, &ce) || ce.Field != c.field {
			t.Errorf("Declare(%q, %q) = %v, want invalid %s", c.name, c.ct, err, c.field)
		}
	}
	for _, ct := range []string{"image/jpeg", "image/heif", "image/x-canon-cr3", "application/octet-stream", "IMAGE/PNG"} {
		if _, _, err := e.s.Declare(owner, "ok", ct); err != nil {
			t.Errorf("Declare with %s: %v", ct, err)
		}
	}
}
