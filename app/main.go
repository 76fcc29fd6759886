// Package app is Porchlight's composition root: it reads the configuration, builds the
// engine and its front doors (window, hot folders, /v1 API), supervises every
// long-lived part and implements the command line.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags.
var Version = "0.1.0-dev"

// Main runs the command line and returns the exit status.
func Main(args []string) int {
	root := newRootCommand(os.Stdout, os.Stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "porchlight:", ee.msg)
			}
			return ee.code
		}
		fmt.Fprintln(os.Stderr, "porchlight:", err)
		return 1
	}
	return 0
}

// exitError ends the program with a given status.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

type globalFlags struct {
	config string
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	var g globalFlags
	root := &cobra.Command{
		Use:           "porchlight",
		Short:         "Edit real-estate listing photos: HDR merge, perspective, tone, sky, privacy",
		Long:          "Porchlight turns exposure brackets into finished listing photos on your own machine.\nWith no command it opens the window.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWindow(cmd, &g)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "config file (default $XDG_CONFIG_HOME/porchlight/config.yaml)")
	pf.String("data-dir", "", "where the database and photos live (PORCHLIGHT_DATA_DIR)")
	pf.String("log-level", "", "debug, info, warn or error (PORCHLIGHT_LOG_LEVEL)")

	root.AddCommand(newServeCommand(&g), newProcessCommand(&g), newExportCommand(&g), newVersionCommand(), newKeysCommand(&g), newDoctorCommand(&g))
	return root
}

// load reads the configuration with the command's flags applied.
func load(cmd *cobra.Command, g *globalFlags) (*Config, error) {
	c, _, err := LoadConfig(g.config, cmd.Flags())
	return c, err
}

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// signalContext ends on SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
