package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/viper"
)

// Config keys the window owns; the others it edits are documented in app/config.go.
const (
	KeyOptions      = "window.options"       // order options last used, as in the API
	KeyOutputDir    = "window.output_dir"    // where finished photos are written
	KeyNaming       = "window.naming"        // output name template
	KeyTheme        = "window.theme"         // system, light or dark
	KeyExportFormat = "window.export.format" // last export settings
	KeyExportQual   = "window.export.quality"
	KeyExportEdge   = "window.export.max_edge"
	KeyExportDir    = "window.export.dir" // the folder the last export went to
	KeyWorkers      = "engine.workers"
	KeyResCap       = "engine.resolution_cap"
	KeyAPIEnabled   = "api.enabled"
	KeyListen       = "listen"
	KeyBackends     = "backends"
	KeyFeatures     = "features"
	KeyHotfolders   = "hotfolders"
)

// Config is the window's view of the configuration: reads go to the effective
// settings (file, environment, flags), writes go to the effective settings at once
// and, on Save, to the config file. Save rewrites the file from what it holds plus the
// keys set here, so values that came from the environment or from defaults are never
// baked into the file.
type Config struct {
	mu      sync.Mutex
	v       *viper.Viper
	file    string
	changed map[string]any
}

// NewConfig wraps the viper instance that app.LoadConfig returned; file is where Save
// writes ("" disables saving, for a session without a config location).
func NewConfig(v *viper.Viper, file string) *Config {
	if v == nil {
		v = viper.New()
	}
	return &Config{v: v, file: file, changed: map[string]any{}}
}

// File is the config file Save writes.
func (c *Config) File() string { return c.file }

// Get returns the effective value of key (nil when unset).
func (c *Config) Get(key string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.v.Get(key)
}

// String returns key as text, def when unset or empty.
func (c *Config) String(key, def string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.v.GetString(key); s != "" {
		return s
	}
	return def
}

// Int returns key as an integer, def when unset.
func (c *Config) Int(key string, def int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.v.IsSet(key) {
		return def
	}
	return c.v.GetInt(key)
}

// Bool returns key as a boolean, def when unset.
func (c *Config) Bool(key string, def bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.v.IsSet(key) {
		return def
	}
	return c.v.GetBool(key)
}

// Set changes key now; Save makes it last.
func (c *Config) Set(key string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.v.Set(key, value)
	c.changed[key] = value
}

// Save writes the config file: what it already holds plus every key set in this
// session. The file is written to a temporary name, synced and renamed, with mode
// 0600 (or the file's own mode when stricter).
func (c *Config) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == "" {
		return errors.New("settings: no config file location (set --config or XDG_CONFIG_HOME)")
	}
	fv := viper.New()
	fv.SetConfigFile(c.file)
	if _, err := os.Stat(c.file); err == nil {
		if err := fv.ReadInConfig(); err != nil {
			return fmt.Errorf("settings: read %s: %w", c.file, err)
		}
	}
	for k, v := range c.changed {
		fv.Set(k, v)
	}
	dir := filepath.Dir(c.file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	// The file holds secrets (admin_key, backends' api_key): it is written 0600, or
	// with the existing mode where that is stricter, never wider.
	mode := os.FileMode(0o600)
	if st, err := os.Stat(c.file); err == nil {
		mode = st.Mode().Perm() & 0o600
	}
	if err := writeFileAtomic(c.file, mode, fv.WriteConfigTo); err != nil {
		return fmt.Errorf("settings: write %s: %w", c.file, err)
	}
	return nil
}

// writeFileAtomic writes path through a new temporary file beside it, created
// with mode from the start (so the content is never readable more widely),
// synced, then renamed over path; the folder is synced so the rename lasts.
func writeFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp makes 0600 files; Chmod applies a stricter existing mode too.
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
