package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Config is Porchlight's whole configuration. Every key can come from the config file,
// from an environment variable PORCHLIGHT_<KEY> (dots written as underscores) or from a
// flag, in increasing order of precedence.
type Config struct {
	DataDir  string `mapstructure:"data_dir"`
	Listen   string `mapstructure:"listen"`
	AdminKey string `mapstructure:"admin_key"`
	LogLevel string `mapstructure:"log_level"`

	API struct {
		Enabled     bool     `mapstructure:"enabled"` // in the window; serve always runs it
		CORSOrigins []string `mapstructure:"cors_origins"`
		RateLimit   bool     `mapstructure:"rate_limit"`
		// Per-key caps on what is held open at once, and how long an upload may stall.
		MaxConcurrentUploads int           `mapstructure:"max_concurrent_uploads"`
		MaxStreams           int           `mapstructure:"max_streams"`
		UploadIdleTimeout    time.Duration `mapstructure:"upload_idle_timeout"`
		// MaxInputs is the most brackets an API order or batch scene takes: the
		// spec's 5 by default; a studio may raise it to engine.MaxBrackets (9).
		MaxInputs int `mapstructure:"max_inputs"`
	} `mapstructure:"api"`

	Limits struct {
		MaxUploadMB   int64 `mapstructure:"max_upload_mb"`
		MaxMegapixels int64 `mapstructure:"max_megapixels"`
	} `mapstructure:"limits"`

	Engine struct {
		Workers       int           `mapstructure:"workers"`
		MemoryMB      int64         `mapstructure:"memory_mb"` // 0: a share of available memory
		OrderExpiry   time.Duration `mapstructure:"order_expiry"`
		ResolutionCap int           `mapstructure:"resolution_cap"`
	} `mapstructure:"engine"`

	Metadata struct {
		KeepGPS bool `mapstructure:"keep_gps"`
	} `mapstructure:"metadata"`

	Events struct {
		PingInterval time.Duration `mapstructure:"ping_interval"`
	} `mapstructure:"events"`

	Backends   map[string]map[string]any `mapstructure:"backends"`
	Features   map[string]string         `mapstructure:"features"` // feature key -> backend name
	Hotfolders []map[string]any          `mapstructure:"hotfolders"`
	// Presets are the studio's own looks (catalog.UserPreset), installed when the
	// config is loaded so that every front door accepts their keys.
	Presets []map[string]any `mapstructure:"presets"`

	// File is the config file that was read, if any.
	File string `mapstructure:"-"`
}

// defaults lists every scalar key with its default, so that environment variables
// override keys that no config file mentions (viper only binds keys it knows).
func defaults() map[string]any {
	return map[string]any{
		"data_dir":                   defaultDataDir(),
		"listen":                     "127.0.0.1:8787",
		"admin_key":                  "",
		"log_level":                  "info",
		"api.enabled":                true,
		"api.cors_origins":           []string{},
		"api.rate_limit":             true,
		"api.max_concurrent_uploads": 8,
		"api.max_streams":            16,
		"api.max_inputs":             catalog.MaxInputs,
		"api.upload_idle_timeout":    "30s",
		"limits.max_upload_mb":       300,
		"limits.max_megapixels":      120,
		"engine.workers":             0,
		"engine.memory_mb":           0,
		"engine.order_expiry":        "24h",
		"engine.resolution_cap":      8192,
		"metadata.keep_gps":          false,
		"events.ping_interval":       "15s",
	}
}

func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "porchlight")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "porchlight")
	}
	return "porchlight-data"
}

// DefaultConfigFile is $XDG_CONFIG_HOME/porchlight/config.yaml.
func DefaultConfigFile() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "porchlight", "config.yaml")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "porchlight", "config.yaml")
	}
	return ""
}

// LoadConfig reads the configuration. file is --config ("" for the default location,
// which may be absent); flags are bound by their names with '-' read as '_'.
func LoadConfig(file string, flags *pflag.FlagSet) (*Config, *viper.Viper, error) {
	v := viper.New()
	for k, d := range defaults() {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("PORCHLIGHT")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()

	explicit := file != ""
	if !explicit {
		file = DefaultConfigFile()
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			if explicit || !os.IsNotExist(underlying(err)) {
				if _, statErr := os.Stat(file); explicit || statErr == nil {
					return nil, nil, fmt.Errorf("read config %s: %w", file, err)
				}
			}
		}
	}
	if flags != nil {
		flags.VisitAll(func(f *pflag.Flag) {
			if f.Changed {
				v.Set(strings.ReplaceAll(f.Name, "-", "_"), f.Value.String())
			}
		})
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if v.ConfigFileUsed() != "" {
		if _, err := os.Stat(v.ConfigFileUsed()); err == nil {
			c.File = v.ConfigFileUsed()
		}
	}
	if c.DataDir == "" {
		return nil, nil, fmt.Errorf("config: data_dir is empty")
	}
	presets, err := catalog.DecodeUserPresets(c.Presets)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if err := catalog.SetUserPresets(presets); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if c.API.MaxInputs < 1 || c.API.MaxInputs > engine.MaxBrackets {
		return nil, nil, fmt.Errorf("config: api.max_inputs is %d; it takes 1 to %d brackets", c.API.MaxInputs, engine.MaxBrackets)
	}
	return &c, v, nil
}

func underlying(err error) error {
	type unwrapper interface{ Unwrap() error }
	for {
		u, ok := err.(unwrapper)
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}
