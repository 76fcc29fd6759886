package localapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "golang.org/x/image/webp"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/syncbuf"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// Real photos the route tests use (small, so orders finish in a blink).
var (
	photoA = []string{"brackets", "house_interior_kim", "A.jpg"} // 752x500
	photoB = []string{"brackets", "house_interior_kim", "B.jpg"} // 752x500
	photoC = []string{"brackets", "house_interior_kim", "C.jpg"} // 752x500
)

// fullEnv is the whole stack on real parts: a bbolt file, the asset store with its
// ingest workers, the engine with its pipeline and bus, and the HTTP server on
// 127.0.0.1:0.
type fullEnv struct {
	*testEnv
	dir    string
	db     *store.DB
	assets *assets.Service
	eng    *engine.Engine
	pipe   *pipeline.Pipeline
	bus    *events.Bus

	key, keyID     string // a standard key
	other, otherID string // a second standard key

	stopWork context.CancelFunc
	workDone sync.WaitGroup
}

type fullSetup struct {
	dir    string // the data dir; a fresh temp dir when empty
	cfg    Config
	engine engine.Config
	bus    events.Config
	steps  []pipeline.Step
	assets assets.Config
}

type fullOption func(*fullSetup)

func withConfig(f func(*Config)) fullOption { return func(s *fullSetup) { f(&s.cfg) } }
func withBus(c events.Config) fullOption    { return func(s *fullSetup) { s.bus = c } }
func withStep(st pipeline.Step) fullOption {
	return func(s *fullSetup) { s.steps = append(s.steps, st) }
}
func withEngine(f func(*engine.Config)) fullOption { return func(s *fullSetup) { f(&s.engine) } }
func withDir(dir string) fullOption                { return func(s *fullSetup) { s.dir = dir } }
func withAssets(f func(*assets.Config)) fullOption { return func(s *fullSetup) { f(&s.assets) } }

// startFull starts the whole stack; cleanup stops it in order.
func startFull(t *testing.T, opts ...fullOption) *fullEnv {
	t.Helper()
	testphotos.Dir(t)
	setup := fullSetup{engine: engine.Config{Workers: 2}}
	for _, o := range opts {
		o(&setup)
	}
	dir := setup.dir
	if dir == "" {
		dir = t.TempDir()
	}
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ks := keys.New(db)
	if _, err := ks.EnsureBootstrap(adminSecret); err != nil {
		t.Fatal(err)
	}
	env := &testEnv{t: t, keys: ks, admin: adminSecret, logs: &syncbuf.Buffer{},
		clock: &fakeClock{t: time.Date(2025, 6, 1, 9, 0, 10, 0, time.UTC)}}
	log := slog.New(slog.NewTextHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := &fullEnv{testEnv: env, dir: dir, db: db}

	var engMu sync.Mutex
	acfg := setup.assets
	acfg.Workers = 2
	acfg.OnDelete = func(a core.Asset) {
		engMu.Lock()
		defer engMu.Unlock()
		if f.eng != nil {
			f.eng.AssetDeleted(a)
		}
	}
	f.assets, err = assets.New(db, dir, acfg)
	if err != nil {
		t.Fatal(err)
	}
	f.pipe = pipeline.New(pipeline.Config{Logger: log})
	for _, st := range setup.steps {
		if err := f.pipe.Register(st); err != nil {
			t.Fatal(err)
		}
	}
	f.bus = events.New(setup.bus)
	ecfg := setup.engine
	ecfg.Pipeline, ecfg.Bus, ecfg.Logger = f.pipe, f.bus, log
	engMu.Lock()
	f.eng, err = engine.New(db, f.assets, ecfg)
	engMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.stopWork = cancel
	f.workDone.Add(2)
	go func() { defer f.workDone.Done(); f.assets.Serve(ctx) }()
	go func() { defer f.workDone.Done(); f.eng.Serve(ctx) }()

	listening := make(chan string, 1)
	cfg := setup.cfg
	cfg.Listen = "127.0.0.1:0"
	cfg.OnListening = func(addr string) {
		f.assets.SetBaseURL("http://" + addr)
		listening <- addr
	}
	cfg.Logger = log
	if cfg.Clock == nil {
		cfg.Clock = env.clock.Now
	}
	env.srv, err = New(cfg, Deps{Keys: ks, Assets: f.assets, Engine: f.eng})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	env.cancel, env.done = scancel, make(chan error, 1)
	go func() { env.done <- env.srv.Serve(sctx) }()
	select {
	case env.addr = <-listening:
	case err := <-env.done:
		t.Fatalf("Serve ended before listening: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("OnListening was not called")
	}
	env.base = "http://" + env.addr
	env.client = newTestClient()
	t.Cleanup(f.close)

	k, secret := env.newKey("main", core.ScopeStandard)
	f.key, f.keyID = secret, k.UUID
	k, secret = env.newKey("other", core.ScopeStandard)
	f.other, f.otherID = secret, k.UUID
	return f
}

func (f *fullEnv) close() {
	f.stop()
	f.stopWork()
	f.workDone.Wait()
	f.bus.Close()
	f.db.Close()
	if f.t.Failed() {
		f.t.Logf("server log:\n%s", tail(f.logs.String(), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// path turns an absolute address the server handed out into a path for do.
func (f *fullEnv) path(u string) string {
	f.t.Helper()
	if !strings.HasPrefix(u, f.base+"/") {
		f.t.Fatalf("address %q does not point at this server (%s)", u, f.base)
	}
	return strings.TrimPrefix(u, f.base)
}

func readPhoto(t testing.TB, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func contentTypeOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png":
		return "image/png"
	case ".webp":
		return "image/webp"
	}
	return "image/jpeg"
}

// declare answers the new asset's id and upload path.
func (f *fullEnv) declare(key, filename, ct string) (string, string) {
	f.t.Helper()
	r := f.do("POST", "/v1/assets", key, map[string]any{"filename": filename, "contentType": ct})
	f.want(r, 201)
	return r.data()["assetId"].(string), f.path(r.data()["uploadUrl"].(string))
}

// uploadBytes declares, PUTs and confirms data, and waits until ingest settles.
func (f *fullEnv) uploadBytes(key, filename string, data []byte) (string, map[string]any) {
	f.t.Helper()
	ct := contentTypeOf(filename)
	id, up := f.declare(key, filename, ct)
	f.want(f.do("PUT", up, "", data, withHeader("Content-Type", ct)), 200)
	f.want(f.do("POST", "/v1/assets/"+id+"/uploaded", key, nil), 202)
	return id, f.waitAsset(key, id)
}

// uploadPhoto uploads a real photo and wants it ready.
func (f *fullEnv) uploadPhoto(key string, rel ...string) string {
	f.t.Helper()
	id, st := f.uploadBytes(key, rel[len(rel)-1], readPhoto(f.t, rel...))
	if st["status"] != "ready" {
		f.t.Fatalf("asset %s ended %v", id, st)
	}
	return id
}

func (f *fullEnv) waitAsset(key, id string) map[string]any {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		r := f.do("GET", "/v1/assets/"+id+"/status", key, nil)
		f.want(r, 200)
		if st := r.data()["status"]; st == "ready" || st == "failed" {
			return r.data()
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("asset %s still %v after 60 s", id, r.data()["status"])
		}
		time.Sleep(pollWait(i))
	}
}

// download fetches a ready asset's bytes through its signed address.
func (f *fullEnv) download(key, id string) []byte {
	f.t.Helper()
	r := f.do("GET", "/v1/assets/"+id, key, nil)
	f.want(r, 200)
	d := f.do("GET", f.path(r.data()["url"].(string)), "", nil)
	f.want(d, 200)
	return d.Body
}

func sum256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestAssetLifecycleThroughTheAPI(t *testing.T) {
	f := startFull(t)
	photo := readPhoto(t, photoA...)

	r := f.do("POST", "/v1/assets", f.key, map[string]any{"filename": "A.jpg", "contentType": "image/jpeg"})
	f.want(r, 201)
	d := r.data()
	id, up := d["assetId"].(string), d["uploadUrl"].(string)
	if d["status"] != "pending" || d["expiresIn"] != float64(900) || !strings.HasPrefix(up, f.base+"/storage/upload/"+id+"?") {
		t.Fatalf("declare answered %v", d)
	}
	if r.Header.Get(HeaderRateLimit) != "200" || r.Header.Get(HeaderRateRemaining) != "199" {
		t.Errorf("declaration spends the upload budget: limit %q remaining %q", r.Header.Get(HeaderRateLimit), r.Header.Get(HeaderRateRemaining))
	}
	st := f.do("GET", "/v1/assets/"+id+"/status", f.key, nil)
	f.want(st, 200)
	if st.data()["status"] != "pending" {
		t.Errorf("status before upload %v", st.data())
	}
	// Not ready: no download address yet; nothing uploaded: nothing to confirm.
	f.want(f.do("GET", "/v1/assets/"+id, f.key, nil), 409, "not ready")
	f.want(f.do("POST", "/v1/assets/"+id+"/uploaded", f.key, nil), 409, "PUT")

	// The signed PUT needs no key, spends nothing and wants the declared type.
	f.want(f.do("PUT", f.path(up), "", photo, withHeader("Content-Type", "image/png")), 415, "image/jpeg")
	put := f.do("PUT", f.path(up), "", photo, withHeader("Content-Type", "image/jpeg"))
	f.want(put, 200)
	if hasRateHeaders(put.Header) || put.data()["sha256"] != sum256(photo) || put.data()["size"] != float64(len(photo)) {
		t.Errorf("PUT answered %v, rate headers %v", put.data(), hasRateHeaders(put.Header))
	}
	// A tampered address is refused.
	bad := strings.Replace(f.path(up), "sig=", "sig=0", 1)
	f.want(f.do("PUT", bad, "", photo, withHeader("Content-Type", "image/jpeg")), 403)

	c := f.do("POST", "/v1/assets/"+id+"/uploaded", f.key, nil)
	f.want(c, 202)
	if c.data()["assetId"] != id || c.data()["status"] != "validating" && c.data()["status"] != "processing" && c.data()["status"] != "ready" {
		t.Errorf("confirmation answered %v", c.data())
	}
	if s := f.waitAsset(f.key, id); s["status"] != "ready" || s["code"] != nil {
		t.Fatalf("ingest ended %v", s)
	}
	// Confirming again answers the asset as it is.
	f.want(f.do("POST", "/v1/assets/"+id+"/uploaded", f.key, nil), 202)

	g := f.do("GET", "/v1/assets/"+id, f.key, nil)
	f.want(g, 200)
	gd := g.data()
	if gd["kind"] != "upload" || gd["width"] != float64(752) || gd["height"] != float64(500) || gd["expiresIn"] != float64(3600) ||
		gd["filename"] != "A.jpg" || gd["format"] != "jpeg" || gd["owner"] != nil {
		t.Errorf("asset answered %v", gd)
	}
	got := f.download(f.key, id)
	if !bytes.Equal(got, photo) {
		t.Errorf("downloaded %d bytes, uploaded %d (sha %s vs %s)", len(got), len(photo), sum256(got)[:12], sum256(photo)[:12])
	}
	// HEAD of the download address: headers only.
	dl := f.path(gd["url"].(string))
	h := f.do("HEAD", dl, "", nil)
	if h.Code != 200 || len(h.Body) != 0 || h.Header.Get("Content-Type") != "image/jpeg" {
		t.Errorf("HEAD download: %d, %d bytes, %q", h.Code, len(h.Body), h.Header.Get("Content-Type"))
	}
	f.want(f.do("GET", strings.Replace(dl, "exp=", "exp=1", 1), "", nil), 403)

	// Without a key: 401; another key: 404 everywhere.
	f.want(f.do("GET", "/v1/assets/"+id, "", nil), 401)
	for _, rq := range []struct{ method, path string }{
		{"GET", "/v1/assets/" + id}, {"GET", "/v1/assets/" + id + "/status"},
		{"POST", "/v1/assets/" + id + "/uploaded"}, {"DELETE", "/v1/assets/" + id},
	} {
		f.want(f.do(rq.method, rq.path, f.other, nil), 404)
	}
	f.want(f.do("POST", "/v1/assets/"+id+"/exports", f.other, map[string]any{"format": "png"}), 404)

	// Deleting removes it for good.
	del := f.do("DELETE", "/v1/assets/"+id, f.key, nil)
	f.want(del, 200)
	if del.data()["deleted"] != true {
		t.Errorf("delete answered %v", del.data())
	}
	f.want(f.do("GET", "/v1/assets/"+id+"/status", f.key, nil), 404)
	f.want(f.do("GET", dl, "", nil), 404)
}

func TestAssetDeclarationErrors(t *testing.T) {
	f := startFull(t)
	for _, c := range []struct {
		body  any
		code  int
		field string
	}{
		{map[string]any{"filename": "a.jpg", "contentType": "image/jpeg", "size": 3}, 400, "size"},
		{map[string]any{"filename": "a.gif", "contentType": "image/gif"}, 400, "contentType"},
		{map[string]any{"contentType": "image/jpeg"}, 400, "filename"},
		{map[string]any{"filename": "a.jpg"}, 400, "contentType"},
		{map[string]any{"filename": 7, "contentType": "image/jpeg"}, 400, "filename"},
		{"[1]", 400, "object"},
	} {
		f.want(f.do("POST", "/v1/assets", f.key, c.body), c.code, c.field)
	}
	f.want(f.do("POST", "/v1/assets", f.key, []byte(`{"filename":"a.jpg","contentType":"image/jpeg"}`)), 415, "Content-Type")
	f.want(f.do("GET", "/v1/assets/"+strings.Repeat("0", 8)+"-0000-0000-0000-000000000000", f.key, nil), 404)
}

func TestAssetIngestFailureThroughTheAPI(t *testing.T) {
	f := startFull(t)
	// An empty file.
	id, st := f.uploadBytes(f.key, "empty.jpg", []byte{})
	if st["status"] != "failed" || st["code"] != core.CodeEmptyFile || st["reason"] == "" {
		t.Fatalf("an empty file ended %v", st)
	}
	f.want(f.do("GET", "/v1/assets/"+id, f.key, nil), 409)
	// PNG bytes declared as JPEG.
	png := readPhoto(t, "brackets", "memorial_church_debevec", "memorial0066.png")
	id2, up := f.declare(f.key, "liar.jpg", "image/jpeg")
	f.want(f.do("PUT", up, "", png, withHeader("Content-Type", "image/jpeg")), 200)
	f.want(f.do("POST", "/v1/assets/"+id2+"/uploaded", f.key, nil), 202)
	if st := f.waitAsset(f.key, id2); st["status"] != "failed" || st["code"] != core.CodeContentTypeMismatch {
		t.Errorf("PNG declared as JPEG ended %v", st)
	}
	// An order cannot use a failed asset.
	f.want(f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{id}}), 400, "inputs[0]")
}

func TestExportsThroughTheAPI(t *testing.T) {
	f := startFull(t)
	src := f.uploadPhoto(f.key, photoA...)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"format": "jpeg", "max_edge": 15}, "max_edge"},
		{map[string]any{"format": "jpeg", "max_edge": 10001}, "max_edge"},
		{map[string]any{"format": "jpeg", "max_edge": 0}, "max_edge"},
		{map[string]any{"quality": 80}, "format"},
		{map[string]any{"format": "gif"}, "format"},
		{map[string]any{"format": "jpeg", "quality": 0}, "quality"},
		{map[string]any{"format": "jpeg", "quality": 101}, "quality"},
		{map[string]any{"format": "jpeg", "colour": "red"}, "colour"},
	} {
		f.want(f.do("POST", "/v1/assets/"+src+"/exports", f.key, c.body), 400, c.field)
	}

	body := map[string]any{"format": "webp", "quality": 80, "max_edge": 256}
	first := f.do("POST", "/v1/assets/"+src+"/exports", f.key, body)
	f.want(first, 202)
	exp := first.data()["assetId"].(string)
	if first.data()["source"] != src || first.data()["options"].(map[string]any)["max_edge"] != float64(256) {
		t.Errorf("export answered %v", first.data())
	}
	// Asked again, while it runs and once it is ready, the same export answers, not
	// a new one; in between it is waited for by its status (reads), not by asking
	// again (writes, limited to 60 a minute).
	again := func() map[string]any {
		t.Helper()
		r := f.do("POST", "/v1/assets/"+src+"/exports", f.key, body)
		f.want(r, 200)
		if r.data()["assetId"] != exp {
			t.Fatalf("repeat answered export %v, first %s", r.data()["assetId"], exp)
		}
		return r.data()
	}
	again()
	if st := f.waitAsset(f.key, exp); st["status"] != "ready" {
		t.Fatalf("export: %v", st)
	}
	if d := again(); d["status"] != "ready" {
		t.Fatalf("repeat of a finished export answered %v", d)
	}
	data := f.download(f.key, exp)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || format != "webp" || cfg.Width != 256 || cfg.Height != 170 {
		t.Errorf("export is %s %dx%d (%v), want webp 256x170", format, cfg.Width, cfg.Height, err)
	}
	// An export is not an export source, and not an order input.
	f.want(f.do("POST", "/v1/assets/"+exp+"/exports", f.key, map[string]any{"format": "png"}), 400, "export")
	f.want(f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{exp}}), 400, "inputs[0]")
}

// uploadSmall uploads a real photo re-encoded as a JPEG of at most edge pixels,
// made with the project's own codec, so orders on it are quick.
func (f *fullEnv) uploadSmall(key string, edge int, rel ...string) string {
	f.t.Helper()
	id, st := f.uploadBytes(key, fmt.Sprintf("small-%d.jpg", edge), smallJPEG(f.t, edge, rel...))
	if st["status"] != "ready" {
		f.t.Fatalf("small asset ended %v", st)
	}
	return id
}

var smallCache sync.Map // key -> []byte

func smallJPEG(t testing.TB, edge int, rel ...string) []byte {
	t.Helper()
	key := fmt.Sprint(edge, rel)
	if b, ok := smallCache.Load(key); ok {
		return b.([]byte)
	}
	b := reencode(t, readPhoto(t, rel...), edge)
	smallCache.Store(key, b)
	return b
}

// reencode decodes a photo, scales it to fit edge and encodes it as JPEG q 90.
func reencode(t testing.TB, photo []byte, edge int) []byte {
	t.Helper()
	img, meta, err := codec.Decode(bytes.NewReader(photo), int64(len(photo)), codec.DecodeOptions{ScaleToMaxEdge: edge})
	if err != nil {
		t.Fatal(err)
	}
	if w, h := imaging.FitWithin(img.W(), img.H(), edge); w != img.W() || h != img.H() {
		img = imaging.Resize(img, w, h)
	}
	var buf bytes.Buffer
	if err := codec.Encode(&buf, img, codec.EncodeOptions{Format: "jpeg", Quality: 90, Meta: &meta}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newTestClient talks to the test server only (no proxy).
func newTestClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
}
