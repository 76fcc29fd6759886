//go:build !unix

package hotfolder

import (
	"errors"
	"os"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// linkUnsupported treats every link error other than an existing name as a file
// system without hard links; the rename fallback then checks the name itself.
func linkUnsupported(err error) bool { return !errors.Is(err, os.ErrExist) }

func crossDevice(err error) bool { return false }

func links(fi os.FileInfo) uint64 { return 1 }

// openNoFollow is empty: there is no O_NOFOLLOW; the opened file is still checked
// to be a regular file.
const openNoFollow = 0

// identity is unknown here: files are compared by size and time only.
func identity(fi os.FileInfo) journal.FileID { return journal.FileID{} }
