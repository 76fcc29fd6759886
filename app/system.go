package app

import (
	"fmt"
	"log/slog"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/localapi"
)

// system is one running Porchlight: the database, the engine and the front doors
// that the configuration enables, all supervised together.
type system struct {
	cfg    *Config
	log    *slog.Logger
	db     *store.DB
	keys   *keys.Service
	assets *assets.Service
	engine *engine.Engine
	api    *localapi.Server // nil when the API is off
	sup    *Supervisor

	hot *hotfolder.Service // the watched folders; nil when none is configured

	pipe     *pipeline.Pipeline
	backends *backends.Registry // the model backends of the generative features
}

// buildOptions say which front doors to start.
type buildOptions struct {
	api         bool
	onListening func(addr string)
	// previews keeps every order's preview base for the window's sliders.
	previews bool
	// hotAlways builds the hot-folder service even with no folder configured: the
	// window's settings start the folders added there at once.
	hotAlways bool
}

// buildSystem opens the data dir and wires every component. The caller runs
// sys.sup.Serve and then sys.close.
func buildSystem(cfg *Config, log *slog.Logger, opt buildOptions) (_ *system, err error) {
	sys := &system{cfg: cfg, log: log, sup: NewSupervisor(log)}
	defer func() {
		if err != nil {
			sys.close()
		}
	}()
	if sys.db, err = store.Open(cfg.DataDir); err != nil {
		return nil, err
	}
	sys.keys = keys.New(sys.db)
	if cfg.AdminKey != "" {
		created, err := sys.keys.EnsureBootstrap(cfg.AdminKey)
		if err != nil {
			return nil, fmt.Errorf("admin key: %w", err)
		}
		if created {
			log.Info("created the bootstrap admin key from the configured admin key")
		}
	}
	sys.sup.Add("keys", sys.keys)

	// Orders and exports are charged against one memory budget: the engine's, which
	// the asset store receives through its config.
	mem := engine.NewMemoryBudget(cfg.Engine.MemoryMB<<20, 0)

	// The engine learns of deleted inputs through the asset store's callback; the
	// store is built first, so the callback reaches the engine through sys.
	sys.assets, err = assets.New(sys.db, cfg.DataDir, assets.Config{
		Memory:         mem,
		MaxUploadBytes: cfg.Limits.MaxUploadMB * 1_000_000, // MB as documented, not MiB
		MaxPixels:      cfg.Limits.MaxMegapixels * 1_000_000,
		KeepGPS:        cfg.Metadata.KeepGPS,
		OnDelete: func(a core.Asset) {
			if sys.engine != nil {
				sys.engine.AssetDeleted(a)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	sys.sup.Add("assets", sys.assets)

	pcfg := pipeline.Config{
		MaxEdge:   cfg.Engine.ResolutionCap,
		MaxPixels: cfg.Limits.MaxMegapixels * 1_000_000,
		KeepGPS:   cfg.Metadata.KeepGPS,
		Logger:    log,
	}
	if opt.previews {
		pcfg.PreviewDir = previewDir(cfg.DataDir)
		sys.sup.Add("previews", &previewSweeper{dir: pcfg.PreviewDir, limit: previewCap, log: log})
	}
	pipe := pipeline.New(pcfg)
	if sys.backends, err = registerBackends(cfg, pipe, log); err != nil {
		return nil, err
	}
	sys.pipe = pipe
	sys.engine, err = engine.New(sys.db, sys.assets, engine.Config{
		Workers:    cfg.Engine.Workers,
		Memory:     mem,
		LimitHeap:  true,
		PendingTTL: cfg.Engine.OrderExpiry,
		Pipeline:   pipe,
		Logger:     log,
	})
	if err != nil {
		return nil, err
	}
	sys.sup.Add("engine", sys.engine)

	if opt.api {
		sys.api, err = localapi.New(localapi.Config{
			Listen: cfg.Listen,
			// Signed storage addresses point at the bound address, known only now.
			OnListening: func(addr string) {
				sys.assets.SetBaseURL("http://" + addr)
				if opt.onListening != nil {
					opt.onListening(addr)
				}
			},
			Logger:       log,
			RateLimits:   localapi.RateLimits{Disabled: !cfg.API.RateLimit},
			CORSOrigins:  cfg.API.CORSOrigins,
			PingInterval: cfg.Events.PingInterval,

			MaxConcurrentUploads: cfg.API.MaxConcurrentUploads,
			UploadIdleTimeout:    cfg.API.UploadIdleTimeout,
			MaxStreams:           cfg.API.MaxStreams,
			MaxInputs:            cfg.API.MaxInputs,
		}, localapi.Deps{Keys: sys.keys, Assets: sys.assets, Engine: sys.engine, Available: sys.available})
		if err != nil {
			return nil, err
		}
		sys.sup.Add("api", sys.api)
	}

	// Hot folders: configured under `hotfolders`; their orders belong to the
	// internal "hotfolders" key, so the window lists them.
	if len(cfg.Hotfolders) > 0 || opt.hotAlways {
		folders, err := hotfolder.Decode(cfg.Hotfolders)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		sys.hot, err = hotfolder.New(folders, hotfolder.Deps{
			DB: sys.db, Engine: sys.engine, Assets: sys.assets, Keys: sys.keys, Logger: log,
		})
		if err != nil {
			return nil, err
		}
		sys.sup.Add("hotfolders", sys.hot)
	}
	return sys, nil
}

func (s *system) close() {
	if s.keys != nil {
		if err := s.keys.Flush(); err != nil {
			s.log.Warn("flush key use times", "err", err)
		}
	}
	if s.db != nil {
		s.db.Close()
	}
}
