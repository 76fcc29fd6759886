package localapi

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// gate is a pipeline step that holds every order reaching it until the test
// opens it, reporting half-way progress while it waits, so tests can watch and
// cancel running orders. It sits in the sky slot: orders with "sky": true pass it.
type gate struct {
	entered chan string
	release chan struct{}
	once    sync.Once
}

func newGate() *gate {
	return &gate{entered: make(chan string, 1024), release: make(chan struct{})}
}

func (g *gate) step() pipeline.Step {
	return pipeline.Step{Name: pipeline.StepSky, Cost: 0.01, Run: func(ctx context.Context, j *pipeline.Job) error {
		j.Progress(0.5)
		g.entered <- j.OrderID
		select {
		case <-g.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) waitEntered(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.entered:
		return id
	case <-time.After(60 * time.Second):
		t.Fatal("no order reached the gate within 60 s")
	}
	return ""
}

// submit posts an order and wants 201.
func (f *fullEnv) submit(key string, body map[string]any) map[string]any {
	f.t.Helper()
	r := f.do("POST", "/v1/orders", key, body)
	f.want(r, 201)
	return r.data()
}

func (f *fullEnv) order(key, id string) map[string]any {
	f.t.Helper()
	r := f.do("GET", "/v1/orders/"+id, key, nil)
	f.want(r, 200)
	return r.data()
}

// pollWait is the pause before poll number i of a status: short at first, so quick
// work is seen at once, then growing to a quarter second, so that a slow machine's
// long wait stays within the read limit (300 a minute) that the test's key is under.
func pollWait(i int) time.Duration {
	return min(250*time.Millisecond, 10*time.Millisecond<<min(i, 5))
}

// waitOrder polls GET /v1/orders/{id} until the order settles.
func (f *fullEnv) waitOrder(key, id string) map[string]any {
	f.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		sum := f.order(key, id)
		if core.OrderStatus(sum["status"].(string)).Terminal() {
			return sum
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("order %s still %v after 90 s", id, sum["status"])
		}
		time.Sleep(pollWait(i))
	}
}

func TestOrderLifecycleThroughTheAPI(t *testing.T) {
	f := startFull(t)
	in := f.uploadPhoto(f.key, photoA...)

	r := f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{in}, "format": "png"})
	f.want(r, 201)
	d := r.data()
	id := d["orderId"].(string)
	if uuid.Validate(id) != nil || d["orderUuid"] != id || d["inputCount"] != float64(1) ||
		len(d["inputs"].([]any)) != 1 || d["inputs"].([]any)[0] != in {
		t.Fatalf("submit answered %v", d)
	}
	if r.Header.Get(HeaderRateLimit) != "60" || r.Header.Get(HeaderRateRemaining) != "59" {
		t.Errorf("an order spends a write: limit %q remaining %q", r.Header.Get(HeaderRateLimit), r.Header.Get(HeaderRateRemaining))
	}

	sum := f.waitOrder(f.key, id)
	out, _ := sum["outputAssetId"].(string)
	if sum["status"] != "completed" || uuid.Validate(out) != nil || sum["progressPercent"] != float64(100) ||
		sum["recipes"].(map[string]any)["develop"] != "1.3.0" || sum["error"] != nil {
		t.Fatalf("order ended %v", sum)
	}
	img, err := png.Decode(bytes.NewReader(f.download(f.key, out)))
	if err != nil || img.Bounds() != image.Rect(0, 0, 752, 500) {
		t.Fatalf("output: %v, bounds %v", err, img.Bounds())
	}

	// Settled: cancel answers 409 and changes nothing.
	f.want(f.do("POST", "/v1/orders/"+id+"/cancel", f.key, nil), 409, "completed")
	if s := f.order(f.key, id); s["status"] != "completed" || s["outputAssetId"] != out {
		t.Errorf("after a refused cancel: %v", s)
	}
	// Another key sees nothing, and cannot use the output.
	f.want(f.do("GET", "/v1/orders/"+id, f.other, nil), 404)
	f.want(f.do("POST", "/v1/orders/"+id+"/cancel", f.other, nil), 404)
	f.want(f.do("GET", "/v1/assets/"+out, f.other, nil), 404)
	// An output is not an input.
	f.want(f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{out}}), 400, "inputs[0]", "output")
	// Unknown orders: 404.
	f.want(f.do("GET", "/v1/orders/"+uuid.NewString(), f.key, nil), 404)
	f.want(f.do("GET", "/v1/orders/not-a-uuid", f.key, nil), 404)
}

func TestOrderValidationThroughTheAPI(t *testing.T) {
	f := startFull(t)
	in := f.uploadSmall(f.key, 160, photoA...)
	foreign := f.uploadSmall(f.other, 160, photoB...)
	six := []string{}
	for range 6 {
		six = append(six, in)
	}
	for _, c := range []struct {
		body     any
		mentions []string
	}{
		{map[string]any{}, []string{"inputs", "required"}},
		{map[string]any{"inputs": nil}, []string{"inputs", "required"}},
		{map[string]any{"inputs": in}, []string{"inputs"}},
		{map[string]any{"inputs": []any{7}}, []string{"inputs[0]"}},
		{map[string]any{"inputs": []string{}}, []string{"inputs"}},
		{map[string]any{"inputs": six}, []string{"inputs", "1 to 5", "got 6"}}, // the engine takes 9; the API keeps 5
		{map[string]any{"inputs": []string{"not-a-uuid"}}, []string{"inputs[0]", "UUID"}},
		{map[string]any{"inputs": []string{in, in}}, []string{"inputs[1]"}},
		{map[string]any{"inputs": []string{foreign}}, []string{"inputs[0]", "not found"}},
		{map[string]any{"inputs": []string{in}, "name": "x"}, []string{"name", "unknown field"}},
		{map[string]any{"inputs": []string{in}, "gen_edit": "teleport"}, []string{"gen_edit"}},
		{map[string]any{"inputs": []string{in}, "quality": 0}, []string{"quality"}},
		{map[string]any{"inputs": []string{in}, "perspective": "yes"}, []string{"perspective"}},
		{map[string]any{"inputs": []string{in}, "gen_edit": "magic_eraser"}, []string{"mask"}},
		{map[string]any{"inputs": []string{in}, "gen_edit": "indoor_staging", "staging_style": "keep",
			"floor_finish": "carpet_grey", "style_clause": "oak"}, []string{"style_clause"}},
		{"null", []string{"body"}},
		{"[]", []string{"body"}},
		{`{"inputs": [`, []string{"malformed"}},
	} {
		f.want(f.do("POST", "/v1/orders", f.key, c.body), 400, c.mentions...)
	}
	f.want(f.do("POST", "/v1/orders", f.key, []byte(`{"inputs":["`+in+`"]}`)), 415)
	f.want(f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{in}},
		withHeader(HeaderIdempotencyKey, strings.Repeat("k", 256))), 400, HeaderIdempotencyKey)
	if list, _ := f.eng.Orders(context.Background(), f.keyID, 0); len(list) != 0 {
		t.Errorf("refused submissions created %d orders", len(list))
	}
	// The limits themselves are accepted.
	ok := f.submit(f.key, map[string]any{"inputs": []string{in}, "format": "webp", "quality": 100,
		"perspective_strength": 0, "threshold": 1})
	f.waitOrder(f.key, ok["orderId"].(string))
}

func TestOrderCancelThroughTheAPI(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()), withEngine(func(c *engine.Config) { c.Workers = 1 }))
	in := f.uploadSmall(f.key, 160, photoA...)

	running := f.submit(f.key, map[string]any{"inputs": []string{in}, "sky": true})["orderId"].(string)
	if g.waitEntered(t) != running {
		t.Fatal("another order reached the gate")
	}
	pending := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	if s := f.order(f.key, running); s["status"] != "running" || s["progressStage"] != "replacing sky" {
		t.Errorf("held order: %v", s)
	}
	if s := f.order(f.key, pending); s["status"] != "pending" {
		t.Errorf("queued order: %v", s)
	}

	// The pending one first: cancelling the running one frees the only worker.
	for _, id := range []string{pending, running} {
		r := f.do("POST", "/v1/orders/"+id+"/cancel", f.key, nil)
		f.want(r, 200)
		if r.data()["status"] != "cancelled" || r.data()["orderUuid"] != id {
			t.Errorf("cancel answered %v", r.data())
		}
		again := f.do("POST", "/v1/orders/"+id+"/cancel", f.key, nil)
		f.want(again, 200)
		if again.data()["status"] != "cancelled" || again.data()["updatedAt"] != r.data()["updatedAt"] {
			t.Errorf("repeated cancel answered %v, first %v", again.data(), r.data())
		}
	}
	g.open()
	// The worker may finish its step; the order stays cancelled with no output.
	next := f.submit(f.key, map[string]any{"inputs": []string{in}})["orderId"].(string)
	f.waitOrder(f.key, next)
	for _, id := range []string{running, pending} {
		if s := f.order(f.key, id); s["status"] != "cancelled" || s["outputAssetId"] != nil {
			t.Errorf("cancelled order later shows %v", s)
		}
	}
}

func TestIdempotencyKeyThroughTheAPI(t *testing.T) {
	f := startFull(t)
	in := f.uploadSmall(f.key, 160, photoA...)
	body := map[string]any{"inputs": []string{in}, "format": "png"}
	idem := withHeader(HeaderIdempotencyKey, "retry-7f3a")

	first := f.do("POST", "/v1/orders", f.key, body, idem)
	f.want(first, 201)
	id := first.data()["orderId"].(string)
	again := f.do("POST", "/v1/orders", f.key, body, idem)
	f.want(again, 201)
	if again.data()["orderId"] != id {
		t.Fatalf("a repeated submission made order %v, first %s", again.data()["orderId"], id)
	}
	f.want(f.do("POST", "/v1/orders", f.key, map[string]any{"inputs": []string{in}, "format": "jpeg"}, idem), 409, HeaderIdempotencyKey)
	// Keys are separate: the same Idempotency-Key under another key is its own.
	otherIn := f.uploadSmall(f.other, 160, photoA...)
	o := f.do("POST", "/v1/orders", f.other, map[string]any{"inputs": []string{otherIn}, "format": "png"}, idem)
	f.want(o, 201)
	if o.data()["orderId"] == id {
		t.Error("two keys share an idempotent order")
	}
	if list, _ := f.eng.Orders(context.Background(), f.keyID, 0); len(list) != 1 {
		t.Errorf("%d orders for the key, want 1", len(list))
	}
	f.waitOrder(f.key, id)
	// After completion the repeat still answers the first order, settled.
	late := f.do("POST", "/v1/orders", f.key, body, idem)
	f.want(late, 201)
	if late.data()["orderId"] != id || late.data()["status"] != "completed" {
		t.Errorf("late repeat answered %v", late.data())
	}
}

// The document of the whole server (every route wired) validates, matches
// the router, and says what the new routes need.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	f := startFull(t)
	doc := loadDoc(t, f.srv.openapiJSON)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json does not validate: %v", err)
	}
	served, documented := routerOperations(t, f.srv.router), documentedOperations(t, f.srv.openapiJSON)
	if undoc, phantom := drift(served, documented); len(undoc)+len(phantom) > 0 {
		t.Fatalf("undocumented %q, phantom %q", undoc, phantom)
	}
	for _, op := range []string{
		"POST /v1/assets", "POST /v1/assets/{id}/uploaded", "GET /v1/assets/{id}/status", "GET /v1/assets/{id}",
		"POST /v1/assets/{id}/exports", "DELETE /v1/assets/{id}", "PUT /storage/upload/{id}", "GET /storage/download/{id}",
		"HEAD /storage/download/{id}", "POST /v1/orders", "GET /v1/orders/{id}", "POST /v1/orders/{id}/cancel",
		"GET /v1/orders/{id}/events", "POST /v1/batches", "GET /v1/batches/{id}", "POST /v1/batches/{id}/cancel",
		"GET /v1/batches/{id}/events", "GET /v1/events", "POST /v1/ws-ticket", "GET /v1/ws",
	} {
		if !slices.Contains(documented, op) {
			t.Errorf("%s is not documented", op)
		}
	}
	for _, op := range []string{"HEAD /v1/events", "HEAD /v1/orders/{id}/events"} {
		if slices.Contains(served, op) {
			t.Errorf("%s is served", op)
		}
	}
	orders := doc.Paths.Find("/v1/orders").Post
	if orders.Parameters.GetByInAndName("header", HeaderIdempotencyKey) == nil {
		t.Error("POST /v1/orders does not document Idempotency-Key")
	}
	body := orders.RequestBody.Value.Content.Get("application/json").Schema.Value
	for _, name := range []string{"inputs", "perspective", "quality", "gen_edit", "mask"} {
		if body.Properties[name] == nil {
			t.Errorf("the order request does not document %s", name)
		}
	}
	if q := body.Properties["quality"].Value; q.Min == nil || *q.Min != 1 || q.Max == nil || *q.Max != 100 {
		t.Errorf("quality bounds %v %v", q.Min, q.Max)
	}
	exports := doc.Paths.Find("/v1/assets/{id}/exports").Post
	if exports.Responses.Status(202) == nil || exports.Responses.Status(200) == nil {
		t.Error("exports do not document both 202 and 200")
	}
	ev := doc.Paths.Find("/v1/orders/{id}/events").Get
	if ev.Parameters.GetByInAndName("header", HeaderLastEventID) == nil {
		t.Error("the order stream does not document Last-Event-ID")
	}
	sse := ev.Responses.Status(200).Value.Content.Get("text/event-stream")
	if sse == nil || sse.Schema.Value.Extensions["x-message-schema"] == nil {
		t.Error("the order stream does not document its message schema")
	}
	if ev.Responses.Status(200).Value.Headers[HeaderRateLimit] != nil {
		t.Error("an event stream documents rate limit headers")
	}
	if doc.Paths.Find("/storage/upload/{id}").Put.Security == nil || len(*doc.Paths.Find("/storage/upload/{id}").Put.Security) != 0 {
		t.Error("the signed upload address is not documented as public")
	}
}
