package assets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/core"
)

// storageServer serves e's storage addresses with opt on a real HTTP server and
// points the signed addresses at it.
func storageServer(t *testing.T, e *env, opt StorageOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(e.s.StorageHandlerWith(opt))
	t.Cleanup(srv.Close)
	e.s.SetBaseURL(srv.URL)
	return srv
}

// pendingAndEmpty fails unless asset id is still pending with no bytes, and no
// temporary blob file is left.
func pendingAndEmpty(t *testing.T, e *env, id string) {
	t.Helper()
	a, err := e.s.Get(owner, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != core.AssetPending || a.SHA256 != "" || a.Size != 0 {
		t.Errorf("asset after the failed upload: %s, sha %q, %d bytes; want pending and empty", a.Status, a.SHA256, a.Size)
	}
	left, err := os.ReadDir(filepath.Join(e.dir, "blobs", "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d temporary blob files left behind", len(left))
	}
	if _, err := e.s.Confirm(owner, id); core.KindOf(err) != core.KindConflict {
		t.Errorf("confirming after the failed upload: %v, want a conflict (no bytes)", err)
	}
}

// A sender that declares 100 MB, sends 1 kB and stalls is answered once the idle
// deadline passes, and nothing of it is kept.
func TestStalledUploadIsAnsweredAndKeepsNothing(t *testing.T) {
	e := newEnv(t, Config{})
	srv := storageServer(t, e, StorageOptions{UploadIdle: 200 * time.Millisecond})
	a, up, err := e.s.Declare(owner, "big.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Type: image/jpeg\r\nContent-Length: 100000000\r\n\r\n",
		u.RequestURI(), u.Host)
	conn.Write(bytes.Repeat([]byte{0xff}, 1024))
	// The test's own guard; the server must answer long before it.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the stalled upload: %v", err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(res.Body)
	res.Body.Close()
	reason := envelope(t, res, body.Bytes(), http.StatusRequestTimeout)
	if !strings.Contains(reason, "stalled") || !strings.Contains(reason, "200ms") {
		t.Errorf("reason %q", reason)
	}
	if !res.Close {
		t.Error("the connection of a stalled upload is kept open")
	}
	pendingAndEmpty(t, e, a.ID)
}

// fullDisk fails the blob's writes once after bytes went through, the way the
// real writer reports it (with its temporary file's path).
type fullDisk struct {
	w     io.Writer
	path  string
	after int
	errno syscall.Errno
	n     int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.n+len(p) > d.after {
		return 0, fmt.Errorf("write blob temp file: %w", &fs.PathError{Op: "write", Path: d.path, Err: d.errno})
	}
	d.n += len(p)
	return d.w.Write(p)
}

// A disk that refuses the bytes answers 507 (no space) or 500, never 400, with a
// reason that names no file of the server; the detail goes to the log.
func TestUploadWriteFailuresNameNoServerPath(t *testing.T) {
	for _, c := range []struct {
		errno  syscall.Errno
		status int
	}{
		{syscall.ENOSPC, http.StatusInsufficientStorage},
		{syscall.EDQUOT, http.StatusInsufficientStorage},
		{syscall.EIO, http.StatusInternalServerError},
	} {
		t.Run(c.errno.Error(), func(t *testing.T) {
			e := newEnv(t, Config{})
			var logs bytes.Buffer
			storageServer(t, e, StorageOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			tmp := filepath.Join(e.dir, "blobs", "tmp", "blob-1234")
			e.s.uploadTo = func(w *blobs.Writer) io.Writer {
				return &fullDisk{w: w, path: tmp, after: 64 << 10, errno: c.errno}
			}
			a, up, err := e.s.Declare(owner, "room.jpg", "image/jpeg")
			if err != nil {
				t.Fatal(err)
			}
			res, body := put(t, up, "image/jpeg", bytes.NewReader(make([]byte, 1<<20)))
			reason := envelope(t, res, body, c.status)
			if strings.Contains(reason, "/") || strings.Contains(reason, e.dir) {
				t.Errorf("reason %q names a server path", reason)
			}
			if !strings.Contains(logs.String(), tmp) || !strings.Contains(logs.String(), c.errno.Error()) {
				t.Errorf("the log lacks the detail: %s", logs.String())
			}
			pendingAndEmpty(t, e, a.ID)

			// Add, for the hot folders, tells the same failure apart as well.
			_, err = e.s.Add(owner, "other.jpg", "image/jpeg", bytes.NewReader(make([]byte, 1<<20)))
			if got := errors.Is(err, ErrStorageFull); got != (c.status == http.StatusInsufficientStorage) || core.KindOf(err) != core.KindInternal {
				t.Errorf("Add: %v (storage full: %v)", err, got)
			}
		})
	}
}
