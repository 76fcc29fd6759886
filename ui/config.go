package ui

import (
	"errors"
	"fmt"
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
// session. The file is written to a temporary name, synced and renamed.
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
	// viper picks the format from the extension, so the temporary name keeps it.
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp%s", filepath.Base(c.file), os.Getpid(), filepath.Ext(c.file)))
	if err := fv.WriteConfigAs(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("settings: write %s: %w", c.file, err)
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("settings: %w", err)
	}
	if err := os.Rename(tmp, c.file); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
