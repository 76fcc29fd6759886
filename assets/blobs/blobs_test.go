package blobs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutStoresUnderContentAddress(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("porchlight "), 100_000) // 1.1 MB, several copy buffers
	b, err := s.Put(bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Sum != sumOf(data) || b.Size != int64(len(data)) {
		t.Fatalf("got %+v, want sum %s size %d", b, sumOf(data), len(data))
	}
	want := filepath.Join(s.Dir(), b.Sum[:2], b.Sum[2:])
	got, err := os.ReadFile(want)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob file at %s: %v (equal=%v)", want, err, bytes.Equal(got, data))
	}
	// The same content again shares the file and leaves no temp file behind.
	b2, err := s.Put(bytes.NewReader(data), 0)
	if err != nil || b2 != b {
		t.Fatalf("second put: %+v %v", b2, err)
	}
	if tmps, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(tmps) != 0 {
		t.Fatalf("temp files left: %d", len(tmps))
	}
}

func TestLimitEnforcedWhileStreaming(t *testing.T) {
	s, _ := Open(t.TempDir())
	// A reader that would go on for 1 GB; the limit must stop it after ~1 MB.
	r := io.LimitReader(zeroReader{}, 1<<30)
	counted := &countingReader{r: r}
	_, err := s.Put(counted, 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1<<20 {
		t.Fatalf("want TooLargeError, got %v", err)
	}
	if counted.n > 2<<20 {
		t.Fatalf("read %d bytes past a 1 MiB limit", counted.n)
	}
	if tmps, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(tmps) != 0 {
		t.Fatalf("temp file left after refusal")
	}
	// Exactly at the limit is fine.
	b, err := s.Put(bytes.NewReader(make([]byte, 1<<20)), 1<<20)
	if err != nil || b.Size != 1<<20 {
		t.Fatalf("at the limit: %+v %v", b, err)
	}
}

func TestEmptyBlob(t *testing.T) {
	s, _ := Open(t.TempDir())
	b, err := s.Put(strings.NewReader(""), 10)
	if err != nil || b.Size != 0 || b.Sum != sumOf(nil) {
		t.Fatalf("empty: %+v %v", b, err)
	}
	if !s.Exists(b.Sum) {
		t.Fatal("empty blob not stored")
	}
}

func TestMalformedSumRefused(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, sum := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("a", 63)} {
		if _, err := s.Open(sum); err == nil {
			t.Errorf("Open(%q) accepted", sum)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
