package codec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	src, _, err := DecodeFile(testphotosPath(t, "brackets", "house_interior_kim", "A.jpg"), DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.webp")
	if err := WriteFile(out, src, EncodeOptions{Format: "webp", Quality: 80}); err != nil {
		t.Fatal(err)
	}
	img, _, err := DecodeFile(out, DecodeOptions{})
	if err != nil || !imaging.SameSize(img, src) {
		t.Fatalf("read back: %v", err)
	}
	// A failing encode leaves neither the target nor a temporary file.
	bad := filepath.Join(dir, "bad.gif")
	if err := WriteFile(bad, src, EncodeOptions{Format: "gif"}); err == nil {
		t.Fatal("gif accepted")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.webp" {
		t.Fatalf("directory holds %v", entries)
	}
	if _, _, err := DecodeFile(filepath.Join(dir, "missing.jpg"), DecodeOptions{}); err == nil {
		t.Fatal("missing file decoded")
	}
}
