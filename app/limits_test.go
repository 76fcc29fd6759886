package app

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

// limits.max_upload_mb counts decimal megabytes, as the README and the refusal say.
func TestUploadLimitIsInMegabytes(t *testing.T) {
	cfg := &Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"}
	cfg.Limits.MaxUploadMB, cfg.Limits.MaxMegapixels = 1, 120
	sys, err := buildSystem(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), buildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.close()
	if got := sys.assets.Config().MaxUploadBytes; got != 1_000_000 {
		t.Errorf("max_upload_mb 1 allows %d bytes, want 1000000", got)
	}
	a, _, err := sys.assets.Declare("owner", "big.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	err = sys.assets.Upload(a.ID, "image/jpeg", bytes.NewReader(make([]byte, 1_000_001)))
	if core.KindOf(err) != core.KindTooLarge || !strings.Contains(err.Error(), "upload limit of 1 MB") {
		t.Errorf("1000001 bytes against 1 MB: %v", err)
	}
}

// The per-key caps of the API have their documented defaults and the usual
// environment override.
func TestAPICapKeys(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("PORCHLIGHT_API_MAX_STREAMS", "4")
	c, _, err := LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.API.MaxConcurrentUploads != 8 || c.API.MaxStreams != 4 || c.API.UploadIdleTimeout != 30*time.Second {
		t.Errorf("api caps %d uploads, %d streams, idle %s", c.API.MaxConcurrentUploads, c.API.MaxStreams, c.API.UploadIdleTimeout)
	}
}
