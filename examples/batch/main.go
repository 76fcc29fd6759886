// Command batch sends a folder of exposure brackets to a running Porchlight as one
// batch and downloads the finished photos.
//
// Each subfolder of FOLDER is one scene (its images are the brackets, 1 to 5); when
// FOLDER has no subfolders with images, its own images form the scenes, -per-scene
// files at a time in name order (all of them, up to 5, by default).
//
//	export PORCHLIGHT_API_KEY=sk-...           # porchlight keys create --name batch
//	go run ./examples/batch -o finished/ -perspective -tonecraft ~/shoots/12-elm-street
//
// The server is -server (default $PORCHLIGHT_URL, else http://127.0.0.1:8787). Results
// are written as OUT/<scene>.<ext>; the program exits 1 when a scene failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/localapi/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "batch:", err)
		os.Exit(1)
	}
}

// contentTypes maps file extensions to the content types the server accepts.
var contentTypes = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp",
	".tif": "image/tiff", ".tiff": "image/tiff", ".heic": "image/heic", ".heif": "image/heif",
	".dng": "image/x-adobe-dng", ".cr2": "image/x-canon-cr2", ".cr3": "image/x-canon-cr3",
	".nef": "image/x-nikon-nef", ".arw": "image/x-sony-arw", ".raf": "image/x-fuji-raf",
	".orf": "image/x-olympus-orf", ".rw2": "image/x-panasonic-rw2",
}

// extensions of the delivered formats.
var extensions = map[string]string{"jpeg": ".jpg", "png": ".png", "webp": ".webp"}

// scene is one set of brackets on disk.
type scene struct {
	name  string
	files []string
}

type flags struct {
	server, key, out, name string
	perScene               int
	perspective, tonecraft bool
	sky, privacy           bool
	format                 string
	quality                int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f flags
	fs.StringVar(&f.server, "server", envOr("PORCHLIGHT_URL", "http://127.0.0.1:8787"), "Porchlight's address")
	fs.StringVar(&f.key, "key", os.Getenv("PORCHLIGHT_API_KEY"), "API key (default $PORCHLIGHT_API_KEY)")
	fs.StringVar(&f.out, "o", "", "folder for the finished photos (required)")
	fs.StringVar(&f.name, "name", "", "batch name (default: the folder's name)")
	fs.IntVar(&f.perScene, "per-scene", 0, "brackets per scene in a folder without subfolders (default: all, up to 5)")
	fs.BoolVar(&f.perspective, "perspective", false, "straighten verticals")
	fs.BoolVar(&f.tonecraft, "tonecraft", false, "apply the signature tone look")
	fs.BoolVar(&f.sky, "sky", false, "replace the sky")
	fs.BoolVar(&f.privacy, "privacy", false, "blur faces and licence plates")
	fs.StringVar(&f.format, "format", "jpeg", "jpeg, png or webp")
	fs.IntVar(&f.quality, "quality", 0, "1 to 100 (default: the server's, 92)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: batch [flags] -o OUT FOLDER")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || f.out == "" {
		fs.Usage()
		return errors.New("give one FOLDER and -o OUT")
	}
	if f.key == "" {
		return errors.New("no API key: set PORCHLIGHT_API_KEY or pass -key (create one with `porchlight keys create --name batch`)")
	}
	ext, ok := extensions[f.format]
	if !ok {
		return fmt.Errorf("-format %q: use jpeg, png or webp", f.format)
	}
	folder := fs.Arg(0)
	scenes, err := findScenes(folder, f.perScene)
	if err != nil {
		return err
	}
	if f.name == "" {
		f.name = filepath.Base(filepath.Clean(folder))
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}

	c, err := client.New(f.server, f.key)
	if err != nil {
		return err
	}
	if err := c.Health(ctx); err != nil {
		return fmt.Errorf("no Porchlight at %s (start it with `porchlight serve`): %w", f.server, err)
	}

	// Upload every bracket (a few at a time), keeping each scene's order.
	total := 0
	for _, s := range scenes {
		total += len(s.files)
	}
	fmt.Fprintf(stdout, "uploading %d files of %d scenes to %s\n", total, len(scenes), f.server)
	ids, err := uploadAll(ctx, c, scenes)
	if err != nil {
		return err
	}

	req := client.BatchRequest{Name: f.name, Defaults: f.options()}
	for i := range scenes {
		req.Scenes = append(req.Scenes, client.Scene{Inputs: ids[i]})
	}
	agg, err := c.SubmitBatch(ctx, req, "")
	if err != nil {
		return fmt.Errorf("submit the batch: %w", err)
	}
	fmt.Fprintf(stdout, "batch %s: %d scenes submitted\n", agg.BatchID, agg.Total)

	batchID := agg.BatchID
	last := ""
	agg, err = c.WaitBatch(ctx, batchID, func(a core.BatchAggregate) {
		line := fmt.Sprintf("  %d completed, %d failed, %d running, %d pending", a.Completed, a.Failed, a.Running, a.Pending)
		if line != last {
			fmt.Fprintln(stdout, line)
			last = line
		}
	})
	if err != nil {
		return fmt.Errorf("follow batch %s: %w", batchID, err)
	}
	if len(agg.Orders) != len(scenes) {
		if agg, err = c.Batch(ctx, batchID); err != nil {
			return err
		}
	}

	failed := 0
	for i, o := range agg.Orders {
		idx := i
		if o.SceneIndex != nil {
			idx = *o.SceneIndex
		}
		name := fmt.Sprintf("scene-%d", idx+1)
		if idx >= 0 && idx < len(scenes) {
			name = scenes[idx].name
		}
		if o.Status != core.OrderCompleted {
			failed++
			fmt.Fprintf(stdout, "%-24s %s: %s\n", name, o.Status, o.Error)
			continue
		}
		dst := filepath.Join(f.out, name+ext)
		if err := download(ctx, c, o.OutputAssetID, dst); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-24s completed -> %s\n", name, dst)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d scenes did not complete", failed, len(agg.Orders))
	}
	return nil
}

func (f flags) options() core.Options {
	o := core.Options{Format: &f.format}
	if f.perspective {
		o.Perspective = &f.perspective
	}
	if f.tonecraft {
		o.Tonecraft = &f.tonecraft
	}
	if f.sky {
		o.Sky = &f.sky
	}
	if f.privacy {
		o.Privacy = &f.privacy
	}
	if f.quality != 0 {
		o.Quality = &f.quality
	}
	return o
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// images lists the image files directly in dir, in name order.
func images(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
			if _, ok := contentTypes[strings.ToLower(filepath.Ext(e.Name()))]; ok && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// findScenes reads the folder's layout: one scene per subfolder, else groups of the
// folder's own images.
func findScenes(folder string, perScene int) ([]scene, error) {
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil, err
	}
	var scenes []scene
	for _, e := range entries {
		sub := filepath.Join(folder, e.Name())
		if st, err := os.Stat(sub); err != nil || !st.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		files, err := images(sub)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			continue
		}
		if len(files) > 5 {
			return nil, fmt.Errorf("%s holds %d images; a scene has 1 to 5 brackets", sub, len(files))
		}
		scenes = append(scenes, scene{name: e.Name(), files: files})
	}
	if len(scenes) > 0 {
		return scenes, nil
	}
	files, err := images(folder)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no images (JPEG, PNG, WebP, TIFF, HEIC or camera RAW)", folder)
	}
	if perScene == 0 {
		perScene = len(files)
	}
	if perScene < 1 || perScene > 5 {
		return nil, fmt.Errorf("%d brackets per scene: a scene has 1 to 5 (use -per-scene or one subfolder per scene)", perScene)
	}
	if len(files)%perScene != 0 {
		return nil, fmt.Errorf("%d images do not split into scenes of %d", len(files), perScene)
	}
	for i := 0; i < len(files); i += perScene {
		stem := strings.TrimSuffix(filepath.Base(files[i]), filepath.Ext(files[i]))
		scenes = append(scenes, scene{name: stem, files: files[i : i+perScene]})
	}
	return scenes, nil
}

// uploadAll uploads the scenes' files with four uploads at a time and returns the
// asset ids per scene, in file order.
func uploadAll(ctx context.Context, c *client.Client, scenes []scene) ([][]string, error) {
	ids := make([][]string, len(scenes))
	for i, s := range scenes {
		ids[i] = make([]string, len(s.files))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	slots := make(chan struct{}, 4)
	for i, s := range scenes {
		for j, file := range s.files {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				id, err := upload(ctx, c, file)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				ids[i][j] = id
			}()
		}
	}
	wg.Wait()
	return ids, firstErr
}

func upload(ctx context.Context, c *client.Client, file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	a, err := c.Upload(ctx, filepath.Base(file), contentTypes[strings.ToLower(filepath.Ext(file))], data)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", file, err)
	}
	return a.AssetID, nil
}

// download writes the asset to dst through a temporary file, synced and renamed.
func download(ctx context.Context, c *client.Client, id, dst string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = c.Download(ctx, id, tmp); err != nil {
		return fmt.Errorf("download %s: %w", dst, err)
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
