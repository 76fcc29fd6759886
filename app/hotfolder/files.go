package hotfolder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// imageExts are the file name extensions a hot folder takes (those the asset store
// ingests). Everything else in the folder is left alone.
var imageExts = map[string]bool{
	".jpg": true, ".jpeg": true, ".png": true, ".webp": true, ".tif": true, ".tiff": true,
	".heic": true, ".heif": true, ".dng": true, ".cr2": true, ".cr3": true, ".crw": true,
	".nef": true, ".arw": true, ".raf": true, ".orf": true, ".rw2": true,
}

// rawExts are camera RAW extensions: a JPEG with the same name is its twin.
var rawExts = map[string]bool{
	".dng": true, ".cr2": true, ".cr3": true, ".crw": true, ".nef": true, ".arw": true,
	".raf": true, ".orf": true, ".rw2": true,
}

// partialSuffixes mark files that a browser, a copy tool or an editor is still
// writing, or that are not photos at all.
var partialSuffixes = []string{
	".part", ".partial", ".tmp", ".temp", "~", ".crdownload", ".download", ".opdownload",
	".filepart", ".!ut", ".!qb", ".swp", ".lock", ".inprogress",
}

// junkNames are system files that are never photos.
var junkNames = map[string]bool{"thumbs.db": true, ".ds_store": true, "desktop.ini": true, "icon\r": true}

// takeable reports whether a file name can be a finished photo: not hidden (which
// also covers AppleDouble "._x" files and rsync's ".x.XXXXXX" temporaries), not a
// known partial or temporary name, and an image by its extension.
func takeable(name string) bool {
	lower := strings.ToLower(name)
	if name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") || junkNames[lower] {
		return false
	}
	for _, s := range partialSuffixes {
		if strings.HasSuffix(lower, s) {
			return false
		}
	}
	return imageExts[filepath.Ext(lower)]
}

// maxDepth bounds how deep below the input folder files are taken.
const maxDepth = 8

// fileInfo is one candidate file found by a scan.
type fileInfo struct {
	rel     string // relative to the input, with '/' separators
	domain  string // first path element for files in subfolders, "" for loose files
	size    int64
	mtimeNs int64
	id      journal.FileID // as listed, without following a link
}

// listFiles walks the input folder root (already resolved, see ResolveInput) and
// returns the candidate files. Hidden folders, the folders in skip (the done,
// errors and output folders, recognised as files so that a path through a link
// names them too) are not entered. Symbolic links are neither entered nor taken,
// whatever they lead to; they are returned apart (their paths relative to root),
// hidden ones left out, for the log. A missing or unreadable input folder is an
// error (the caller pauses the folder).
func listFiles(root string, skip []os.FileInfo) ([]fileInfo, []string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a folder", root)
	}
	var out []fileInfo
	var links []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			if d != nil && d.IsDir() {
				return filepath.SkipDir // unreadable subfolder: skip it, keep the rest
			}
			return nil
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") || strings.Count(rel, string(filepath.Separator)) >= maxDepth || skipped(d, skip) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && !strings.HasPrefix(name, ".") {
			links = append(links, filepath.ToSlash(rel))
		}
		if !d.Type().IsRegular() || !takeable(name) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		rel = filepath.ToSlash(rel)
		domain := ""
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			domain = rel[:i]
		}
		out = append(out, fileInfo{rel: rel, domain: domain, size: info.Size(), mtimeNs: info.ModTime().UnixNano(), id: identity(info)})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, links, nil
}

// statDirs stats the folders that exist among paths, following links.
func statDirs(paths []string) []os.FileInfo {
	var out []os.FileInfo
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, st)
		}
	}
	return out
}

// skipped reports whether the folder entry d is one of skip.
func skipped(d fs.DirEntry, skip []os.FileInfo) bool {
	info, err := d.Info()
	if err != nil {
		return false
	}
	for _, s := range skip {
		if os.SameFile(info, s) {
			return true
		}
	}
	return false
}

// The checks below read an input file opened by openInput, never its name, so
// that what they judge is what is hashed and imported.

// hashFile returns the sha256 of a file and checks that its size is still the one
// the scan saw.
func hashFile(f *os.File, size int64) (string, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if n != size {
		return "", errChanged
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// errChanged reports a file whose bytes changed after it settled.
var errChanged = errors.New("the file changed while it was read")

// incomplete reports why a file that stopped growing is still not a whole photo,
// from its last bytes: a JPEG ends with its EOI marker (some cameras pad after it,
// so the last 4 kB are searched) and a PNG with its IEND chunk. Other formats are
// trusted to the size and mtime check. "" means it looks whole.
func incomplete(f *os.File, size int64) string {
	ext := strings.ToLower(filepath.Ext(f.Name()))
	if ext != ".jpg" && ext != ".jpeg" && ext != ".png" {
		return ""
	}
	n := min(size, 4096)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return ""
	}
	switch ext {
	case ".png":
		iend := []byte{0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82}
		if !bytes.HasSuffix(tail, iend) {
			return "the PNG has no end chunk yet"
		}
	default:
		if !bytes.Contains(tail, []byte{0xFF, 0xD9}) {
			return "the JPEG has no end marker yet"
		}
	}
	return ""
}

// notPhoto says why a file that nobody is writing to can never become a photo
// ("" when it may be one): its first bytes are those of no format the asset store
// takes. A writer puts the header down first, so this needs no waiting. A file
// too short to tell (an empty one, say) gets the benefit of the doubt here and is
// judged by cutShort once it has stayed so.
func notPhoto(f *os.File, size int64) string {
	if size < minHead {
		return ""
	}
	head := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(head, 0); err != nil {
		return ""
	}
	if codec.Sniff(head) == "" {
		return reasonUnsupported
	}
	return ""
}

// reasonUnsupported is why a file whose content is no format Porchlight reads is
// not taken; its scene fails with core.CodeUnsupportedFormat.
const reasonUnsupported = "not a photo: unsupported format; its content is not JPEG, PNG, WebP, TIFF, HEIC or camera RAW"

// badCode is the error code of a scene failed by a bad file: an unsupported format
// is told apart from a photo that cannot be read (cut short, damaged).
func badCode(reason string) string {
	if reason == reasonUnsupported {
		return core.CodeUnsupportedFormat
	}
	return "input_unreadable"
}

// decodes reports whether a file decodes to its end (at a small scale, which still
// reads all of a JPEG's data). A JPEG may carry more after its end marker (a phone's
// motion photo appends its video), so a marker missing from the tail does not by
// itself make a file cut short.
func decodes(f *os.File, size int64) bool {
	_, _, err := codec.Decode(f, size, codec.DecodeOptions{ScaleToMaxEdge: 64, MaxPixels: -1})
	return err == nil
}

// minHead is the fewest bytes whose format notPhoto judges.
const minHead = 16

// cutShort says why a file that stayed incomplete (see incomplete) or too short to
// judge for the cut-short time is not a photo.
func cutShort(f *os.File, size int64) string {
	if size < minHead {
		return fmt.Sprintf("not a photo: the file holds only %d bytes", size)
	}
	if reason := notPhoto(f, size); reason != "" {
		return reason
	}
	ext := strings.ToUpper(strings.TrimPrefix(filepath.Ext(f.Name()), "."))
	if ext == "JPEG" {
		ext = "JPG"
	}
	return fmt.Sprintf("the %s file is cut short, with no end marker: the copy stopped early or the file is damaged", ext)
}

// twinOf groups files by folder and stem and returns, for each JPEG (or other
// non-RAW) file whose frame also exists as a RAW file, the RAW file's path: the RAW
// holds more of the highlights, so it is the input and the JPEG travels with it.
func twinOf(rels []string) map[string]string {
	raws := map[string]string{}
	for _, r := range rels {
		if rawExts[strings.ToLower(filepath.Ext(r))] {
			raws[twinKey(r)] = r
		}
	}
	out := map[string]string{}
	for _, r := range rels {
		if rawExts[strings.ToLower(filepath.Ext(r))] {
			continue
		}
		if raw, ok := raws[twinKey(r)]; ok {
			out[r] = raw
		}
	}
	return out
}

func twinKey(rel string) string {
	return strings.ToLower(strings.TrimSuffix(rel, filepath.Ext(rel)))
}

// naturalLess compares names with digit runs as numbers ("IMG_9" before "IMG_10"),
// as file browsers sort them.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
