package localapi

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
)

// POST /v1/assets/{id}/upload-url re-issues the address of a pending upload and
// gives it as long again; past its address's expiry an unconfirmed upload has
// failed with upload_expired and takes no new address.
func TestUploadURLReissueThroughTheAPI(t *testing.T) {
	var clk fakeClock
	clk.t = time.Now()
	f := startFull(t, withAssets(func(c *assets.Config) { c.Now = clk.Now }))
	photo := readPhoto(t, photoA...)

	id, first := f.declare(f.key, "A.jpg", "image/jpeg")
	clk.Add(10 * time.Minute)
	r := f.do("POST", "/v1/assets/"+id+"/upload-url", f.key, nil)
	f.want(r, 200)
	d := r.data()
	second := f.path(d["uploadUrl"].(string))
	if d["assetId"] != id || d["status"] != "pending" || d["expiresIn"] != float64(900) || second == first {
		t.Fatalf("re-issue answered %v", d)
	}
	if r.Header.Get(HeaderRateLimit) != "200" {
		t.Errorf("a re-issue spends an upload token: %v", r.Header)
	}
	// Another key, an unknown asset: 404.
	f.want(f.do("POST", "/v1/assets/"+id+"/upload-url", f.other, nil), 404)
	f.want(f.do("POST", "/v1/assets/"+uuid.NewString()+"/upload-url", f.key, nil), 404)

	// Past the first address's expiry the asset lives on, and the new address works.
	clk.Add(5*time.Minute + time.Second)
	f.want(f.do("PUT", first, "", photo, withHeader("Content-Type", "image/jpeg")), 403)
	f.want(f.do("PUT", second, "", photo, withHeader("Content-Type", "image/jpeg")), 200)
	f.want(f.do("POST", "/v1/assets/"+id+"/uploaded", f.key, nil), 202)
	// Confirmed: no more addresses.
	f.want(f.do("POST", "/v1/assets/"+id+"/upload-url", f.key, nil), 409)

	// Declared and left alone until its address expired: failed, and 409.
	lost, _ := f.declare(f.key, "B.jpg", "image/jpeg")
	clk.Add(15 * time.Minute)
	f.want(f.do("POST", "/v1/assets/"+lost+"/upload-url", f.key, nil), 409, "expired")
	st := f.do("GET", "/v1/assets/"+lost+"/status", f.key, nil)
	f.want(st, 200)
	if st.data()["status"] != "failed" || st.data()["code"] != core.CodeUploadExpired || !strings.Contains(st.data()["reason"].(string), "expired") {
		t.Errorf("status of the lapsed upload: %v", st.data())
	}
	if s := f.waitAsset(f.key, id); s["status"] != "ready" {
		t.Errorf("the re-issued upload ended %v", s)
	}
}

// The document describes the re-issue and what the signed PUT may answer.
func TestOpenAPIDescribesUploadAddresses(t *testing.T) {
	f := startFull(t)
	doc := loadDoc(t, f.srv.openapiJSON)
	reissue := doc.Paths.Find("/v1/assets/{id}/upload-url")
	if reissue == nil || reissue.Post == nil {
		t.Fatal("POST /v1/assets/{id}/upload-url is not documented")
	}
	for _, code := range []int{200, 404, 409, 429} {
		if reissue.Post.Responses.Status(code) == nil {
			t.Errorf("POST /v1/assets/{id}/upload-url does not document %d", code)
		}
	}
	put := doc.Paths.Find("/storage/upload/{id}").Put
	for _, code := range []int{200, 403, 408, 413, 429, 507} {
		if put.Responses.Status(code) == nil {
			t.Errorf("PUT /storage/upload/{id} does not document %d", code)
		}
	}
	if put.Responses.Status(429).Value.Headers["Retry-After"] == nil {
		t.Error("the signed PUT's 429 documents no Retry-After")
	}
	if doc.Paths.Find("/v1/events").Get.Responses.Status(429) == nil {
		t.Error("GET /v1/events does not document 429")
	}
}
