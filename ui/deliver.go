package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// DefaultNaming is the output name template: the scene's name.
const DefaultNaming = "{scene}"

// defaultOutputDir is where finished photos go unless the settings say otherwise:
// $XDG_PICTURES_DIR or ~/Pictures, in a Porchlight folder.
func defaultOutputDir() string {
	if d := os.Getenv("XDG_PICTURES_DIR"); d != "" {
		return filepath.Join(d, "Porchlight")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, "Pictures", "Porchlight")
	}
	return "Porchlight"
}

// nameFields are what a naming template can use.
type nameFields struct {
	Scene string    // the scene's name in the window
	Name  string    // the first bracket's file name without extension
	Batch string    // the batch's name
	Index int       // the scene's number in its batch, from 1
	Date  time.Time // when the scene finished
}

// placeholders lists the template fields, for the settings' help text.
const placeholders = "{scene}, {name}, {batch}, {index}, {date}"

// checkTemplate refuses a template with an unknown placeholder or none at all.
func checkTemplate(t string) error {
	if strings.TrimSpace(t) == "" {
		return errors.New("the naming template is empty")
	}
	rest := t
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("the naming template has an unclosed %q", rest[i:])
		}
		switch rest[i : i+j+1] {
		case "{scene}", "{name}", "{batch}", "{index}", "{date}":
		default:
			return fmt.Errorf("unknown placeholder %s; use %s", rest[i:i+j+1], placeholders)
		}
		rest = rest[i+j+1:]
	}
	if !strings.Contains(t, "{") {
		return fmt.Errorf("the naming template needs a placeholder (%s), or every photo gets the same name", placeholders)
	}
	return nil
}

// outputName expands a naming template into a file name (without directory) with
// extension ext. Characters that cannot be in a file name become "_".
func outputName(tmpl string, f nameFields, ext string) string {
	r := strings.NewReplacer(
		"{scene}", f.Scene,
		"{name}", f.Name,
		"{batch}", f.Batch,
		"{index}", fmt.Sprintf("%03d", f.Index),
		"{date}", f.Date.Format("2006-01-02"),
	)
	name := strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == 0 || unicode.IsControl(c) {
			return '_'
		}
		return c
	}, r.Replace(tmpl))
	name = strings.Trim(strings.TrimSpace(name), ".")
	if name == "" {
		name = "photo"
	}
	return name + ext
}

// writeNew copies r into dir under name, never replacing a file that is there: the
// bytes go to a temporary file that is synced and then linked under the first free
// name ("name", "name (2)", ...). It returns the path written.
func writeNew(dir, name string, r io.Reader) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("output folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".porchlight-*.tmp")
	if err != nil {
		return "", fmt.Errorf("output folder: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; i < 10000; i++ {
		cand := name
		if i > 1 {
			cand = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		dst := filepath.Join(dir, cand)
		// A hard link fails when the name is taken, so no existing file is replaced
		// even when two writers race for one name.
		err := os.Link(tmp.Name(), dst)
		if err == nil {
			return dst, nil
		}
		if errors.Is(err, os.ErrExist) {
			continue
		}
		// File systems without hard links: rename when the name looks free.
		if _, serr := os.Lstat(dst); errors.Is(serr, os.ErrNotExist) {
			if rerr := os.Rename(tmp.Name(), dst); rerr != nil {
				return "", fmt.Errorf("write %s: %w", cand, rerr)
			}
			return dst, nil
		}
	}
	return "", fmt.Errorf("write %s: no free name in %s", name, dir)
}
