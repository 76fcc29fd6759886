package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/ui"
)

// runWindow opens the desktop window with the engine, hot folders and (if enabled)
// the API running behind it.
func runWindow(cmd *cobra.Command, g *globalFlags) error {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return exitError{code: 2, msg: "no display found (DISPLAY and WAYLAND_DISPLAY are unset); run `porchlight serve` for the headless service"}
	}
	cfg, v, err := LoadConfig(g.config, cmd.Flags())
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel, cmd.ErrOrStderr())
	ctx, stop := signalContext()
	defer stop()
	addr := make(chan string, 1)
	sys, err := buildSystem(cfg, log, buildOptions{
		api: cfg.API.Enabled, hotAlways: true, previews: true,
		onListening: func(a string) {
			if err := announceServing(cfg.DataDir, "http://"+a); err != nil {
				log.Warn("write the serving file", "err", err)
			}
			addr <- a
		},
	})
	if err != nil {
		return err
	}
	defer sys.close()
	defer withdrawServing(cfg.DataDir)
	if !cfg.API.Enabled {
		// The window holds the database without an address to give.
		if err := announceServing(cfg.DataDir, ""); err != nil {
			log.Warn("write the serving file", "err", err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- sys.sup.Serve(ctx) }()

	file := g.config
	if file == "" {
		file = DefaultConfigFile()
	}
	deps := ui.Deps{
		Engine:    sys.engine,
		Assets:    sys.assets,
		Keys:      sys.keys,
		Available: sys.engine.Pipeline().FeatureAvailable,
		Config:    ui.NewConfig(v, file),
		DataDir:   cfg.DataDir,
		// The pipeline keeps the preview bases there (buildOptions.previews).
		PreviewDir: previewDir(cfg.DataDir),
		// The window's shoots live in the engine's database, beside its orders.
		Shoots: store.NewShoots(sys.db),
	}
	if sys.hot != nil {
		deps.Hot = sys.hot
	}
	if cfg.API.Enabled {
		select {
		case a := <-addr:
			deps.APIAddr = a
		case err := <-served:
			return fmt.Errorf("services stopped before the window opened: %w", err)
		}
	}
	werr := ui.Run(ctx, deps)
	cancel()
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return werr
}
