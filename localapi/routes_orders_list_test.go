package localapi

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"
)

// listOrders pages through GET /v1/orders with query q and the given page size,
// and returns every order id in the order they were listed.
func (f *fullEnv) listOrders(key string, q url.Values, limit int) []map[string]any {
	f.t.Helper()
	var all []map[string]any
	q.Set("limit", jsonNumber(limit))
	for pages := 0; ; pages++ {
		if pages > 50 {
			f.t.Fatal("the listing does not end")
		}
		r := f.do("GET", "/v1/orders?"+q.Encode(), key, nil)
		f.want(r, 200)
		d := r.data()
		list, _ := d["orders"].([]any)
		if len(list) > limit {
			f.t.Fatalf("page of %d orders, limit %d", len(list), limit)
		}
		for _, o := range list {
			all = append(all, o.(map[string]any))
		}
		next, _ := d["nextCursor"].(string)
		if next == "" {
			return all
		}
		q.Set("cursor", next)
	}
}

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }

func ids(list []map[string]any) []string {
	var out []string
	for _, o := range list {
		out = append(out, o["orderUuid"].(string))
	}
	return out
}

// GET /v1/orders lists the key's orders newest first, a page at a time, and
// filters them by status and batch; another key's orders never show.
func TestListOrdersThroughTheAPI(t *testing.T) {
	f := startFull(t)
	in := f.uploadSmall(f.key, 160, photoA...)
	var single []string
	for range 3 {
		single = append(single, f.submit(f.key, map[string]any{"inputs": []string{in}, "format": "png"})["orderId"].(string))
	}
	r := f.do("POST", "/v1/batches", f.key, map[string]any{"format": "png",
		"scenes": []any{map[string]any{"inputs": []string{in}}, map[string]any{"inputs": []string{in}}}})
	f.want(r, 201)
	batch := r.data()["batchId"].(string)
	for _, id := range single {
		f.waitOrder(f.key, id)
	}
	f.waitBatch(f.key, batch)
	// An order of another key.
	other := f.uploadSmall(f.other, 160, photoB...)
	f.submit(f.other, map[string]any{"inputs": []string{other}})

	all := f.listOrders(f.key, url.Values{}, 2)
	if len(all) != 5 {
		t.Fatalf("listed %d orders, want 5: %v", len(all), ids(all))
	}
	seen := map[string]bool{}
	for i, o := range all {
		id := o["orderUuid"].(string)
		if seen[id] {
			t.Fatalf("order %s listed twice", id)
		}
		seen[id] = true
		if i > 0 {
			prev, _ := time.Parse(time.RFC3339Nano, all[i-1]["createdAt"].(string))
			cur, _ := time.Parse(time.RFC3339Nano, o["createdAt"].(string))
			if cur.After(prev) {
				t.Fatalf("not newest first: %v after %v", cur, prev)
			}
		}
	}
	for _, id := range single {
		if !seen[id] {
			t.Fatalf("order %s not listed", id)
		}
	}
	// The newest (the batch's scenes) come first.
	if all[0]["batchId"] != batch || all[1]["batchId"] != batch {
		t.Fatalf("newest first: %v", all[:2])
	}

	inBatch := f.listOrders(f.key, url.Values{"batch": {batch}}, 50)
	if len(inBatch) != 2 || inBatch[0]["batchId"] != batch || inBatch[1]["batchId"] != batch {
		t.Fatalf("batch filter: %v", inBatch)
	}
	if got := f.listOrders(f.key, url.Values{"status": {"completed"}}, 3); len(got) != 5 {
		t.Fatalf("status completed: %d orders", len(got))
	}
	if got := f.listOrders(f.key, url.Values{"status": {"failed,cancelled"}}, 3); len(got) != 0 {
		t.Fatalf("status failed,cancelled: %v", ids(got))
	}
	if got := f.listOrders(f.other, url.Values{}, 50); len(got) != 1 || slices.Contains(ids(all), ids(got)[0]) {
		t.Fatalf("the other key lists %v", ids(got))
	}

	f.want(f.do("GET", "/v1/orders?status=lost", f.key, nil), 400, "status")
	f.want(f.do("GET", "/v1/orders?limit=0", f.key, nil), 400, "limit")
	f.want(f.do("GET", "/v1/orders?limit=201", f.key, nil), 400, "limit")
	f.want(f.do("GET", "/v1/orders?cursor=bm9wZQ", f.key, nil), 400, "cursor")
	f.want(f.do("GET", "/v1/orders?sort=old", f.key, nil), 400, "sort")

	// Documented in the OpenAPI, with its four parameters.
	r = f.do("GET", "/openapi.json", "", nil)
	f.want(r, 200)
	get, _ := r.JSON["paths"].(map[string]any)["/v1/orders"].(map[string]any)["get"].(map[string]any)
	var params []string
	for _, p := range get["parameters"].([]any) {
		params = append(params, p.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"limit", "cursor", "status", "batch"} {
		if !slices.Contains(params, want) {
			t.Errorf("GET /v1/orders documents parameters %v, missing %s", params, want)
		}
	}
}
