package hotfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// Input files are read only when they are the files that were listed. Someone who
// may write to the input folder could otherwise replace a photo that settled by a
// symbolic link to a file they cannot read themselves (a private key, another
// user's photos) and have it imported, and moved or copied into the done or errors
// folder. So a file is opened without following a link (O_NOFOLLOW), must be a
// regular file, and must have the device and inode that the listing recorded (and
// the journal kept, for scenes resumed after a restart); every check, the hash and
// the import read that open file. Moving and deleting originals act on a name
// only while it is still that file (or a regular file with its very bytes, size
// and time: a drive mounted again may number its files anew), and never follow a
// link.
//
// What is refused depends on what took the name. Another regular file (a photo
// saved again under its name) is a changed file, as new bytes are: its scene is
// taken apart and the file read again once it settles. A link,
// a named pipe or anything else that is not a file is never read: before the file
// is in a scene it is dropped from the scan (a link is never listed), and once it
// is, its scene fails into the errors folder with a report naming it, since the
// studio has lost that photo and must see why; the link is left where it is.

// errReplaced is a name that now leads to another regular file than the one that
// settled; it is a changed file.
var errReplaced = fmt.Errorf("%w: another file took its name", errChanged)

// replacedError is a name that is no longer a regular file.
type replacedError struct{ what string }

func (e *replacedError) Error() string {
	if e.what == "a symbolic link" {
		return "it was replaced by a symbolic link after it settled; links are never followed, so it was not read"
	}
	return "it was replaced by " + e.what + " after it settled, so it was not read"
}

// openInput opens the input file p for reading if it is a regular file and, when
// want is known, the file with that identity.
func openInput(p string, want journal.FileID) (*os.File, os.FileInfo, error) {
	fh, err := os.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &replacedError{what: kindOf(fi.Mode())}
		}
		return nil, nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil, &replacedError{what: kindOf(fi.Mode())}
	}
	if want.Known() && identity(fi) != want {
		fh.Close()
		return nil, nil, errReplaced
	}
	return fh, fi, nil
}

// replaced says what a name that is not a regular file now is; nil for a file.
func replaced(fi os.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &replacedError{what: kindOf(fi.Mode())}
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "something that is not a file"
}

func isReplaced(err error) bool {
	var re *replacedError
	return errors.As(err, &re)
}
