package privacy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ModelsEnv names the environment variable that points at a folder of cascade models.
// It is searched first; the folder may hold the files directly or in haarcascades/
// and lbpcascades/ subfolders, as OpenCV installs them.
const ModelsEnv = "PORCHLIGHT_MODELS_DIR"

// systemModels is where Debian's opencv-data package installs the cascades.
const systemModels = "/usr/share/opencv4"

// PackageModels is where Porchlight's own .deb installs the cascades it needs, so an
// installed Porchlight does not depend on opencv-data.
const PackageModels = "/usr/share/porchlight/models"

// ModelDirs returns the folders searched for models, in order: $PORCHLIGHT_MODELS_DIR,
// /usr/share/porchlight/models, /usr/share/opencv4, ../share/porchlight/models from the
// executable's folder (an install under /usr/local or a prefix), then models/ beside
// the executable and the executable's folder.
func ModelDirs() []string {
	var dirs []string
	if d := os.Getenv(ModelsEnv); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, PackageModels, systemModels)
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "..", "share", "porchlight", "models"), filepath.Join(dir, "models"), dir)
	}
	return dirs
}

// FindModel returns the path of a model file such as "haarcascades/x.xml", trying each
// search folder with the relative path and with the bare file name.
func FindModel(rel string) (string, error) {
	dirs := ModelDirs()
	for _, d := range dirs {
		for _, p := range []string{filepath.Join(d, rel), filepath.Join(d, filepath.Base(rel))} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", &MissingModelError{Name: filepath.Base(rel), Dirs: dirs}
}

// MissingModelError reports a model file that is in none of the search folders.
type MissingModelError struct {
	Name string
	Dirs []string
}

func (e *MissingModelError) Error() string {
	return fmt.Sprintf("privacy: model %s not found in %s (install the opencv-data package or set %s)",
		e.Name, strings.Join(e.Dirs, ", "), ModelsEnv)
}

type cachedModel struct {
	once sync.Once
	c    *Cascade
	err  error
}

var modelCache sync.Map // rel path (+ "|mirrored") -> *cachedModel

// loadModel finds, parses and caches a cascade; mirrored returns its left-right mirror.
// The search runs again for a model that failed, so installing it later helps.
func loadModel(rel string, mirrored bool) (*Cascade, error) {
	key := rel
	if mirrored {
		key += "|mirrored"
	}
	v, _ := modelCache.LoadOrStore(key, &cachedModel{})
	m := v.(*cachedModel)
	m.once.Do(func() {
		var c *Cascade
		if mirrored {
			c, m.err = loadModel(rel, false)
			if m.err == nil {
				m.c, m.err = c.Mirrored()
			}
			return
		}
		path, err := FindModel(rel)
		if err != nil {
			m.err = err
			return
		}
		m.c, m.err = LoadCascade(path)
	})
	if m.err != nil {
		modelCache.CompareAndDelete(key, m)
	}
	return m.c, m.err
}
