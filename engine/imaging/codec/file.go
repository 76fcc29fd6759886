package codec

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/porchlight/porchlight/engine/imaging"
)

// WriteFile encodes img to path atomically: it writes a temporary file in the same
// directory, syncs it, then renames it over path, so readers never see a partial file.
func WriteFile(path string, img *imaging.Image, opt EncodeOptions) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err = Encode(w, img, opt); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// DecodeFile opens path and decodes it (see Decode).
func DecodeFile(path string, opt DecodeOptions) (*imaging.Image, Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, Meta{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return Decode(f, st.Size(), opt)
}
