package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/porchlight/porchlight/engine/grouping"
)

// folderChooser is a system file chooser that picks several folders at once: the
// one the desktop uses looks and behaves as the photographer expects (bookmarks,
// mounted cards), which Fyne's own dialog does not.
type folderChooser struct {
	name string
	argv []string
	// multi: the chooser returns several folders, one per line.
	multi bool
}

// systemFolderChooser returns the chooser found on the PATH (zenity for GNOME-like
// desktops, kdialog for KDE), or false where there is none; lookPath is
// exec.LookPath outside tests.
func systemFolderChooser(lookPath func(string) (string, error)) (folderChooser, bool) {
	if p, err := lookPath("zenity"); err == nil {
		return folderChooser{name: "zenity", multi: true, argv: []string{p, "--file-selection", "--directory",
			"--multiple", "--separator=\n", "--title=Import a shoot: choose the card or folders"}}, true
	}
	if p, err := lookPath("kdialog"); err == nil {
		return folderChooser{name: "kdialog", argv: []string{p, "--getexistingdirectory", homeDir(),
			"--title", "Import a shoot: choose the card or folder"}}, true
	}
	return folderChooser{}, false
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

// run shows the chooser and returns the folders picked; none when the photographer
// cancelled (both choosers exit 1 then).
func (c folderChooser) run(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			dirs = append(dirs, line)
		}
	}
	return dirs, nil
}

// importShoot asks for a card or folders and imports every photo under them.
func (w *Window) importShoot() {
	if c, ok := systemFolderChooser(exec.LookPath); ok {
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			dirs, err := c.run(w.ctx)
			w.do(func() {
				switch {
				case err != nil:
					// The chooser is broken here; Fyne's own dialog still works.
					w.setStatus("The system's file chooser failed (" + err.Error() + "); using the built-in one.")
					w.importWithFyneDialog()
				case len(dirs) > 0:
					w.importTree(dirs, nil)
				}
			})
		}()
		return
	}
	w.importWithFyneDialog()
}

func (w *Window) importWithFyneDialog() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			w.showError(err)
			return
		}
		if u != nil {
			w.importTree([]string{u.Path()}, nil)
		}
	}, w.win)
	d.Resize(fyne.NewSize(820, 560))
	d.Show()
}

// photoFolders lists the folders under roots (roots included) that hold photos, each
// with its photos, in walking order. Hidden folders are skipped, as grouping does.
func photoFolders(ctx context.Context, roots []string) ([][]string, error) {
	var out [][]string
	seen := map[string]bool{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !d.IsDir() {
				return nil
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if seen[p] {
				return filepath.SkipDir
			}
			seen[p] = true
			entries, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			var files []string
			for _, e := range entries {
				if !e.IsDir() && grouping.IsPhotoName(e.Name()) {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			if len(files) > 0 {
				slices.Sort(files)
				out = append(out, files)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// importTree imports every photo under roots, a folder at a time, so scenes and
// their thumbnails appear while the rest of a card is still being read. done (may
// be nil) gets the ids of every scene added, on the UI goroutine.
func (w *Window) importTree(roots []string, done func(ids []int, err error)) {
	w.busy.Add(1)
	w.setActivity("Looking for photos in " + describePaths(roots) + "…")
	go func() {
		defer w.busy.Done()
		folders, err := photoFolders(w.ctx, roots)
		if err == nil && len(folders) == 0 {
			err = fmt.Errorf("%w under %s", grouping.ErrNoPhotos, describePaths(roots))
		}
		if err != nil {
			w.do(func() {
				w.setActivity("")
				w.showError(fmt.Errorf("nothing to import: %w", err))
				if done != nil {
					done(nil, err)
				}
			})
			return
		}
		total := 0
		for _, f := range folders {
			total += len(f)
		}
		var all []int
		read := 0
		for i, files := range folders {
			added := make(chan []int, 1)
			msg := fmt.Sprintf("Importing %s: folder %d of %d, %d of %d photos…",
				describePaths(roots), i+1, len(folders), read, total)
			w.do(func() {
				w.setActivity(msg)
				w.addPaths(files, func(ids []int, err error) { added <- ids })
			})
			select {
			case ids := <-added:
				all = append(all, ids...)
			case <-w.ctx.Done():
				return
			}
			read += len(files)
		}
		w.do(func() {
			w.setActivity("")
			w.setStatus(fmt.Sprintf("Imported %d photos from %d %s as %d %s.", total, len(folders),
				plural(len(folders), "folder", "folders"), len(all), plural(len(all), "scene", "scenes")))
			if done != nil {
				done(all, nil)
			}
		})
	}()
}
