// Package blobs keeps content-addressed files on disk: every blob lives at
// DIR/ab/cdef... where abcdef... is the hex sha256 of its bytes, so equal uploads share
// one file and a name always matches its content.
//
// Bytes arrive through a Writer that streams into a temporary file under DIR/tmp (the
// same file system, so the final rename is atomic) while hashing and counting, and
// refuses to grow past a limit. A Keeper is the one way written bytes become a blob:
// its Commit fsyncs the file, renames it into place and fsyncs the directory, so after
// a crash a blob is either whole under its name or absent, and runs the caller's
// transaction that references it. Reference counts live in the store of the records
// that hold them (References, Counter: the assets store), changed in the same
// transaction as those records; the Keeper removes a blob once its last reference is
// gone, and Sweep removes what no record references (leftovers of a crash).
package blobs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TooLargeError reports bytes beyond a writer's limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("file exceeds the limit of %d bytes", e.Limit)
}

// Store is a blob directory.
type Store struct {
	dir string
	tmp string
}

// Open opens (creating when needed) the blob directory dir.
func Open(dir string) (*Store, error) {
	s := &Store{dir: dir, tmp: filepath.Join(dir, "tmp")}
	if err := os.MkdirAll(s.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("create blob dir: %w", err)
	}
	return s, nil
}

// Dir is the blob directory.
func (s *Store) Dir() string { return s.dir }

// ValidSum reports whether sum is a lowercase hex sha256.
func ValidSum(sum string) bool {
	if len(sum) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(sum); i++ {
		c := sum[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Path is where the blob with this sum lives.
func (s *Store) Path(sum string) string {
	return filepath.Join(s.dir, sum[:2], sum[2:])
}

// Open opens the blob with this sum for reading.
func (s *Store) Open(sum string) (*os.File, error) {
	if !ValidSum(sum) {
		return nil, fmt.Errorf("open blob: malformed sum %q", sum)
	}
	f, err := os.Open(s.Path(sum))
	if err != nil {
		return nil, fmt.Errorf("open blob %s: %w", sum, err)
	}
	return f, nil
}

// Exists reports whether the blob's file is present.
func (s *Store) Exists(sum string) bool {
	if !ValidSum(sum) {
		return false
	}
	_, err := os.Stat(s.Path(sum))
	return err == nil
}

// Remove deletes the blob's file (absent is fine) and makes the removal durable.
func (s *Store) Remove(sum string) error {
	if !ValidSum(sum) {
		return fmt.Errorf("remove blob: malformed sum %q", sum)
	}
	p := s.Path(sum)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove blob %s: %w", sum, err)
	}
	return syncDir(filepath.Dir(p))
}

// Writer streams bytes into a temporary file while hashing them.
type Writer struct {
	s      *Store
	f      *os.File
	h      hash.Hash
	n      int64
	limit  int64 // 0: none
	err    error
	closed bool // synced and closed
	done   bool // committed or aborted
}

// Create starts a new blob. limit > 0 caps its size: a Write that would pass it fails
// with *TooLargeError and writes nothing of that call.
func (s *Store) Create(limit int64) (*Writer, error) {
	f, err := os.CreateTemp(s.tmp, "blob-*")
	if err != nil {
		return nil, fmt.Errorf("create blob temp file: %w", err)
	}
	return &Writer{s: s, f: f, h: sha256.New(), limit: limit}, nil
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("write to a closed blob")
	}
	if w.limit > 0 && w.n+int64(len(p)) > w.limit {
		w.err = &TooLargeError{Limit: w.limit}
		return 0, w.err
	}
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		w.err = fmt.Errorf("write blob temp file: %w", err)
		return n, w.err
	}
	return n, nil
}

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.n }

// Abort drops the temporary file. It is safe once the blob is committed (then it does
// nothing).
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if !w.closed {
		w.f.Close()
	}
	os.Remove(w.f.Name())
}

// Close makes the written bytes durable (fsync) and closes the temporary file; no
// more can be written. Keeper.Commit closes before it takes its lock, so a long fsync
// holds up no other commit. Closing twice is harmless.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	w.closed = true
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		w.err = fmt.Errorf("sync blob: %w", err)
		return w.err
	}
	if err := w.f.Close(); err != nil {
		w.err = fmt.Errorf("close blob: %w", err)
		return w.err
	}
	return nil
}

// Blob names committed bytes.
type Blob struct {
	Sum  string // hex sha256
	Size int64
}

// place makes the bytes durable under their content address and returns it. When a
// blob with the same content already exists the temporary file is dropped. Blobs that
// records reference are placed by Keeper.Commit only, under the lock that keeps a
// concurrent removal from slipping in before the reference is taken.
func (w *Writer) place() (Blob, error) {
	if w.done {
		return Blob{}, errors.New("commit blob: writer already finished")
	}
	if w.err != nil {
		w.Abort()
		return Blob{}, w.err
	}
	if err := w.Close(); err != nil {
		w.Abort()
		return Blob{}, err
	}
	w.done = true
	name := w.f.Name()
	b := Blob{Sum: hex.EncodeToString(w.h.Sum(nil)), Size: w.n}
	final := w.s.Path(b.Sum)
	if _, err := os.Stat(final); err == nil {
		os.Remove(name)
		return b, nil
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		os.Remove(name)
		return Blob{}, fmt.Errorf("create blob shard: %w", err)
	}
	if err := os.Chmod(name, 0o600); err != nil {
		os.Remove(name)
		return Blob{}, fmt.Errorf("chmod blob: %w", err)
	}
	if err := os.Rename(name, final); err != nil {
		os.Remove(name)
		return Blob{}, fmt.Errorf("rename blob into place: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return Blob{}, err
	}
	return b, nil
}

// Put stores everything r yields (at most limit bytes when limit > 0) as a blob that
// nothing references. Over the limit it returns *TooLargeError and stores nothing.
func (s *Store) Put(r io.Reader, limit int64) (Blob, error) {
	w, err := s.Create(limit)
	if err != nil {
		return Blob{}, err
	}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(onlyWriter{w}, r, buf); err != nil {
		w.Abort()
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return Blob{}, tl
		}
		return Blob{}, fmt.Errorf("store blob: %w", err)
	}
	return w.place()
}

// onlyWriter hides any ReaderFrom so io.CopyBuffer goes through Write (and the limit).
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// Sweep removes temporary files and every blob for which keep returns false. It runs
// at start, before anything writes, to clear what a crash left behind.
func (s *Store) Sweep(keep func(sum string) bool) (removed int, err error) {
	tmps, err := os.ReadDir(s.tmp)
	if err != nil {
		return 0, fmt.Errorf("sweep blob temp dir: %w", err)
	}
	for _, e := range tmps {
		if os.Remove(filepath.Join(s.tmp, e.Name())) == nil {
			removed++
		}
	}
	shards, err := os.ReadDir(s.dir)
	if err != nil {
		return removed, fmt.Errorf("sweep blob dir: %w", err)
	}
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		dir := filepath.Join(s.dir, sh.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return removed, fmt.Errorf("sweep blob shard: %w", err)
		}
		changed := false
		for _, f := range files {
			sum := sh.Name() + f.Name()
			if !ValidSum(sum) || strings.HasPrefix(f.Name(), ".") || keep(sum) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, f.Name())); err == nil {
				removed++
				changed = true
			}
		}
		if changed {
			if err := syncDir(dir); err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
