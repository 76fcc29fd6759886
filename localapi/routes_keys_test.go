package localapi

import (
	"testing"
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
