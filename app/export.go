package app

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
)

// newExportCommand repackages a finished photo into another format or size, as the
// API's exports do (no editing runs).
func newExportCommand(g *globalFlags) *cobra.Command {
	var opt core.ExportOptions
	var out string
	cmd := &cobra.Command{
		Use:   "export [--format webp] [--quality 92] [--max-edge 2048] -o OUT FILE",
		Short: "Repackage a photo into another format or size (no editing)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return exitError{code: 2, msg: "-o OUT is required"}
			}
			if opt.Format == "" {
				opt.Format = formatFromExt(out)
			}
			if _, err := assets.NormalizeExport(opt); err != nil {
				return exitError{code: 2, msg: flagError(err)}
			}
			cfg, err := load(cmd, g)
			if err != nil {
				return err
			}
			start := time.Now()
			in, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			st, err := in.Stat()
			if err != nil {
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".porchlight-*.tmp")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			w, h, err := assets.Repackage(in, st.Size(), opt, cfg.Metadata.KeepGPS, tmp)
			if err == nil {
				err = tmp.Sync()
			}
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%dx%d) in %.2fs\n", out, w, h, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "where to write the result (required)")
	f.StringVar(&opt.Format, "format", "", "jpeg, png or webp (default: from the output's extension)")
	f.IntVar(&opt.Quality, "quality", 92, "JPEG/WebP quality, 1 to 100")
	f.IntVar(&opt.MaxEdge, "max-edge", 0, "longest edge in pixels, 16 to 10000; never enlarges (default: keep)")
	return cmd
}
