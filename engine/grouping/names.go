package grouping

import (
	"path/filepath"
	"strings"
)

// IsPhotoName reports whether a file of this name is one Expand takes from a
// folder: a photo or camera RAW by its extension, not a hidden file.
func IsPhotoName(name string) bool {
	return !strings.HasPrefix(name, ".") && imageExts[strings.ToLower(filepath.Ext(name))]
}
