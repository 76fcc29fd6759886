package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
)

// EnvLoadScale scales the load test: 1 (the default) is 1,000 orders and 200 order
// streams; 0.2 is a quick run, 5 a long one.
const EnvLoadScale = "PORCHLIGHT_LOAD_SCALE"

// ordersPerKey keeps every key under the default write budget (60 a minute):
// the load runs within the spec's limits, spread over several keys.
const ordersPerKey = 50

// TestLoadThroughTheAPI submits many small single-image orders through the API
// with default rate limits, spread over keys, while hundreds of SSE clients follow
// them: one order stream on every fifth order and one account feed per key. Every
// order must settle completed, every order stream must end with its terminal
// frame, every feed must see every terminal event of its key, and afterwards no
// goroutine or file descriptor may be left behind.
func TestLoadThroughTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped with -short")
	}
	scale := 1.0
	if v := os.Getenv(EnvLoadScale); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || s <= 0 {
			t.Fatalf("%s=%q: want a positive number", EnvLoadScale, v)
		}
		scale = s
	}
	nOrders := max(10, int(math.Round(1000*scale)))
	streamEvery := 5 // an order stream on every fifth order: 200 of 1,000
	nKeys := (nOrders + ordersPerKey - 1) / ordersPerKey

	f := startFull(t,
		withConfig(func(c *Config) { c.Clock = time.Now }), // real windows for the real limits
		withEngine(func(c *engine.Config) { c.Workers = 2 }))
	f.client.Transport.(*http.Transport).MaxIdleConnsPerHost = 512

	// Keys and one small real photo each (re-encoded to 128 px: the orders are many
	// and small, so the control plane is what is measured).
	type tenant struct{ id, secret, asset string }
	tenants := make([]tenant, nKeys)
	for i := range tenants {
		k, secret := f.newKey(fmt.Sprintf("load-%d", i), core.ScopeStandard)
		tenants[i] = tenant{id: k.UUID, secret: secret}
		tenants[i].asset = f.uploadSmall(secret, 128, photoA...)
	}
	f.client.Transport.(*http.Transport).CloseIdleConnections()
	baseG, baseFD := settle(t, 0, 0)
	t.Logf("baseline: %d goroutines, %d open files; %d orders over %d keys, an order stream on every %dth order and a feed per key",
		baseG, baseFD, nOrders, nKeys, streamEvery)

	var (
		frames     atomic.Int64 // frames delivered to all subscribers, pings left out
		gauge      openGauge
		streamErrs = make(chan error, nOrders+nKeys)
		streams    sync.WaitGroup
	)
	start := time.Now()

	// One account feed per key, counting terminal events of the key's orders.
	feedCtx, stopFeeds := context.WithCancel(context.Background())
	defer stopFeeds()
	terminals := make([]sync.Map, nKeys) // order id -> status, as each feed saw it
	var feeds sync.WaitGroup
	for i, tn := range tenants {
		ready := make(chan struct{})
		feeds.Add(1)
		go func() {
			defer feeds.Done()
			err := follow(feedCtx, f, tn.secret, "/v1/events", ready, &gauge, func(fr loadFrame) {
				frames.Add(1)
				if fr.Type == core.EventOrder && core.OrderStatus(fr.Status).Terminal() {
					terminals[i].Store(fr.Order, fr.Status)
				}
			})
			if err != nil && feedCtx.Err() == nil {
				streamErrs <- fmt.Errorf("feed of key %d: %w", i, err)
			}
		}()
		<-ready
	}

	// Submitters: one goroutine per key, each submitting its share in turn.
	type submitted struct {
		id      string
		key     int
		latency time.Duration
	}
	results := make(chan submitted, nOrders)
	failures := make(chan error, nOrders)
	var submitters sync.WaitGroup
	for k := range tenants {
		submitters.Add(1)
		go func() {
			defer submitters.Done()
			for n := k; n < nOrders; n += nKeys {
				t0 := time.Now()
				id, err := submitLoadOrder(f, tenants[k].secret, tenants[k].asset)
				lat := time.Since(t0)
				if err != nil {
					failures <- fmt.Errorf("order %d (key %d): %w", n, k, err)
					continue
				}
				results <- submitted{id: id, key: k, latency: lat}
				// Every fifth order of each key, so a key follows at most 10 orders
				// at once and stays within its default cap of event streams.
				if (n/nKeys)%streamEvery != 0 {
					continue
				}
				streams.Add(1)
				go func() {
					defer streams.Done()
					var last loadFrame
					err := follow(context.Background(), f, tenants[k].secret, "/v1/orders/"+id+"/events", nil, &gauge, func(fr loadFrame) {
						frames.Add(1)
						last = fr
					})
					switch {
					case err != nil:
						streamErrs <- fmt.Errorf("stream of %s: %w", id, err)
					case last.Order != id || !core.OrderStatus(last.Status).Terminal():
						streamErrs <- fmt.Errorf("stream of %s ended after %+v, not a terminal frame", id, last)
					}
				}()
			}
		}()
	}
	submitters.Wait()
	submitEnd := time.Since(start)
	close(results)
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	var lat []time.Duration
	byKey := make([][]string, nKeys)
	for r := range results {
		lat = append(lat, r.latency)
		byKey[r.key] = append(byKey[r.key], r.id)
	}
	if len(lat) != nOrders {
		t.Fatalf("%d of %d orders were accepted", len(lat), nOrders)
	}
	waitCh := make(chan struct{})
	go func() { streams.Wait(); close(waitCh) }()
	select {
	case <-waitCh:
	case <-time.After(5 * time.Minute):
		t.Fatal("order streams still open 5 minutes after the last submission")
	}

	// Every order settled completed, as the API reports it; every feed saw it end.
	deadline := time.Now().Add(2 * time.Minute)
	for k, ids := range byKey {
		for _, id := range ids {
			for {
				r := f.do("GET", "/v1/orders/"+id, tenants[k].secret, nil)
				if r.Code != 200 {
					t.Fatalf("GET order %s: %d %s", id, r.Code, r.Body)
				}
				st := r.data()["status"]
				if st == "completed" {
					break
				}
				if core.OrderStatus(st.(string)).Terminal() || time.Now().After(deadline) {
					t.Fatalf("order %s: %v", id, r.data())
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	elapsed := time.Since(start)
	for k, ids := range byKey {
		for _, id := range ids {
			waitFor(t, func() bool { _, ok := terminals[k].Load(id); return ok }, "the feed of key "+strconv.Itoa(k)+" to see "+id+" end")
		}
	}
	stopFeeds()
	feeds.Wait()
	close(streamErrs)
	for err := range streamErrs {
		t.Error(err)
	}

	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	nStreams := (nOrders + streamEvery - 1) / streamEvery
	t.Logf("%d orders accepted in %s, all completed after %s (%.0f orders/s)", nOrders, submitEnd.Round(time.Millisecond),
		elapsed.Round(time.Millisecond), float64(nOrders)/elapsed.Seconds())
	t.Logf("submit latency p50 %s, p99 %s, max %s", p(0.50).Round(10*time.Microsecond), p(0.99).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	t.Logf("%d order streams and %d feeds, at most %d open at once; %d frames delivered, %.0f events/s",
		nStreams, nKeys, gauge.max.Load(), frames.Load(), float64(frames.Load())/elapsed.Seconds())

	// Nothing left behind once every client is gone.
	f.client.Transport.(*http.Transport).CloseIdleConnections()
	endG, endFD := settle(t, baseG, baseFD)
	hwm, rss := procStatus(t, "VmHWM"), procStatus(t, "VmRSS")
	t.Logf("after: %d goroutines (baseline %d), %d open files (baseline %d); VmHWM %d MiB, VmRSS %d MiB",
		endG, baseG, endFD, baseFD, hwm>>20, rss>>20)
	if endG > baseG+5 {
		t.Errorf("%d goroutines left behind", endG-baseG)
	}
	if endFD > baseFD+5 {
		t.Errorf("%d file descriptors left behind", endFD-baseFD)
	}
	if limit := int64(1 << 30); rss > limit {
		t.Errorf("VmRSS %d MiB after the run, over %d MiB", rss>>20, limit>>20)
	}
	if f.bus.Subscribers() != 0 {
		t.Errorf("%d bus subscriptions left", f.bus.Subscribers())
	}
}

func submitLoadOrder(f *fullEnv, key, asset string) (string, error) {
	for attempt := 0; ; attempt++ {
		body := strings.NewReader(`{"inputs":["` + asset + `"],"quality":80}`)
		req, _ := http.NewRequest("POST", f.base+"/v1/orders", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderAPIKey, key)
		res, err := f.client.Do(req)
		if err != nil {
			return "", err
		}
		var env struct {
			Data  orderCreated
			Error ErrorBody
		}
		err = json.NewDecoder(res.Body).Decode(&env)
		res.Body.Close()
		switch {
		case err != nil:
			return "", err
		case res.StatusCode == http.StatusCreated:
			return env.Data.OrderID, nil
		case res.StatusCode == http.StatusTooManyRequests && attempt < 3:
			// Within the limits this does not happen; if a window is shared with
			// the uploads, wait it out as a client must.
			wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			time.Sleep(time.Duration(wait) * time.Second)
		default:
			return "", fmt.Errorf("%d: %s", res.StatusCode, env.Error.Reason)
		}
	}
}

// openGauge counts the streams open now and the most at once.
type openGauge struct{ now, max atomic.Int64 }

func (g *openGauge) inc() {
	n := g.now.Add(1)
	for m := g.max.Load(); n > m && !g.max.CompareAndSwap(m, n); m = g.max.Load() {
	}
}

func (g *openGauge) dec() { g.now.Add(-1) }

type loadFrame struct {
	ID     uint64
	Type   string
	Order  string
	Status string
}

// follow reads an SSE stream until it ends (nil) or ctx ends. A stream the server
// drops is resumed with Last-Event-ID, as a client is meant to.
func follow(ctx context.Context, f *fullEnv, key, path string, ready chan struct{}, open *openGauge, each func(loadFrame)) error {
	var once sync.Once
	signal := func() {
		if ready != nil {
			once.Do(func() { close(ready) })
		}
	}
	defer signal()
	var lastID uint64
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set(HeaderAPIKey, key)
		if lastID != 0 {
			req.Header.Set(HeaderLastEventID, strconv.FormatUint(lastID, 10))
		}
		res, err := (&http.Client{Transport: f.client.Transport}).Do(req)
		if err != nil {
			return err
		}
		if res.StatusCode != 200 {
			res.Body.Close()
			return fmt.Errorf("GET %s: %s", path, res.Status)
		}
		open.inc()
		signal()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var fr loadFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if fr.Type != "" && fr.Type != core.EventPing {
					each(fr)
				}
				fr = loadFrame{}
			case strings.HasPrefix(line, "id: "):
				fr.ID, _ = strconv.ParseUint(line[4:], 10, 64)
				lastID = fr.ID
			case strings.HasPrefix(line, "data: "):
				var m struct {
					Type string `json:"type"`
					Data struct {
						Order  string `json:"orderUuid"`
						Status string `json:"status"`
					} `json:"data"`
				}
				if err := json.Unmarshal([]byte(line[6:]), &m); err != nil {
					res.Body.Close()
					open.dec()
					return err
				}
				fr.Type, fr.Order, fr.Status = m.Type, m.Data.Order, m.Data.Status
			}
		}
		err = sc.Err()
		res.Body.Close()
		open.dec()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if !strings.HasSuffix(path, "/v1/events") || attempt >= 10 {
			return nil // order streams end by themselves
		}
		// A feed never ends by itself: the bus dropped it; resume.
	}
}

// settle waits until the goroutine and open-file counts come down to the
// baseline (plus slack) and answers them; with a zero baseline it waits for them
// to stop changing.
func settle(t *testing.T, baseG, baseFD int) (int, int) {
	t.Helper()
	var g, fd int
	prevG, prevFD := -1, -1
	for i := 0; i < 200; i++ {
		runtime.GC()
		g, fd = runtime.NumGoroutine(), openFiles(t)
		if baseG == 0 && g == prevG && fd == prevFD {
			return g, fd
		}
		if baseG != 0 && g <= baseG+5 && fd <= baseFD+5 {
			return g, fd
		}
		prevG, prevFD = g, fd
		time.Sleep(50 * time.Millisecond)
	}
	return g, fd
}

func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(ents)
}

// procStatus reads a size field of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("cannot read /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
