package localapi

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"
)

// The internal owners' names are reserved: an admin cannot issue a key that the
// hot folders or the window would take for their own.
func TestIssuingAReservedKeyNameIsRefused(t *testing.T) {
	e := startServer(t)
	for name, reserved := range map[string]string{"hotfolders": "hotfolders", "window": "window", " Window ": "window"} {
		for _, scope := range []string{"standard", "admin"} {
			r := e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": name, "scope": scope})
			e.want(r, 400, "reserved", `"`+reserved+`"`)
		}
	}
	r := e.do("GET", "/v1/api-keys", e.admin, nil)
	e.want(r, 200)
	if list, _ := r.JSON["data"].([]any); len(list) != 1 {
		t.Fatalf("keys after the refusals: %s", r.Body)
	}
}

// Concurrent rotations with one secret: the secret is swapped once, so exactly one
// gets a new secret, the others 401, and that new secret is the one that works.
func TestConcurrentRotationsWithOneSecret(t *testing.T) {
	e := startServer(t)
	_, secret := e.newKey("raced", "standard")
	const n = 12
	type answer struct {
		code   int
		secret string
	}
	answers := make(chan answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.base+"/v1/api-keys/rotate", nil)
			req.Header.Set(HeaderAPIKey, secret)
			// A connection each, so the requests really run at once.
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
			<-start
			res, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var body struct {
				Data struct {
					Key string `json:"key"`
				} `json:"data"`
			}
			json.NewDecoder(res.Body).Decode(&body)
			answers <- answer{res.StatusCode, body.Data.Key}
		}()
	}
	close(start)
	wg.Wait()
	close(answers)
	var fresh []string
	codes := map[int]int{}
	for a := range answers {
		codes[a.code]++
		if a.code == 200 {
			fresh = append(fresh, a.secret)
		}
	}
	if codes[200] != 1 || codes[401] != n-1 {
		t.Fatalf("answers by status %v, want one 200 and %d 401", codes, n-1)
	}
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", fresh[0], nil), 200)
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", secret, nil), 401)
}
