package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"image"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/internal/testphotos"
	"github.com/porchlight/porchlight/localapi"
	"github.com/porchlight/porchlight/localapi/client"
	"github.com/porchlight/porchlight/localapi/client/clienttest"
)

func ptr[T any](v T) *T { return &v }

func photo(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testphotos.Path(t, "brackets", "house_interior_kim", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// proxyTo forwards to target with target's Host, which the server checks.
func proxyTo(target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
}

func newClient(t testing.TB, base, key string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(base, key, append([]client.Option{client.WithRetries(3, 5*time.Millisecond), client.WithPollInterval(50 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// standard starts a server and returns a client with a fresh standard key.
func standard(t *testing.T, opt clienttest.Options) (*clienttest.Server, *client.Client) {
	testphotos.Dir(t)
	srv := clienttest.Start(t, opt)
	_, secret := srv.NewKey(t, "client-test", core.ScopeStandard)
	return srv, newClient(t, srv.URL, secret)
}

func TestPublicEndpoints(t *testing.T) {
	srv := clienttest.Start(t, clienttest.Options{})
	c := newClient(t, srv.URL, "")
	ctx := ctxT(t)
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	doc, err := c.OpenAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil || d["openapi"] == nil {
		t.Fatalf("openapi.json: %v %.100s", err, doc)
	}
	fs, err := c.Features(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]client.Feature{}
	for _, f := range fs {
		byKey[f.Key] = f
	}
	if len(fs) != 9 || byKey["indoor_staging"].Version != "1.18.0" || byKey["indoor_staging"].Available {
		t.Errorf("features %+v", fs)
	}
	if p := byKey["indoor_staging"].Parameters; !slices.ContainsFunc(p, func(p client.Param) bool { return p.Name == "room_type" && len(p.Enum) > 3 }) {
		t.Errorf("indoor staging parameters %+v", p)
	}
	// Without a key, authenticated endpoints answer 401 as typed errors.
	_, err = c.Presets(ctx, "")
	if client.StatusOf(err) != http.StatusUnauthorized {
		t.Errorf("presets without a key: %v", err)
	}
}

func TestPresets(t *testing.T) {
	_, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	ps, err := c.Presets(ctx, "indoor_staging")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p client.Preset) bool {
		return p.Key == "scandi_minimal" && p.Settings["staging_style"] == "scandinavian"
	}) {
		t.Errorf("presets %+v", ps)
	}
	_, err = c.Presets(ctx, "no_such_feature")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Reason, "feature") {
		t.Errorf("unknown feature: %v", err)
	}
}

func TestAssets(t *testing.T) {
	_, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	data := photo(t, "A.jpg")
	a, err := c.Upload(ctx, "A.jpg", "image/jpeg", data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != core.AssetReady || a.Width != 752 || a.Height != 500 || a.URL == "" || a.ExpiresIn <= 0 {
		t.Fatalf("asset %+v", a)
	}
	st, err := c.AssetStatus(ctx, a.AssetID)
	if err != nil || st.Status != core.AssetReady {
		t.Fatalf("status %+v %v", st, err)
	}
	got, _, err := c.DownloadBytes(ctx, a.AssetID)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(got)
	if hex.EncodeToString(sum[:]) != a.SHA256 {
		t.Errorf("downloaded bytes do not match the asset's sha256")
	}

	// Export to a small PNG and fetch it.
	e, err := c.Export(ctx, a.AssetID, client.ExportOptions{Format: "png", MaxEdge: 200})
	if err != nil || !e.Created || e.Options.MaxEdge != 200 {
		t.Fatalf("export %+v %v", e, err)
	}
	e, err = c.WaitExport(ctx, a.AssetID, client.ExportOptions{Format: "png", MaxEdge: 200})
	if err != nil || e.Status != core.AssetReady || e.Created {
		t.Fatalf("export %+v %v", e, err)
	}
	png, _, err := c.DownloadBytes(ctx, e.AssetID)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(png))
	if err != nil || cfg.Width != 200 || cfg.Height != 133 {
		t.Errorf("export %dx%d %v", cfg.Width, cfg.Height, err)
	}

	// Refused ingest comes back as an IngestError with the server's code.
	_, err = c.Upload(ctx, "notes.png", "image/png", []byte("these are not pixels"))
	var ie *client.IngestError
	if !errors.As(err, &ie) || ie.Code == "" {
		t.Errorf("bad upload: %v", err)
	}

	if err := c.DeleteAsset(ctx, a.AssetID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Asset(ctx, a.AssetID); client.StatusOf(err) != http.StatusNotFound {
		t.Errorf("deleted asset: %v", err)
	}
}

func TestOrders(t *testing.T) {
	_, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	a, err := c.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{Format: ptr("png")}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if created.OrderID == "" || created.InputCount != 1 || created.OrderUUID != created.OrderID {
		t.Fatalf("created %+v", created)
	}
	var seen []core.OrderStatus
	done, err := c.WaitOrder(ctx, created.OrderID, func(s core.OrderSummary) { seen = append(seen, s.Status) })
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != core.OrderCompleted || done.OutputAssetID == "" || done.Recipes["develop"] != "1.3.0" || len(seen) == 0 {
		t.Fatalf("done %+v seen %v", done, seen)
	}
	s, err := c.Order(ctx, created.OrderID)
	if err != nil || s.Status != core.OrderCompleted {
		t.Fatalf("order %+v %v", s, err)
	}
	if _, err := c.CancelOrder(ctx, created.OrderID); client.StatusOf(err) != http.StatusConflict {
		t.Errorf("cancel of a completed order: %v", err)
	}
	out, oa, err := c.DownloadBytes(ctx, done.OutputAssetID)
	if err != nil || oa.Kind != core.AssetOutput {
		t.Fatal(err)
	}
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(out)); err != nil || format != "png" || cfg.Width != 752 {
		t.Errorf("output %v %s %v", cfg, format, err)
	}
	// A bad option is refused with the field named.
	_, err = c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{Quality: ptr(400)}}, "")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Reason, "quality") {
		t.Errorf("bad quality: %v", err)
	}
	// Another key's order is not found.
	if _, err := c.Order(ctx, "00000000-0000-4000-8000-000000000000"); client.StatusOf(err) != http.StatusNotFound {
		t.Errorf("missing order: %v", err)
	}
}

// Cancelling a running and a waiting order: both end cancelled, repeating answers
// the same summary, and the waits see the terminal state.
func TestCancelOrder(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{}, 4)
	_, c := standard(t, clienttest.Options{Workers: 1, Configure: func(t testing.TB, p *pipeline.Pipeline) {
		// The sky step holds its order until the test lets go (or the order is cancelled).
		p.Register(pipeline.Step{Name: pipeline.StepSky, Run: func(ctx context.Context, j *pipeline.Job) error {
			started <- struct{}{}
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
	}})
	defer close(gate)
	ctx := ctxT(t)
	a, err := c.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	running, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{Sky: ptr(true)}}, "")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	waiting, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{Sky: ptr(true), Quality: ptr(80)}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{waiting.OrderID, running.OrderID} {
		s, err := c.CancelOrder(ctx, id)
		if err != nil || s.Status != core.OrderCancelled {
			t.Fatalf("cancel %s: %+v %v", id, s, err)
		}
		again, err := c.CancelOrder(ctx, id)
		if err != nil || again.Status != core.OrderCancelled {
			t.Errorf("repeated cancel: %+v %v", again, err)
		}
		w, err := c.WaitOrder(ctx, id, nil)
		if err != nil || w.Status != core.OrderCancelled || w.OutputAssetID != "" {
			t.Errorf("wait on a cancelled order: %+v %v", w, err)
		}
	}
}

// A submission whose answer is lost (the server created the order, the client saw
// a 502) is sent again with the same Idempotency-Key and answers the same order.
func TestResubmissionIsIdempotent(t *testing.T) {
	srv, _ := standard(t, clienttest.Options{})
	_, secret := srv.NewKey(t, "flaky", core.ScopeStandard)
	target, _ := url.Parse(srv.URL)
	proxy := proxyTo(target)
	var mu sync.Mutex
	var created []string
	var keys []string
	failed := false
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/orders" {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		var ans struct {
			Data struct {
				OrderID string `json:"orderId"`
			} `json:"data"`
		}
		json.Unmarshal(rec.Body.Bytes(), &ans)
		mu.Lock()
		created = append(created, ans.Data.OrderID)
		keys = append(keys, r.Header.Get(client.HeaderIdempotencyKey))
		first := !failed
		failed = true
		mu.Unlock()
		if first {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer front.Close()
	// Uploads go to the server itself (its signed addresses name it).
	direct := newClient(t, srv.URL, secret)
	c := newClient(t, front.URL, secret)
	ctx := ctxT(t)
	a, err := direct.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}}, "")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(created) != 2 || created[0] != created[1] || created[0] != o.OrderID || keys[0] == "" || keys[0] != keys[1] {
		t.Errorf("submissions created %v with keys %v; answered %s", created, keys, o.OrderID)
	}
	// The same key with another body is a conflict, not a second order.
	_, err = direct.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{Quality: ptr(10)}}, keys[0])
	if client.StatusOf(err) != http.StatusConflict {
		t.Errorf("reused key with another body: %v", err)
	}
}

func TestBatches(t *testing.T) {
	_, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	a, err := c.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Upload(ctx, "C.jpg", "image/jpeg", photo(t, "C.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	agg, err := c.SubmitBatch(ctx, client.BatchRequest{Name: "two rooms", Defaults: core.Options{Format: ptr("png")},
		Scenes: []client.Scene{{Inputs: []string{a.AssetID}}, {Inputs: []string{b.AssetID}, Options: core.Options{Format: ptr("jpeg")}}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if agg.Total != 2 || agg.Name != "two rooms" {
		t.Fatalf("batch %+v", agg)
	}
	var counts []int
	done, err := c.WaitBatch(ctx, agg.BatchID, func(a core.BatchAggregate) { counts = append(counts, a.Completed) })
	if err != nil {
		t.Fatal(err)
	}
	if !done.Done || done.Completed != 2 || len(done.Orders) != 2 || len(counts) == 0 {
		t.Fatalf("done %+v counts %v", done, counts)
	}
	got, err := c.Batch(ctx, agg.BatchID)
	if err != nil || got.Completed != 2 {
		t.Fatalf("batch %+v %v", got, err)
	}
	cancelled, err := c.CancelBatch(ctx, agg.BatchID)
	if err != nil || cancelled.Completed != 2 {
		t.Errorf("cancel of a settled batch: %+v %v", cancelled, err)
	}
	// One invalid scene refuses the whole batch, naming it.
	_, err = c.SubmitBatch(ctx, client.BatchRequest{Scenes: []client.Scene{{Inputs: []string{a.AssetID}}, {Inputs: []string{"nope"}}}}, "")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Reason, "scenes[1]") {
		t.Errorf("invalid scene: %v", err)
	}
}

func TestEventStreams(t *testing.T) {
	srv, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	a, err := c.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}

	// The account feed and the WebSocket both see a new order's events.
	bus := srv.Engine.Events()
	subscribed := bus.Subscribers()
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	feed := make(chan core.OrderSummary, 64)
	ws := make(chan core.OrderSummary, 64)
	go c.Events(feedCtx, func(ev client.Event) error {
		if s, ok := ev.Order(); ok {
			feed <- s
		}
		return nil
	})
	wsErr := make(chan error, 1)
	go func() {
		wsErr <- c.WebSocket(feedCtx, func(ev client.Event) error {
			if s, ok := ev.Order(); ok {
				ws <- s
			}
			return nil
		})
	}()
	// Submit once both streams are subscribed on the server, so neither can miss it.
	deadline := time.Now().Add(30 * time.Second)
	for bus.Subscribers() < subscribed+2 {
		select {
		case err := <-wsErr:
			t.Fatalf("websocket ended before it subscribed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the streams did not subscribe within 30 s (%d of 2)", bus.Subscribers()-subscribed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	o, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan core.OrderSummary{"account feed": feed, "websocket": ws} {
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case s := <-ch:
				if s.OrderUUID == o.OrderID && s.Status == core.OrderCompleted {
					break wait
				}
			case err := <-wsErr:
				t.Fatalf("websocket ended: %v", err)
			case <-timeout:
				t.Fatalf("%s: no completed event for %s", name, o.OrderID)
			}
		}
	}

	// The order's own stream opens with a snapshot and closes after the terminal state.
	var types []string
	err = c.OrderEvents(ctx, o.OrderID, func(ev client.Event) error {
		types = append(types, ev.Type)
		if s, ok := ev.Order(); !ok || s.Status != core.OrderCompleted {
			t.Errorf("snapshot of a completed order: %s", ev.Data)
		}
		return nil
	})
	if err != nil || len(types) != 1 {
		t.Errorf("order stream: %v %v", types, err)
	}
	// A callback's error ends the stream and comes back.
	boom := errors.New("enough")
	if err := c.OrderEvents(ctx, o.OrderID, func(client.Event) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("callback error: %v", err)
	}
	// Batch stream of another key's batch: 404.
	if err := c.BatchEvents(ctx, "00000000-0000-4000-8000-000000000000", func(client.Event) error { return nil }); client.StatusOf(err) != 404 {
		t.Errorf("missing batch stream: %v", err)
	}
}

// WaitOrder falls back to polling when the event stream cannot be had.
func TestWaitOrderFallsBackToPolling(t *testing.T) {
	srv, _ := standard(t, clienttest.Options{})
	_, secret := srv.NewKey(t, "poller", core.ScopeStandard)
	target, _ := url.Parse(srv.URL)
	proxy := proxyTo(target)
	var streams, polls int
	var mu sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/events"):
			streams++
			http.Error(w, "streaming disabled by the proxy", http.StatusBadGateway)
			return
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/orders/"):
			polls++
		}
		mu.Unlock()
		proxy.ServeHTTP(w, r)
		mu.Lock()
	}))
	defer front.Close()
	direct := newClient(t, srv.URL, secret)
	c := newClient(t, front.URL, secret, client.WithRetries(1, time.Millisecond))
	ctx := ctxT(t)
	a, err := direct.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}}, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.WaitOrder(ctx, o.OrderID, nil)
	if err != nil || s.Status != core.OrderCompleted {
		t.Fatalf("%+v %v", s, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if streams == 0 || polls == 0 {
		t.Errorf("streams %d polls %d", streams, polls)
	}
}

// Reads are retried on 5xx; a declaration (a write without idempotency) is not.
func TestRetries(t *testing.T) {
	srv, _ := standard(t, clienttest.Options{})
	_, secret := srv.NewKey(t, "retry", core.ScopeStandard)
	target, _ := url.Parse(srv.URL)
	proxy := proxyTo(target)
	var mu sync.Mutex
	fail := map[string]int{"GET /v1/presets": 2, "POST /v1/assets": 1}
	seen := map[string]int{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Method + " " + r.URL.Path
		mu.Lock()
		seen[k]++
		n := seen[k]
		mu.Unlock()
		if n <= fail[k] {
			http.Error(w, `{"error":{"status":503,"reason":"warming up"}}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	c := newClient(t, front.URL, secret)
	ctx := ctxT(t)
	if _, err := c.Presets(ctx, "tonecraft"); err != nil {
		t.Errorf("presets after two 503s: %v", err)
	}
	_, err := c.DeclareAsset(ctx, "x.jpg", "image/jpeg")
	if client.StatusOf(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "warming up") {
		t.Errorf("declare after a 503: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["GET /v1/presets"] != 3 || seen["POST /v1/assets"] != 1 {
		t.Errorf("attempts %v", seen)
	}
}

// fakeClock is the server's rate-limit clock; the client's waits move it.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return ctx.Err()
}

// A 429 is waited out for its Retry-After (on the server's clock) and sent again.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 6, 1, 9, 0, 10, 0, time.UTC)}
	srv, _ := standard(t, clienttest.Options{Clock: clock.Now,
		RateLimits: localapi.RateLimits{ReadsPerWindow: 2, Window: time.Minute, UploadBurst: 1, UploadPerSecond: 0.5}})
	_, secret := srv.NewKey(t, "limited", core.ScopeStandard)
	c := newClient(t, srv.URL, secret, client.WithSleep(clock.Sleep))
	ctx := ctxT(t)
	for i := 0; i < 5; i++ {
		if _, err := c.Presets(ctx, "tonecraft"); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	clock.mu.Lock()
	waits := append([]time.Duration(nil), clock.waits...)
	clock.mu.Unlock()
	// Two reads per minute, window aligned to the minute: the third read waits for the
	// next window (50 s on this clock), the fifth for the one after.
	if len(waits) != 2 || waits[0] != 50*time.Second || waits[1] != 60*time.Second {
		t.Errorf("waits %v", waits)
	}
	// The upload bucket (burst 1, a token every 2 s): declaring then confirming waits
	// for the second token.
	clock.mu.Lock()
	clock.waits = nil
	clock.mu.Unlock()
	if _, err := c.Upload(ctx, "A.jpg", "image/jpeg", photo(t, "A.jpg")); err != nil {
		t.Fatal(err)
	}
	clock.mu.Lock()
	if len(clock.waits) == 0 || clock.waits[0] < 2*time.Second {
		t.Errorf("upload waits %v", clock.waits)
	}
	clock.mu.Unlock()

	// A Retry-After longer than the client accepts comes back as the 429.
	impatient := newClient(t, srv.URL, secret, client.WithSleep(func(context.Context, time.Duration) error {
		t.Error("slept despite the limit")
		return nil
	}), client.WithMaxRetryAfter(time.Second))
	for i := 0; i < 3; i++ {
		_, err := impatient.Presets(ctx, "tonecraft")
		if err != nil {
			var e *client.Error
			if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.RetryAfter < time.Second {
				t.Errorf("err = %v", err)
			}
			return
		}
	}
	t.Error("no 429 came back")
}

func TestKeys(t *testing.T) {
	srv := clienttest.Start(t, clienttest.Options{})
	admin := newClient(t, srv.URL, clienttest.AdminSecret)
	ctx := ctxT(t)
	k, err := admin.CreateKey(ctx, "photographer", core.ScopeStandard)
	if err != nil || !strings.HasPrefix(k.Secret, "sk-") || k.Scope != core.ScopeStandard {
		t.Fatalf("created %+v %v", k, err)
	}
	list, err := admin.ListKeys(ctx)
	if err != nil || !slices.ContainsFunc(list, func(x core.Key) bool { return x.UUID == k.UUID }) {
		t.Fatalf("list %+v %v", list, err)
	}
	user := newClient(t, srv.URL, k.Secret)
	if _, err := user.ListKeys(ctx); client.StatusOf(err) != http.StatusForbidden {
		t.Errorf("standard key listing keys: %v", err)
	}
	old := newClient(t, srv.URL, k.Secret)
	r, err := user.RotateKey(ctx)
	if err != nil || r.UUID != k.UUID || r.Secret == k.Secret {
		t.Fatalf("rotated %+v %v", r, err)
	}
	if _, err := user.Presets(ctx, ""); err != nil {
		t.Errorf("the rotated client lost access: %v", err)
	}
	if _, err := old.Presets(ctx, ""); client.StatusOf(err) != http.StatusUnauthorized {
		t.Errorf("the old secret still works: %v", err)
	}
	if err := admin.RevokeKey(ctx, k.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := user.Presets(ctx, ""); client.StatusOf(err) != http.StatusUnauthorized {
		t.Errorf("a revoked key still works: %v", err)
	}
}

func TestNewRefusesBadBase(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "127.0.0.1:8787", "http://"} {
		if _, err := client.New(u, ""); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}
