package app

import (
	"context"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// readmeShellBlocks returns the ```sh blocks of README.md's section titled
// heading, as written.
func readmeShellBlocks(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for {
		_, rest, ok := strings.Cut(section, "\n```sh\n")
		if !ok {
			return blocks
		}
		block, after, ok := strings.Cut(rest, "\n```\n")
		if !ok {
			t.Fatalf("unterminated ```sh block in %q", heading)
		}
		blocks = append(blocks, block)
		section = after
	}
}

// The README's API walk-through runs as written, with bash, curl and jq, against
// a real `porchlight serve` on loopback, and downloads a merged photo.
func TestReadmeAPIWalkThroughRuns(t *testing.T) {
	if os.Getenv(envServeChild) != "" {
		serveChild()
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the walk-through needs it", tool)
		}
	}
	blocks := readmeShellBlocks(t, "The API, step by step")
	if len(blocks) == 0 {
		t.Fatal("the walk-through has no shell block")
	}
	admin := "sk-test-admin-0123456789abcdef"
	_, url := startServeChild(t, t.TempDir(), admin)

	// The brackets the walk-through uploads: living-1.jpg, living-2.jpg, ...
	work := t.TempDir()
	for i, name := range testphotos.Brackets(t, "house_interior_kim") {
		b, err := os.ReadFile(filepath.Join(testphotos.Dir(t), "brackets", "house_interior_kim", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "living-"+string(rune('1'+i))+".jpg"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i, block := range blocks {
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", block)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "KEY="+admin, "PORCHLIGHT_URL="+url)
		out, err := cmd.CombinedOutput()
		t.Logf("block %d:\n%s", i+1, out)
		if err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
	}
	f, err := os.Open(filepath.Join(work, "living.jpg"))
	if err != nil {
		t.Fatalf("the walk-through downloaded nothing: %v", err)
	}
	defer f.Close()
	img, err := jpeg.Decode(f)
	if err != nil {
		t.Fatalf("living.jpg is not a JPEG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 700 || b.Dy() < 450 {
		t.Fatalf("living.jpg is %v, want about the brackets' 752x500", b)
	}
}
