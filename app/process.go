package app

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// newProcessCommand runs one order on local files, without a server or a database:
// the same pipeline the engine runs, reading the files in place and writing -o.
func newProcessCommand(g *globalFlags) *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "process [order flags] -o OUT FILE...",
		Short: "Run one order on local files and write the result",
		Long: "Runs one order (1 to 5 brackets of one scene) through the pipeline and writes the result.\n" +
			"Order options are flags named after the API's options with '_' written '-',\n" +
			"e.g. --perspective --tonecraft --tonecraft-profile bright_airy --sky --sky-style clear.",
		Args: cobra.RangeArgs(1, catalog.MaxInputs),
		RunE: func(cmd *cobra.Command, files []string) error {
			if out == "" {
				return exitError{code: 2, msg: "-o OUT is required"}
			}
			cfg, err := load(cmd, g)
			if err != nil {
				return err
			}
			values := map[string]string{}
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if _, ok := catalog.LookupParam(strings.ReplaceAll(f.Name, "-", "_")); ok {
					values[f.Name] = f.Value.String()
				}
			})
			return runProcess(cmd.Context(), processRequest{
				files:  files,
				values: values,
				out:    out,
				cfg:    cfg,
				stderr: cmd.ErrOrStderr(),
				quiet:  quiet,
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "where to write the result (required)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress line")
	for _, p := range catalog.Params() {
		name := strings.ReplaceAll(p.Name, "_", "-")
		usage := p.Type
		if len(p.Enum) > 0 {
			usage = strings.Join(p.Enum, ", ")
		}
		if p.Name == "mask" {
			usage = "PNG mask file (white marks what to erase)"
		}
		if p.Type == catalog.TypeBoolean {
			f.Bool(name, false, "order option "+p.Name)
			continue
		}
		f.String(name, "", "order option "+p.Name+": "+usage)
	}
	return cmd
}

type processRequest struct {
	files  []string
	values map[string]string // order options as given on the command line
	out    string
	cfg    *Config
	stderr io.Writer
	quiet  bool
}

func runProcess(ctx context.Context, req processRequest) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sctx, sstop := signalContext()
	defer sstop()
	go func() {
		select {
		case <-sctx.Done():
			stop()
		case <-ctx.Done():
		}
	}()

	local := &localFiles{paths: map[string]string{}}
	// The mask option names a file here; the pipeline knows assets by id, so every
	// file gets one.
	if m, ok := req.values["mask"]; ok {
		id := uuid.NewString()
		local.paths[id] = m
		req.values["mask"] = id
	}
	opts, err := catalog.DecodeStrings(req.values)
	if err != nil {
		return exitError{code: 2, msg: flagError(err)}
	}
	resolved, err := catalog.ResolveScene(opts, false, len(req.files))
	if err != nil {
		return exitError{code: 2, msg: flagError(err)}
	}
	if req.values["format"] == "" {
		// Without --format, the output's extension chooses.
		if f := formatFromExt(req.out); f != "" {
			resolved.Format = f
		}
	}

	ids := make([]string, len(req.files))
	sizes := make([]image.Point, len(req.files))
	ins := make([]pipeline.Input, len(req.files))
	for i, p := range req.files {
		info, err := probeFile(p)
		if err != nil {
			return exitError{code: 1, msg: fmt.Sprintf("%s: %v", p, err)}
		}
		ids[i] = uuid.NewString()
		local.paths[ids[i]] = p
		sizes[i] = image.Pt(info.Width, info.Height)
		var n int64
		if st, err := os.Stat(p); err == nil {
			n = st.Size()
		}
		ins[i] = pipeline.InputOf(info.Width, info.Height, n, info.Format, &info)
	}
	local.out = req.out

	pipe := pipeline.New(pipeline.Config{
		MaxEdge:   req.cfg.Engine.ResolutionCap,
		MaxPixels: req.cfg.Limits.MaxMegapixels * 1_000_000,
		KeepGPS:   req.cfg.Metadata.KeepGPS,
		Logger:    newLogger("error", req.stderr),
	})
	// Generative features run through the model backends of the config file here too.
	if _, err := registerBackends(req.cfg, pipe, newLogger("error", req.stderr)); err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	// One order is all this process does, and its images are pointer-free, so
	// collections are cheap: collecting at a quarter's growth, and at the latest at
	// the order's live estimate (the pipeline's estimate less its allowance for
	// garbage), reclaims replaced images and decoder buffers before the heap grows
	// past the peak the order needs anyway.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	if est := pipe.EstimateInputs(resolved, ins); est > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(membudget.Live(est), 256<<20)))
	}
	progress := newProgressLine(req.stderr, req.quiet)
	start := time.Now()
	res, err := pipe.Run(ctx, pipeline.Request{
		OrderID: uuid.NewString(),
		Owner:   "local",
		Inputs:  ids,
		Options: resolved,
		Sizes:   sizes,
		Assets:  local,
	}, progress.update)
	progress.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitError{code: 130, msg: "cancelled"}
		}
		msg := err.Error()
		for id, path := range local.paths {
			// The pipeline names inputs by id; here they are files.
			msg = strings.ReplaceAll(msg, id, path)
		}
		return exitError{code: 1, msg: "order failed: " + msg}
	}
	for _, n := range res.Notes {
		fmt.Fprintln(req.stderr, "note:", n)
	}
	if !req.quiet {
		fmt.Fprintf(req.stderr, "wrote %s (%dx%d) in %.1fs\n", req.out, res.Output.Width, res.Output.Height, time.Since(start).Seconds())
	}
	return nil
}

func flagError(err error) string {
	var e *core.Error
	if errors.As(err, &e) && e.Field != "" {
		name := "--" + strings.ReplaceAll(e.Field, "_", "-")
		if e.Field == "inputs" {
			name = "FILE arguments"
		}
		return name + ": " + e.Reason
	}
	return err.Error()
}

func formatFromExt(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jpg", ".jpeg":
		return "jpeg"
	case ".png":
		return "png"
	case ".webp":
		return "webp"
	}
	return ""
}

func probeFile(path string) (codec.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return codec.Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return codec.Info{}, err
	}
	return codec.Probe(f, st.Size())
}

// localFiles serves the pipeline's asset reads from files and writes the output to
// the -o path (temp name, sync, rename).
type localFiles struct {
	paths map[string]string
	out   string
}

type localBlob struct {
	*os.File
	size int64
}

func (b localBlob) Size() int64 { return b.size }

func (l *localFiles) OpenAsset(id string) (pipeline.Blob, error) {
	p, ok := l.paths[id]
	if !ok {
		return nil, fmt.Errorf("unknown input %s", id)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return localBlob{f, st.Size()}, nil
}

func (l *localFiles) CreateOutput(owner, orderID, format string, write func(io.Writer) error) (core.Asset, error) {
	dir := filepath.Dir(l.out)
	tmp, err := os.CreateTemp(dir, ".porchlight-*.tmp")
	if err != nil {
		return core.Asset{}, err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return core.Asset{}, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return core.Asset{}, err
	}
	if err := tmp.Close(); err != nil {
		return core.Asset{}, err
	}
	if err := os.Rename(tmp.Name(), l.out); err != nil {
		return core.Asset{}, err
	}
	a := core.Asset{ID: orderID, Kind: core.AssetOutput, Filename: filepath.Base(l.out), Format: format, Status: core.AssetReady}
	if info, err := probeFile(l.out); err == nil {
		a.Width, a.Height = info.Width, info.Height
	}
	return a, nil
}

// progressLine prints one updating line on a terminal, and plain lines otherwise.
type progressLine struct {
	w     io.Writer
	quiet bool
	tty   bool
	last  string
}

func newProgressLine(w io.Writer, quiet bool) *progressLine {
	p := &progressLine{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progressLine) update(pr pipeline.Progress) {
	if p.quiet {
		return
	}
	line := fmt.Sprintf("%3.0f%%  %s", pr.Percent, pr.Stage)
	if pr.ETA >= time.Second {
		line += fmt.Sprintf("  (about %ds left)", int(pr.ETA.Seconds()+0.5))
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	if pr.Stage != p.last {
		fmt.Fprintln(p.w, line)
	}
	p.last = pr.Stage
}

func (p *progressLine) done() {
	if p.tty && !p.quiet {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
