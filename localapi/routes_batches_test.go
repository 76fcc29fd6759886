package localapi

import (
	"bytes"
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine"
)

func (f *fullEnv) waitBatch(key, id string) map[string]any {
	f.t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for i := 0; ; i++ {
		r := f.do("GET", "/v1/batches/"+id, key, nil)
		f.want(r, 200)
		if r.data()["done"] == true {
			return r.data()
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("batch %s not done after 120 s: %v", id, r.data())
		}
		time.Sleep(pollWait(i))
	}
}

func scenesOf(agg map[string]any) []map[string]any {
	var out []map[string]any
	for _, o := range agg["orders"].([]any) {
		out = append(out, o.(map[string]any))
	}
	return out
}

func TestBatchLifecycleThroughTheAPI(t *testing.T) {
	f := startFull(t)
	a := f.uploadSmall(f.key, 200, photoA...)
	b := f.uploadSmall(f.key, 200, photoB...)
	c := f.uploadSmall(f.key, 200, photoC...)

	r := f.do("POST", "/v1/batches", f.key, map[string]any{
		"name": "listing 12", "format": "png", "quality": 80,
		"scenes": []any{
			map[string]any{"inputs": []string{a}},
			map[string]any{"inputs": []string{b}, "format": "jpeg"},
			map[string]any{"inputs": []string{c}},
		},
	})
	f.want(r, 201)
	d := r.data()
	id := d["batchId"].(string)
	if d["name"] != "listing 12" || d["total"] != float64(3) || len(d["orders"].([]any)) != 3 {
		t.Fatalf("batch answered %v", d)
	}
	if r.Header.Get(HeaderRateRemaining) != "59" {
		t.Errorf("a batch of 3 scenes spent %s writes of 60, want 1", r.Header.Get(HeaderRateRemaining))
	}

	agg := f.waitBatch(f.key, id)
	if agg["completed"] != float64(3) || agg["failed"] != float64(0) || agg["pending"] != float64(0) || agg["running"] != float64(0) {
		t.Fatalf("batch ended %v", agg)
	}
	wantFormat := []string{"png", "jpeg", "png"}
	for i, sc := range scenesOf(agg) {
		if sc["sceneIndex"] != float64(i) || sc["batchId"] != id || sc["status"] != "completed" {
			t.Fatalf("scene %d: %v", i, sc)
		}
		_, format, err := image.DecodeConfig(bytes.NewReader(f.download(f.key, sc["outputAssetId"].(string))))
		if err != nil || format != wantFormat[i] {
			t.Errorf("scene %d output %s (%v), want %s", i, format, err, wantFormat[i])
		}
		// Each scene is a regular order.
		if o := f.order(f.key, sc["orderUuid"].(string)); o["status"] != "completed" || o["batchId"] != id {
			t.Errorf("scene %d as an order: %v", i, o)
		}
	}
	if in := scenesOf(agg)[2]["inputs"].([]any); len(in) != 1 || in[0] != c {
		t.Errorf("scene 2 inputs %v, want [%s]", in, c)
	}
	// Cancelling a settled batch changes nothing and answers 200.
	cr := f.do("POST", "/v1/batches/"+id+"/cancel", f.key, nil)
	f.want(cr, 200)
	if cr.data()["completed"] != float64(3) || cr.data()["done"] != true {
		t.Errorf("cancel of a done batch: %v", cr.data())
	}
	// Another key: 404.
	f.want(f.do("GET", "/v1/batches/"+id, f.other, nil), 404)
	f.want(f.do("POST", "/v1/batches/"+id+"/cancel", f.other, nil), 404)
}

func TestBatchIsValidatedAsAWhole(t *testing.T) {
	f := startFull(t)
	in := f.uploadSmall(f.key, 160, photoA...)
	scene := map[string]any{"inputs": []string{in}}
	many := make([]any, engine.MaxScenes+1)
	for i := range many {
		many[i] = scene
	}
	for _, c := range []struct {
		body     any
		mentions []string
	}{
		{map[string]any{"name": "x", "scenes": []any{scene, map[string]any{"inputs": []string{"not-a-uuid"}}}}, []string{"scenes[1].inputs[0]"}},
		{map[string]any{"scenes": []any{scene, map[string]any{"inputs": []string{in}, "quality": 0}}}, []string{"scenes[1].quality"}},
		{map[string]any{"scenes": []any{map[string]any{"inputs": []string{in}, "brightness": 2}}}, []string{"scenes[0].brightness"}},
		{map[string]any{"scenes": []any{scene, "scene"}}, []string{"scenes[1]"}},
		{map[string]any{"scenes": []any{map[string]any{"format": "png"}}}, []string{"scenes[0].inputs"}},
		{map[string]any{"scenes": many}, []string{"scenes", "100"}},
		{map[string]any{"scenes": []any{}}, []string{"scenes"}},
		{map[string]any{"name": "no scenes"}, []string{"scenes"}},
		{map[string]any{"scenes": "all"}, []string{"scenes"}},
		{map[string]any{"name": 5, "scenes": []any{scene}}, []string{"name"}},
		{map[string]any{"inputs": []string{in}, "scenes": []any{scene}}, []string{"inputs"}},
		{map[string]any{"gen_edit": "teleport", "scenes": []any{scene}}, []string{"gen_edit"}},
		{map[string]any{"gen_edit": "indoor_staging", "staging_style": "modern", "style_clause": "oak",
			"scenes": []any{scene}}, []string{"style_clause"}},
		{map[string]any{"gen_edit": "indoor_staging", "staging_style": "modern",
			"scenes": []any{map[string]any{"inputs": []string{in}, "style_clause": "oak"}}}, []string{"scenes[0].style_clause"}},
	} {
		f.want(f.do("POST", "/v1/batches", f.key, c.body), 400, c.mentions...)
	}
	if list, _ := f.eng.Orders(context.Background(), f.keyID, 0); len(list) != 0 {
		t.Fatalf("refused batches created %d orders", len(list))
	}
	// The asset of the valid scene still works.
	o := f.submit(f.key, map[string]any{"inputs": []string{in}})
	if s := f.waitOrder(f.key, o["orderId"].(string)); s["status"] != "completed" {
		t.Errorf("order after the refused batches: %v", s)
	}
}

func TestBatchSceneFailureDoesNotBlockSiblings(t *testing.T) {
	f := startFull(t) // no model backend is configured: generative scenes fail with a clear error
	in := f.uploadSmall(f.key, 160, photoA...)
	r := f.do("POST", "/v1/batches", f.key, map[string]any{"name": "mixed", "scenes": []any{
		map[string]any{"inputs": []string{in}, "gen_edit": "mess_cleaner"},
		map[string]any{"inputs": []string{in}},
	}})
	f.want(r, 201)
	agg := f.waitBatch(f.key, r.data()["batchId"].(string))
	sc := scenesOf(agg)
	if agg["completed"] != float64(1) || agg["failed"] != float64(1) || sc[0]["status"] != "failed" ||
		!strings.Contains(sc[0]["error"].(string), "mess cleaner") || sc[1]["status"] != "completed" {
		t.Errorf("batch ended %v", agg)
	}
}

func TestBatchCancelThroughTheAPI(t *testing.T) {
	g := newGate()
	f := startFull(t, withStep(g.step()), withEngine(func(c *engine.Config) { c.Workers = 1 }))
	in := f.uploadSmall(f.key, 160, photoA...)
	r := f.do("POST", "/v1/batches", f.key, map[string]any{"name": "held", "sky": true, "scenes": []any{
		map[string]any{"inputs": []string{in}},
		map[string]any{"inputs": []string{in}},
		map[string]any{"inputs": []string{in}, "sky": false},
	}}, withHeader(HeaderIdempotencyKey, "batch-1"))
	f.want(r, 201)
	id := r.data()["batchId"].(string)
	g.waitEntered(t)

	c := f.do("POST", "/v1/batches/"+id+"/cancel", f.key, nil)
	f.want(c, 200)
	if c.data()["failed"] != float64(3) || c.data()["done"] != true {
		t.Fatalf("cancel answered %v", c.data())
	}
	for _, sc := range scenesOf(c.data()) {
		if sc["status"] != "cancelled" {
			t.Errorf("scene %v after cancel: %v", sc["sceneIndex"], sc["status"])
		}
	}
	g.open()
	f.want(f.do("POST", "/v1/batches/"+id+"/cancel", f.key, nil), 200)
	// The same submission again answers the same batch; a different one conflicts.
	again := f.do("POST", "/v1/batches", f.key, map[string]any{"name": "held", "sky": true, "scenes": []any{
		map[string]any{"inputs": []string{in}},
		map[string]any{"inputs": []string{in}},
		map[string]any{"inputs": []string{in}, "sky": false},
	}}, withHeader(HeaderIdempotencyKey, "batch-1"))
	f.want(again, 201)
	if again.data()["batchId"] != id || again.data()["failed"] != float64(3) {
		t.Errorf("repeat answered %v", again.data())
	}
	f.want(f.do("POST", "/v1/batches", f.key, map[string]any{"scenes": []any{map[string]any{"inputs": []string{in}}}},
		withHeader(HeaderIdempotencyKey, "batch-1")), 409)
}
