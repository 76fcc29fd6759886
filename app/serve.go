package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newServeCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run headless: the engine, hot folders and the /v1 API",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := load(cmd, g)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			log := newLogger(cfg.LogLevel, stderr)
			ctx, stop := signalContext()
			defer stop()
			sys, err := buildSystem(cfg, log, buildOptions{
				api: true,
				onListening: func(addr string) {
					// Said in the data dir first, so whoever reads the line can ask doctor.
					if err := announceServing(cfg.DataDir, "http://"+addr); err != nil {
						log.Warn("write the serving file", "err", err)
					}
					fmt.Fprintf(stderr, "listening on http://%s\n", addr)
				},
			})
			if err != nil {
				return err
			}
			defer sys.close()
			defer withdrawServing(cfg.DataDir)
			err = sys.sup.Serve(ctx)
			if errors.Is(err, context.Canceled) {
				log.Info("stopped")
				return nil
			}
			return err
		},
	}
	cmd.Flags().String("listen", "", "API listen address (PORCHLIGHT_LISTEN, default 127.0.0.1:8787)")
	return cmd
}
