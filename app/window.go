package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/ui"
)

// runWindow opens the desktop window with the engine, hot folders and (if enabled)
// the API running behind it.
func runWindow(cmd *cobra.Command, g *globalFlags) error {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return exitError{code: 2, msg: "no display found (DISPLAY and WAYLAND_DISPLAY are unset); run `porchlight serve` for the headless service"}
	}
	cfg, err := load(cmd, g)
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel, cmd.ErrOrStderr())
	ctx, stop := signalContext()
	defer stop()
	addr := make(chan string, 1)
	sys, err := buildSystem(cfg, log, buildOptions{
		api:         cfg.API.Enabled,
		onListening: func(a string) { addr <- a },
	})
	if err != nil {
		return err
	}
	defer sys.close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- sys.sup.Serve(ctx) }()

	st := ui.Status{DataDir: cfg.DataDir}
	if cfg.API.Enabled {
		select {
		case a := <-addr:
			st.APIAddr = a
		case err := <-served:
			return fmt.Errorf("services stopped before the window opened: %w", err)
		}
	}
	werr := ui.Run(ctx, st)
	cancel()
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return werr
}
