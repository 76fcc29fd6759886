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
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/grouping"
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
		Use:   "process [order flags] -o OUT FILE|FOLDER...",
		Short: "Run one order on local files and write the result",
		Long: fmt.Sprintf("Runs one order (1 to %d brackets of one scene) through the pipeline and writes the result.\n", engine.MaxBrackets) +
			"A folder given as an input stands for the photos in it. OUT is a file, or an existing\n" +
			"folder to write the result into (named after the first bracket).\n" +
			"Order options are flags named after the API's options with '_' written '-',\n" +
			"e.g. --perspective --tonecraft --tonecraft-profile bright_airy --sky --sky-style clear.\n" +
			"The server need not be stopped: process reads and writes only the files named.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return exitError{code: 2, msg: "-o OUT is required"}
			}
			files, err := bracketFiles(args)
			if err != nil {
				return err
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
	f.StringVarP(&out, "output", "o", "", "the result's file, or an existing folder to write it into (required)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress line")
	for _, p := range catalog.Params() {
		name := strings.ReplaceAll(p.Name, "_", "-")
		if p.Type == catalog.TypeBoolean {
			f.Bool(name, false, optionUsage(p))
			continue
		}
		f.String(name, "", optionUsage(p))
	}
	return cmd
}

// optionUsage describes an order option for --help from the option table: what it
// does first, then the values it takes, its default and the features it belongs to.
func optionUsage(p catalog.Param) string {
	var b strings.Builder
	b.WriteString(p.Description)
	var values string
	switch {
	case p.Name == "mask":
		values = "the path of a PNG file" // process uploads nothing: it reads the file
	case len(p.Enum) > 0:
		values = "one of " + strings.Join(p.Enum, ", ")
	case p.Type == catalog.TypeBoolean:
		values = "true or false"
	case p.Min != nil && p.Max != nil && p.Type == catalog.TypeInteger:
		values = fmt.Sprintf("an integer from %g to %g", *p.Min, *p.Max)
	case p.Min != nil && p.Max != nil:
		values = fmt.Sprintf("a number from %g to %g", *p.Min, *p.Max)
	case p.Type == catalog.TypeArray:
		values = "a comma-separated list"
	case p.MaxLength > 0:
		values = fmt.Sprintf("text of up to %d characters", p.MaxLength)
	default:
		values = "a " + p.Type
	}
	if keys := presetKeys(p.Name); len(keys) > 0 {
		values = "a preset: one of " + strings.Join(keys, ", ")
	}
	fmt.Fprintf(&b, " Takes %s", values)
	switch d := p.Default.(type) {
	case nil:
	case []string:
		fmt.Fprintf(&b, "; default %s", strings.Join(d, ","))
	default:
		fmt.Fprintf(&b, "; default %v", d)
	}
	b.WriteString(".")
	if len(p.Features) > 0 {
		fmt.Fprintf(&b, " Features: %s.", strings.Join(p.Features, ", "))
	}
	return b.String()
}

// presetKeys lists the presets a preset-naming option takes.
func presetKeys(option string) []string {
	feature := map[string]string{"tonecraft_profile": "tonecraft", "staging_preset": "indoor_staging"}[option]
	if feature == "" {
		return nil
	}
	list, err := catalog.Presets(feature)
	if err != nil {
		return nil
	}
	keys := make([]string, 0, len(list))
	for _, p := range list {
		keys = append(keys, p.Key)
	}
	return keys
}

// bracketFiles turns the command line's inputs into the brackets of one scene: a
// folder stands for the photos in it (in name order). At most engine.MaxBrackets.
func bracketFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, exitError{code: 1, msg: fmt.Sprintf("%s: %v", a, err)}
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		in, err := grouping.Expand([]string{a})
		if err != nil {
			return nil, exitError{code: 1, msg: fmt.Sprintf("%s: %v", a, err)}
		}
		if len(in) == 0 {
			return nil, exitError{code: 2, msg: fmt.Sprintf("%s: the folder has no photos", a)}
		}
		files = append(files, in...)
	}
	if len(files) > engine.MaxBrackets {
		return nil, exitError{code: 2, msg: fmt.Sprintf("FILE arguments: a scene takes 1 to %d brackets, got %d photos", engine.MaxBrackets, len(files))}
	}
	return files, nil
}

// outputPath is where the result goes: into out when it is an existing folder
// (named after the first bracket, with the format's extension), else out itself,
// whose folder must exist. Checked before the merge, which can take minutes.
func outputPath(out, first, format string) (string, error) {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		base := strings.TrimSuffix(filepath.Base(first), filepath.Ext(first))
		return filepath.Join(out, base+catalog.FormatExt(format)), nil
	}
	if strings.HasSuffix(out, string(filepath.Separator)) || strings.HasSuffix(out, "/") {
		return "", exitError{code: 2, msg: fmt.Sprintf("-o: the folder %s does not exist", out)}
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	if err != nil {
		return "", exitError{code: 2, msg: fmt.Sprintf("-o: the folder %s does not exist", dir)}
	}
	if !st.IsDir() {
		return "", exitError{code: 2, msg: fmt.Sprintf("-o: %s is not a folder", dir)}
	}
	return out, nil
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
	resolved, err := engine.ResolveBrackets(opts, false, len(req.files))
	if err != nil {
		return exitError{code: 2, msg: flagError(err)}
	}
	if req.values["format"] == "" {
		// Without --format, the output's extension chooses.
		if f := formatFromExt(req.out); f != "" {
			resolved.Format = f
		}
	}
	if req.out, err = outputPath(req.out, req.files[0], resolved.Format); err != nil {
		return err
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
	// The mask is not read for this: a limit is no reservation, and the eraser's
	// bound for a mask over the whole photo spares a decode of it.
	if est := pipe.EstimateInputs(resolved, ins, pipeline.MaskArea{}); est > 0 {
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
