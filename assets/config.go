package assets

import (
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/membudget"
)

// Defaults of Config.
const (
	DefaultMaxUploadBytes = 300 * 1000 * 1000 // 300 MB per file
	DefaultMaxPixels      = 120 * 1000 * 1000 // 120 megapixels
	DefaultWorkers        = 2
	DefaultThumbnailEdge  = 512
	DefaultUploadTTL      = 15 * time.Minute
	DefaultDownloadTTL    = time.Hour
	DefaultExportQuality  = 92
)

// Config tunes the service. The zero value means every default.
type Config struct {
	MaxUploadBytes int64         // bytes per uploaded file
	MaxPixels      int64         // resolution limit checked from headers before decoding
	Workers        int           // ingest and export jobs run at once
	ThumbnailEdge  int           // longest edge of the window's thumbnails
	UploadTTL      time.Duration // lifetime of signed upload addresses
	DownloadTTL    time.Duration // lifetime of signed download addresses
	KeepGPS        bool          // exports keep the source's GPS position
	BaseURL        string        // scheme://host:port the storage addresses point at; see SetBaseURL

	// Memory is the budget every export is charged against, shared with the engine's
	// orders (app wires the engine's budget in); nil makes one of its own, a share of
	// the memory available at start.
	Memory *membudget.Budget

	// OnChange is called after every committed change of an asset record (never while
	// the service holds a lock), OnDelete after a record was deleted.
	OnChange func(core.Asset)
	OnDelete func(core.Asset)

	// Now is the clock; tests inject one to expire signed addresses.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.MaxUploadBytes <= 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = DefaultMaxPixels
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.ThumbnailEdge <= 0 {
		c.ThumbnailEdge = DefaultThumbnailEdge
	}
	if c.UploadTTL <= 0 {
		c.UploadTTL = DefaultUploadTTL
	}
	if c.DownloadTTL <= 0 {
		c.DownloadTTL = DefaultDownloadTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Memory == nil {
		c.Memory = membudget.New(membudget.Share(0))
	}
	return c
}
