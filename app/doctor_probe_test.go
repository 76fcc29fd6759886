package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/backends"
)

// An AUTOMATIC1111 started with --api-auth takes HTTP basic credentials: the doctor
// must send the configured user:password that way, as the adapter does, or a working
// server is reported as refusing them.
func TestDoctorProbesA1111WithBasicAuth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if r.URL.Path != "/sdapi/v1/progress" || !ok || user != "studio" || pass != "s3cret" {
			http.Error(w, `{"detail":"Incorrect username or password"}`, http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"progress":0}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	spec := backends.Spec{Name: "gpu", Type: "a1111", URL: u, APIKey: "studio:s3cret"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := probeBackend(ctx, srv.Client(), "backend gpu", spec)
	if r.Status != checkOK {
		t.Fatalf("probe of a server that accepts the credentials: %+v", r)
	}
}
