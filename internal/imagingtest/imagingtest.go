// Package imagingtest holds what the pixel packages' tests share: loading a real test
// photo into a linear image, and box-shrinking it to keep tests fast.
package imagingtest

import (
	"encoding/json"
	"image"
	_ "image/jpeg" // the test photos are JPEG and PNG
	_ "image/png"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// LoadPhoto decodes a test photo (a path below the test photo folder) into a linear
// image, skipping the test when the folder is absent.
func LoadPhoto(tb testing.TB, rel ...string) *imaging.Image {
	tb.Helper()
	return LoadFile(tb, testphotos.Path(tb, rel...))
}

// LoadFile decodes the JPEG or PNG file at path into a linear image.
func LoadFile(tb testing.TB, path string) *imaging.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, _, err := image.Decode(f)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	return imaging.FromImage(m, false)
}

// Shrink box-averages m by an integer factor in linear light; m itself for f <= 1.
func Shrink(m *imaging.Image, f int) *imaging.Image {
	if f <= 1 {
		return m
	}
	w, h := m.W()/f, m.H()/f
	out := imaging.New(w, h, m.C)
	inv := 1 / float32(f*f)
	for y := 0; y < h; y++ {
		dst := out.Row(y)
		for dy := 0; dy < f; dy++ {
			src := m.Row(y*f + dy)
			for x := 0; x < w; x++ {
				for dx := 0; dx < f; dx++ {
					for c := 0; c < m.C; c++ {
						dst[x*m.C+c] += src[(x*f+dx)*m.C+c] * inv
					}
				}
			}
		}
	}
	return out
}

// GoldenJSON reads the golden file at path into want, after writing got there when
// update is set (the tests' -update flag).
func GoldenJSON(tb testing.TB, path string, got, want any, update bool) {
	tb.Helper()
	if update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, want); err != nil {
		tb.Fatalf("golden %s: %v", path, err)
	}
}

// ProcessCPU is the CPU time the process has used, user and system: benchmarks report
// it per operation beside the wall time, which on a shared machine says less about
// the code.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
