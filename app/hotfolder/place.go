package hotfolder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// Files appear in the output, done and errors folders whole and never replace
// anything: bytes go to a hidden temporary name first, are synced, and are then
// hard-linked to the final name, which fails rather than overwrite an existing
// file. File systems without hard links (FAT, some network shares) get a rename
// after checking that the name is free. Temporary names are fixed per scene, so a
// restart finds what an interrupted write left behind.

// tempName is the temporary name of what of scene id: hidden, with a .tmp suffix,
// so downstream watchers (and hot folders) ignore it.
func tempName(id, what string) string { return ".porchlight-" + id + "-" + what + ".tmp" }

// place writes a new file in dir named stem+ext, or stem-2+ext, stem-3+ext... when
// taken. intent is called with each name before it is tried, so the caller can
// journal it; write fills the file. It returns the name used.
func place(dir, stem, ext, temp string, intent func(name string) error, write func(io.Writer) error) (string, error) {
	tmp := filepath.Join(dir, temp)
	if err := writeTemp(tmp, write); err != nil {
		return "", err
	}
	name, err := link(dir, stem, ext, tmp, intent, nil)
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return name, nil
}

// link gives the synced temporary file tmp its final name in dir. verify, when
// given, checks what the name then holds (a hard link is made to whatever tmp is
// at that moment) before tmp is removed; a refused file is unlinked again.
func link(dir, stem, ext, tmp string, intent func(name string) error, verify func(os.FileInfo) error) (string, error) {
	for n := 1; n < 10000; n++ {
		name := candidate(stem, ext, n)
		final := filepath.Join(dir, name)
		if _, err := os.Lstat(final); err == nil {
			continue
		}
		if intent != nil {
			if err := intent(name); err != nil {
				return "", err
			}
		}
		err := os.Link(tmp, final)
		switch {
		case err == nil:
			if verify != nil {
				fi, err := os.Lstat(final)
				if err == nil {
					err = verify(fi)
				}
				if err != nil {
					os.Remove(final)
					return "", err
				}
			}
			os.Remove(tmp)
			syncDir(dir)
			return name, nil
		case errors.Is(err, os.ErrExist):
			continue // taken since the check
		case linkUnsupported(err):
			if _, err := os.Lstat(final); err == nil {
				continue
			}
			if verify != nil {
				// No hard links (FAT, some shares; no symbolic links there either):
				// the name is checked just before the rename.
				fi, err := os.Lstat(tmp)
				if err == nil {
					err = verify(fi)
				}
				if err != nil {
					return "", err
				}
			}
			if err := os.Rename(tmp, final); err != nil {
				return "", fmt.Errorf("rename into %s: %w", final, err)
			}
			syncDir(dir)
			return name, nil
		default:
			return "", fmt.Errorf("link %s: %w", final, err)
		}
	}
	return "", fmt.Errorf("no free name for %s%s in %s", stem, ext, dir)
}

// placed reports whether an interrupted place of name already finished: the final
// file exists and is the temporary file (linked) or the temporary file is gone
// (renamed). The intent is journaled after the temporary file was complete, so a
// missing temporary file means it was renamed into place.
func placed(dir, temp, name string) bool {
	if name == "" {
		return false
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return false
	}
	ti, err := os.Lstat(filepath.Join(dir, temp))
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err == nil && os.SameFile(fi, ti) {
		os.Remove(filepath.Join(dir, temp))
		return true
	}
	return false
}

// writeTemp writes and syncs a file, replacing an earlier partial one.
func writeTemp(p string, write func(io.Writer) error) (err error) {
	os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(p)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", p, err)
	}
	return nil
}

// writeOwned writes a file that belongs to something already placed (a sidecar
// beside its output): temporary name, sync, rename over any earlier copy.
func writeOwned(p string, write func(io.Writer) error) error {
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp")
	if err := writeTemp(tmp, write); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename into %s: %w", p, err)
	}
	syncDir(filepath.Dir(p))
	return nil
}

func writeJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// moveFile moves src to dstDir/rel without replacing anything: the name gets a
// suffix when taken. Across file systems it copies (synced) and then removes src.
// A src already linked into dstDir by an interrupted move is recognised and only
// removed. It moves only a regular file with the identity want (when known): a
// link or another file swapped in at src is refused, and never followed. It
// returns the destination.
func moveFile(src, dstDir, rel string, want journal.FileID) (string, error) {
	dst := filepath.Join(dstDir, filepath.FromSlash(rel))
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	stem, ext := stemOf(dst), filepath.Ext(dst)
	si, err := os.Lstat(src)
	if err != nil {
		return "", err
	}
	verify := func(fi os.FileInfo) error {
		if err := replaced(fi); err != nil {
			return err
		}
		if want.Known() && identity(fi) != want {
			return errReplaced
		}
		return nil
	}
	if err := verify(si); err != nil {
		return "", err
	}
	if links(si) > 1 {
		for n := 1; n < 10000; n++ {
			fi, err := os.Lstat(filepath.Join(dir, candidate(stem, ext, n)))
			if err != nil {
				break
			}
			if os.SameFile(si, fi) {
				if err := os.Remove(src); err != nil {
					return "", fmt.Errorf("remove %s: %w", src, err)
				}
				syncDir(filepath.Dir(src))
				return filepath.Join(dir, candidate(stem, ext, n)), nil
			}
		}
	}
	name, err := link(dir, stem, ext, src, nil, verify)
	if err == nil {
		syncDir(filepath.Dir(src))
		return filepath.Join(dir, name), nil
	}
	if !crossDevice(err) {
		return "", err
	}
	// Another file system: copy to a temporary name there, then place it.
	tmp := filepath.Join(dir, "."+filepath.Base(dst)+".porchlight-move.tmp")
	if err := writeTemp(tmp, func(w io.Writer) error {
		in, _, err := openInput(src, identity(si))
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.Copy(w, in)
		return err
	}); err != nil {
		return "", err
	}
	name, err = link(dir, stem, ext, tmp, nil, nil)
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	if fi, err := os.Lstat(src); err != nil || verify(fi) != nil {
		// Swapped since it was copied: the copy is of the file that was read, and
		// what now has its name is left alone.
		syncDir(filepath.Dir(src))
		return filepath.Join(dir, name), nil
	}
	if err := os.Remove(src); err != nil {
		return "", fmt.Errorf("remove %s after copying it: %w", src, err)
	}
	syncDir(filepath.Dir(src))
	return filepath.Join(dir, name), nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // some file systems refuse; the data itself was synced
		d.Close()
	}
}
