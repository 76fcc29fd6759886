package localapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/childproc"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// The crash test runs the whole server in a child process (this test binary run
// again), drives it through HTTP, kills it with SIGKILL while orders run, starts a
// new child on the same data dir and checks through HTTP that nothing accepted
// was lost.
const envCrashDir = "PORCHLIGHT_API_CRASH_DIR"

// crashChild serves the stack on the data dir and never returns.
func crashChild(t *testing.T) {
	f := startFull(t, withDir(os.Getenv(envCrashDir)))
	fmt.Printf("LISTEN %s\n", f.addr)
	os.Stdout.Sync()
	select {}
}

// childStartTimeout bounds the wait for the child's LISTEN line. The child exiting
// ends the wait at once; this only catches a child that hangs.
const childStartTimeout = 5 * time.Minute

// startChild runs a child on dir and answers its process and base address.
func startChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	// The child reads the test photos: find them here and hand the folder down, so
	// that without them this test skips instead of its child.
	photos := testphotos.Dir(t)
	// -test.v: should the child end early, its output says why.
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, testphotos.Env+"="+photos)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, "http://" + childproc.WaitLine(t, out, "LISTEN ", childStartTimeout)
}

// apiClient is a small HTTP client of a server this process did not build.
type apiClient struct {
	t    *testing.T
	base string
	key  string
	http *http.Client
}

func (c *apiClient) call(method, path string, body any, hdr ...string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, ctype = bytes.NewReader(b), "image/jpeg"
	default:
		j, _ := json.Marshal(b)
		rd, ctype = bytes.NewReader(j), "application/json"
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = c.base + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if !strings.HasPrefix(path, "/storage/") && !strings.HasPrefix(path, "http") {
		req.Header.Set(HeaderAPIKey, c.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var env struct {
		Data map[string]any `json:"data"`
	}
	if strings.Contains(res.Header.Get("Content-Type"), "json") {
		json.Unmarshal(raw, &env)
	} else {
		env.Data = map[string]any{"bytes": raw}
	}
	return res.StatusCode, env.Data
}

func (c *apiClient) must(want int, method, path string, body any, hdr ...string) map[string]any {
	c.t.Helper()
	code, d := c.call(method, path, body, hdr...)
	if code != want {
		c.t.Fatalf("%s %s: %d, want %d (%v)", method, path, code, want, d)
	}
	return d
}

// storagePath is an address the server handed out, without its host: the port
// changes across restarts, the signature does not depend on it.
func storagePath(u string) string {
	i := strings.Index(u, "/storage/")
	return u[i:]
}

func (c *apiClient) waitAsset(id string) string {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		st := c.must(200, "GET", "/v1/assets/"+id+"/status", nil)["status"].(string)
		if st == "ready" || st == "failed" || time.Now().After(deadline) {
			return st
		}
		time.Sleep(pollWait(i))
	}
}

func (c *apiClient) waitOrder(id string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; ; i++ {
		sum := c.must(200, "GET", "/v1/orders/"+id, nil)
		if core.OrderStatus(sum["status"].(string)).Terminal() {
			return sum
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("order %s still %v", id, sum["status"])
		}
		time.Sleep(pollWait(i))
	}
}

// declare declares a JPEG upload and answers its id and signed address.
func (c *apiClient) declare(name string) (id, up string) {
	d := c.must(201, "POST", "/v1/assets", map[string]any{"filename": name, "contentType": "image/jpeg"})
	return d["assetId"].(string), d["uploadUrl"].(string)
}

func TestCrashThroughTheAPI(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		crashChild(t)
		return
	}
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	dir := t.TempDir()
	child, base := startChild(t, dir)
	c := &apiClient{t: t, base: base, key: adminSecret, http: &http.Client{Timeout: time.Minute}}

	// Before the crash: ready assets, a pending upload with its bytes, a declared
	// upload without them.
	mid := readPhoto(t, "brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_06.jpg") // 1600x1200
	big := readPhoto(t, "brackets", "library_phone", "20240401_185036.JPG")                  // 4032x2268
	assets := map[string][]byte{}
	for i, data := range [][]byte{mid, big} {
		id, up := c.declare(fmt.Sprintf("in-%d.jpg", i))
		c.must(200, "PUT", storagePath(up), data)
		c.must(202, "POST", "/v1/assets/"+id+"/uploaded", nil)
		if st := c.waitAsset(id); st != "ready" {
			t.Fatalf("asset %d: %s", i, st)
		}
		assets[id] = data
	}
	var midID, bigID string
	for id, data := range assets {
		if len(data) == len(mid) {
			midID = id
		} else {
			bigID = id
		}
	}
	unconfirmed, up1 := c.declare("unconfirmed.jpg")
	c.must(200, "PUT", storagePath(up1), mid)
	declared, up2 := c.declare("declared.jpg")

	// Follow the account, submit work, and kill the server as soon as an order runs.
	feed, err := http.NewRequest("GET", base+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	feed.Header.Set(HeaderAPIKey, adminSecret)
	res, err := (&http.Client{}).Do(feed)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("feed: %v %v", err, res)
	}
	running := make(chan string, 64)
	var lastID atomic.Value // the last SSE id of the first run
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				lastID.Store(id)
			}
			if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"status":"running"`) {
				var m struct {
					Data core.OrderSummary `json:"data"`
				}
				json.Unmarshal([]byte(strings.TrimPrefix(sc.Text(), "data: ")), &m)
				running <- m.Data.OrderUUID
			}
		}
	}()
	var orders []string
	for _, in := range []string{bigID, midID, bigID, midID, midID} {
		orders = append(orders, c.must(201, "POST", "/v1/orders", map[string]any{"inputs": []string{in}})["orderId"].(string))
	}
	idem := c.must(201, "POST", "/v1/orders", map[string]any{"inputs": []string{midID}, "format": "png"}, "Idempotency-Key", "crash-1")["orderId"].(string)
	orders = append(orders, idem)
	batch := c.must(201, "POST", "/v1/batches", map[string]any{"name": "before the crash", "scenes": []any{
		map[string]any{"inputs": []string{midID}}, map[string]any{"inputs": []string{bigID}}, map[string]any{"inputs": []string{midID}, "format": "webp"},
	}})["batchId"].(string)
	c.must(202, "POST", "/v1/assets/"+unconfirmed+"/uploaded", nil) // ingest may be cut short too
	var wasRunning string
	select {
	case wasRunning = <-running:
	case <-time.After(60 * time.Second):
		t.Fatal("no order started within 60 s")
	}
	if err := child.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	res.Body.Close()
	t.Logf("killed the server while order %s ran", wasRunning)

	// A new server on the same data dir (on another port).
	_, c.base = startChild(t, dir)
	for _, id := range orders {
		sum := c.waitOrder(id)
		if sum["status"] != "completed" {
			t.Errorf("order %s ended %v after the restart", id, sum)
			continue
		}
		out := c.must(200, "GET", "/v1/assets/"+sum["outputAssetId"].(string), nil)
		data := c.must(200, "GET", out["url"].(string), nil)["bytes"].([]byte)
		if id != idem {
			if _, err := jpeg.DecodeConfig(bytes.NewReader(data)); err != nil {
				t.Errorf("output of %s: %v", id, err)
			}
		} else if !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("output of %s is not a PNG", id)
		}
	}
	// The submission repeated with its Idempotency-Key answers the same order.
	if again := c.must(201, "POST", "/v1/orders", map[string]any{"inputs": []string{midID}, "format": "png"}, "Idempotency-Key", "crash-1"); again["orderId"] != idem {
		t.Errorf("the repeated submission answered %v, first %s", again["orderId"], idem)
	}
	// The batch finishes whole.
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; ; i++ {
		agg := c.must(200, "GET", "/v1/batches/"+batch, nil)
		if agg["done"] == true {
			if agg["completed"] != float64(3) {
				t.Errorf("batch after the restart: %v", agg)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch not done: %v", agg)
		}
		time.Sleep(pollWait(i))
	}
	// Uploads survive: ready bytes, a confirmation whose ingest was cut short, and
	// a signed address handed out before the crash.
	for id, data := range assets {
		u := c.must(200, "GET", "/v1/assets/"+id, nil)["url"].(string)
		if got := c.must(200, "GET", u, nil)["bytes"].([]byte); !bytes.Equal(got, data) {
			t.Errorf("asset %s: %d bytes back, %d uploaded", id, len(got), len(data))
		}
	}
	if st := c.waitAsset(unconfirmed); st != "ready" {
		t.Errorf("the upload confirmed before the crash ended %s", st)
	}
	c.must(200, "PUT", storagePath(up2), mid)
	c.must(202, "POST", "/v1/assets/"+declared+"/uploaded", nil)
	if st := c.waitAsset(declared); st != "ready" {
		t.Errorf("the upload declared before the crash ended %s", st)
	}
	// An event id of the previous run is not replayed: the stream starts with a snapshot.
	prev, _ := lastID.Load().(string)
	req, _ := http.NewRequest("GET", c.base+"/v1/orders/"+wasRunning+"/events", nil)
	req.Header.Set(HeaderAPIKey, adminSecret)
	req.Header.Set(HeaderLastEventID, prev)
	sres, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(sres.Body)
	sres.Body.Close()
	if sres.StatusCode != 200 || strings.Count(string(body), "event: order") != 1 || !strings.Contains(string(body), `"status":"completed"`) {
		t.Errorf("resume with an id of the previous run (%s): %d %s", prev, sres.StatusCode, body)
	}
}
