package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/iopaint"
	"github.com/porchlight/porchlight/engine/backends/remote"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/localapi/client/clienttest"
)

// studio starts a real Porchlight server whose generative features run on a fake
// IOPaint, and returns it with a standard key's secret.
func studio(t *testing.T, fake *backendtest.IOPaint) (*clienttest.Server, string) {
	t.Helper()
	srv := clienttest.Start(t, clienttest.Options{Configure: func(t testing.TB, p *pipeline.Pipeline) {
		b, err := iopaint.New(backendtest.Spec(t, "studio-iopaint", map[string]any{"type": "iopaint", "url": fake.URL,
			"retries": 2, "backoff": "1ms"}))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]backends.Backend{}
		for _, f := range backends.Features {
			m[f] = b
		}
		reg, err := backends.Static(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := pipeline.RegisterBackends(p, reg); err != nil {
			t.Fatal(err)
		}
	}})
	_, secret := srv.NewKey(t, "remote-backend", core.ScopeStandard)
	return srv, secret
}

func newBackend(t testing.TB, url, key string, extra map[string]any) backends.Backend {
	t.Helper()
	raw := map[string]any{"type": "remote", "url": url, "api_key": key, "retries": 2, "backoff": "2ms", "poll_interval": "50ms"}
	for k, v := range extra {
		raw[k] = v
	}
	b, err := remote.New(backendtest.Spec(t, "studio", raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The remote server is real (API, engine, assets, pipeline); its backend is the fake
// that the contract scripts.
func TestContract(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	srv, key := studio(t, fake)
	backendtest.RunContract(t, backendtest.Contract{
		Fake:           fake,
		New:            func(t testing.TB, extra map[string]any) backends.Backend { return newBackend(t, srv.URL, key, extra) },
		RecipeOnServer: true,
		ServerCancels:  true,
		WaitsInClient:  true, // the remote server's IOPaint takes one job at a time
	})
}

// The remote order carries the feature's options (not the prompt), runs the remote
// recipe, reports its progress, and leaves nothing behind on the remote server.
func TestOptionsProgressAndCleanup(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	srv, key := studio(t, fake)
	fake.Set(backendtest.Script{Steps: 12, StepDelay: 60 * time.Millisecond})
	photo := backendtest.Photo(t, 400)
	opts, err := catalog.Resolve(core.Options{GenEdit: ptr("indoor_staging"), StagingPreset: ptr("industrial_loft"),
		RoomType: ptr("office"), GenQuality: ptr("fast")}, false)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []float64
	deleted := recordDeletes(t, srv.URL)
	out, err := newBackend(t, deleted.url, key, nil).Edit(context.Background(), backends.Request{
		Feature: backends.FeatureIndoorStaging, Image: photo, Options: opts, Prompt: "ignored by the remote",
		Progress: func(f float64) { mu.Lock(); seen = append(seen, f); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if out.W() != photo.W() || out.H() != photo.H() {
		t.Errorf("answer %dx%d for %dx%d", out.W(), out.H(), photo.W(), photo.H())
	}
	j := fake.Jobs()[0]
	for _, want := range []string{"home office", "reclaimed timber", "light grey concrete"} {
		if !strings.Contains(j.Prompt, want) {
			t.Errorf("the remote recipe's prompt lacks %q: %s", want, j.Prompt)
		}
	}
	if j.Steps != 20 || strings.Contains(j.Prompt, "ignored") {
		t.Errorf("remote job %+v", j)
	}
	mu.Lock()
	mid := 0
	for _, f := range seen {
		if f > 0 && f < 1 {
			mid++
		}
	}
	if mid == 0 || seen[len(seen)-1] != 1 {
		t.Errorf("progress %v", seen)
	}
	mu.Unlock()
	// The photo and the output were deleted from the remote server.
	deleted.mu.Lock()
	defer deleted.mu.Unlock()
	if len(deleted.ids) != 2 {
		t.Errorf("deleted %v on the remote server, want the photo and the output", deleted.ids)
	}
	for _, id := range deleted.ids {
		if _, err := srv.Assets.Lookup(id); err == nil {
			t.Errorf("asset %s is still on the remote server", id)
		}
	}
}

// A remote server that goes away in the middle of a job fails the edit promptly.
func TestRemoteServerGoesAway(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	srv, key := studio(t, fake)
	fake.Set(backendtest.Script{Mode: backendtest.ModeHang})
	photo := backendtest.Photo(t, 200)
	go func() {
		// Stop once the job has reached the model; a job that never does stops the
		// server after a minute, and the edit's error shows what happened.
		fake.WaitJobs(time.Minute, func(jobs []backendtest.Job) bool { return len(jobs) > 0 })
		srv.Stop()
	}()
	start := time.Now()
	_, err := newBackend(t, srv.URL, key, nil).Edit(context.Background(), backends.Request{
		Feature: backends.FeatureDeclutter, Image: photo})
	var be *backends.Error
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a backend error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestConfig(t *testing.T) {
	if _, err := remote.New(backendtest.Spec(t, "studio", map[string]any{"type": "remote", "url": "http://127.0.0.1:1"})); err == nil ||
		!strings.Contains(err.Error(), "api_key") {
		t.Errorf("no key: %v", err)
	}
	o := remote.Options(backends.FeatureDeclutter, core.Resolved{GenQuality: "best", StagingStyle: "modern"})
	if *o.GenEdit != "declutter_local" || o.GenQuality != nil || o.StagingStyle != nil || *o.Format != "png" {
		t.Errorf("declutter options %+v", o)
	}
}

func ptr[T any](v T) *T { return &v }

type deletes struct {
	url string
	mu  sync.Mutex
	ids []string
}

// recordDeletes puts a proxy in front of the server that notes the assets deleted.
func recordDeletes(t *testing.T, target string) *deletes {
	u, _ := url.Parse(target)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, FlushInterval: -1}
	d := &deletes{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, ok: func(status int) {
			// Noted before the answer reaches the client.
			if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/assets/") && status == http.StatusOK {
				d.mu.Lock()
				d.ids = append(d.ids, strings.TrimPrefix(r.URL.Path, "/v1/assets/"))
				d.mu.Unlock()
			}
		}}
		proxy.ServeHTTP(rec, r)
	}))
	t.Cleanup(front.Close)
	d.url = front.URL
	return d
}

type statusRecorder struct {
	http.ResponseWriter
	ok func(status int)
}

func (r *statusRecorder) WriteHeader(s int) { r.ok(s); r.ResponseWriter.WriteHeader(s) }
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
