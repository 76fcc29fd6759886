package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	file := filepath.Join(dir, "porchlight", "config.yaml")
	os.MkdirAll(filepath.Dir(file), 0o700)
	os.WriteFile(file, []byte("listen: 127.0.0.1:9000\ndata_dir: /from/file\nengine:\n  resolution_cap: 4096\n"), 0o600)

	c, _, err := LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9000" || c.DataDir != "/from/file" || c.Engine.ResolutionCap != 4096 {
		t.Fatalf("file values not read: %+v", c)
	}
	if c.File != file {
		t.Fatalf("File = %q", c.File)
	}
	if c.Engine.OrderExpiry != 24*time.Hour || c.Limits.MaxMegapixels != 120 {
		t.Fatalf("defaults lost: %+v", c)
	}

	// Environment beats the file, including nested keys the file does not mention.
	t.Setenv("PORCHLIGHT_LISTEN", "127.0.0.1:9100")
	t.Setenv("PORCHLIGHT_DATA_DIR", "/from/env")
	t.Setenv("PORCHLIGHT_ENGINE_ORDER_EXPIRY", "2h")
	c, _, err = LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9100" || c.DataDir != "/from/env" || c.Engine.OrderExpiry != 2*time.Hour {
		t.Fatalf("env not applied: %+v", c)
	}

	// Flags beat the environment.
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("listen", "", "")
	fs.Parse([]string{"--listen", "127.0.0.1:9200"})
	c, _, err = LoadConfig("", fs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9200" {
		t.Fatalf("flag not applied: %s", c.Listen)
	}
}

func TestConfigExplicitFileMustExist(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if _, _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Fatal("a missing --config file must be an error")
	}
	// The default location may be absent.
	if _, _, err := LoadConfig("", nil); err != nil {
		t.Fatal(err)
	}
}

func TestConfigBadFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(f, []byte("listen: [unclosed\n"), 0o600)
	if _, _, err := LoadConfig(f, nil); err == nil {
		t.Fatal("a malformed config must be an error")
	}
}

// api.max_inputs keeps the spec's 5 by default; a studio may raise it up to nine.
func TestConfigMaxInputs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	c, _, err := LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.API.MaxInputs != 5 {
		t.Fatalf("api.max_inputs defaults to %d, want 5", c.API.MaxInputs)
	}
	t.Setenv("PORCHLIGHT_API_MAX_INPUTS", "9")
	if c, _, err = LoadConfig("", nil); err != nil || c.API.MaxInputs != 9 {
		t.Fatalf("api.max_inputs 9: %v %+v", err, c)
	}
	for _, bad := range []string{"0", "10"} {
		t.Setenv("PORCHLIGHT_API_MAX_INPUTS", bad)
		if _, _, err := LoadConfig("", nil); err == nil {
			t.Fatalf("api.max_inputs %s accepted", bad)
		}
	}
}
