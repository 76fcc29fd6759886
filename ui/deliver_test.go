package ui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

func TestNamingTemplate(t *testing.T) {
	f := nameFields{Scene: "living room", Name: "DSC_0082", Batch: "Maple St", Index: 7,
		Date: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}
	if got := outputName("{batch}/{index} {scene} {date}", f, ".jpg"); got != "Maple St_007 living room 2025-04-01.jpg" {
		t.Fatalf("got %q", got)
	}
	if got := outputName("{name}", nameFields{}, ".png"); got != "photo.png" {
		t.Fatalf("empty name: %q", got)
	}
	for _, bad := range []string{"", "fixed", "{scene", "{nope}-{scene}"} {
		if checkTemplate(bad) == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
	if err := checkTemplate("{date}_{scene}"); err != nil {
		t.Fatal(err)
	}
}

// Finished photos never replace a file: concurrent writers get distinct names.
func TestWriteNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kitchen.jpg"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	paths := make([]string, 6)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := writeNew(dir, "kitchen.jpg", strings.NewReader("result"))
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || filepath.Base(p) == "kitchen.jpg" {
			t.Fatalf("name reused: %v", paths)
		}
		seen[p] = true
		if b, _ := os.ReadFile(p); string(b) != "result" {
			t.Fatalf("%s holds %q", p, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kitchen.jpg")); string(b) != "mine" {
		t.Fatal("an existing file was replaced")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".porchlight-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// Settings saved by the window land in the config file next to what was there, and
// values from the environment are not written into it.
func TestConfigSaveKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "porchlight", "config.yaml")
	os.MkdirAll(filepath.Dir(file), 0o700)
	os.WriteFile(file, []byte("listen: 127.0.0.1:9000\nengine:\n  memory_mb: 512\n"), 0o600)
	t.Setenv("PORCHLIGHT_DATA_DIR", "/from/env")
	v := viper.New()
	v.SetEnvPrefix("PORCHLIGHT")
	v.AutomaticEnv()
	v.SetDefault("data_dir", "x")
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	c := NewConfig(v, file)
	c.Set(KeyOutputDir, "/photos/out")
	c.Set(KeyWorkers, 3)
	c.Set(KeyOptions, map[string]any{"tonecraft": true})
	if c.String(KeyOutputDir, "") != "/photos/out" || c.Int(KeyWorkers, 0) != 3 {
		t.Fatal("set values not visible at once")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	back := viper.New()
	back.SetConfigFile(file)
	if err := back.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	if back.GetString("listen") != "127.0.0.1:9000" || back.GetInt("engine.memory_mb") != 512 {
		t.Fatalf("existing settings lost: %v", back.AllSettings())
	}
	if back.GetString(KeyOutputDir) != "/photos/out" || back.GetInt(KeyWorkers) != 3 || !back.GetBool("window.options.tonecraft") {
		t.Fatalf("saved settings missing: %v", back.AllSettings())
	}
	if back.IsSet("data_dir") {
		t.Fatal("a value from the environment was written into the file")
	}
	if err := NewConfig(viper.New(), "").Save(); err == nil {
		t.Fatal("saving without a file location succeeded")
	}
}

func TestOwnerKeyIsCreatedOnce(t *testing.T) {
	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ks := keys.New(db)
	a, err := OwnerKey(ks)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OwnerKey(ks)
	if err != nil || a != b {
		t.Fatalf("second call: %s %v, first %s", b, err, a)
	}
	list, _ := ks.List()
	if len(list) != 1 || list[0].Name != OwnerKeyName || list[0].Scope != core.ScopeStandard {
		t.Fatalf("keys %+v", list)
	}
}
