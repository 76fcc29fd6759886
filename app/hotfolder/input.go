package hotfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ResolveInput returns the real folder behind an input folder, with every symbolic
// link on its path followed. An input that is a link to a folder elsewhere (on
// another drive, say) is a common setup, and the walk of a scan does not descend a
// root that is a link, so scans walk the resolved folder; since the link may be
// pointed elsewhere at any time, it is resolved again at every scan. A link whose
// target is missing is a *LinkError naming both.
func ResolveInput(input string) (string, error) {
	real, err := filepath.EvalSymlinks(input)
	if err != nil {
		if le := danglingLink(input); le != nil {
			return "", le
		}
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", input)
	}
	return real, nil
}

// LinkError is an input folder (or a folder above it) that is a symbolic link whose
// target cannot be reached.
type LinkError struct {
	Link   string // the link
	Target string // where it points, made absolute
	Err    error  // why the target cannot be reached
}

func (e *LinkError) Error() string {
	why := "cannot be reached: " + e.Err.Error()
	if errors.Is(e.Err, fs.ErrNotExist) {
		why = "does not exist"
	}
	return fmt.Sprintf("%s is a symbolic link to %s, which %s", e.Link, e.Target, why)
}

func (e *LinkError) Unwrap() error { return e.Err }

// danglingLink finds the link on p's path whose target is unreachable, going up
// from p until a path that is there: nil when the path is simply missing.
func danglingLink(p string) *LinkError {
	for d := p; ; d = filepath.Dir(d) {
		fi, lerr := os.Lstat(d)
		if lerr == nil {
			if fi.Mode()&fs.ModeSymlink == 0 {
				return nil // a real folder: what is missing is below it
			}
			_, err := os.Stat(d)
			if err == nil {
				return nil // this link leads somewhere; the loss is further down
			}
			target, rerr := os.Readlink(d)
			if rerr != nil {
				return nil
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(d), target)
			}
			return &LinkError{Link: d, Target: target, Err: unwrapPath(err)}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
