//go:build !linux

package hotfolder

import (
	"fmt"
	"os"
)

// busyFiles reports files that cannot be opened for reading (on Windows, a file a
// program is still writing usually cannot). Elsewhere the settle time decides.
func busyFiles(paths []string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
		if err != nil {
			out[p] = fmt.Sprintf("cannot be opened: %v", err)
			continue
		}
		f.Close()
	}
	return out
}
