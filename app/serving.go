package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The process that holds the database (the window or `serve`) says where it
// serves in a small file of the data dir, so that `doctor` and `keys` can name it
// by its own address instead of guessing from the configured one, which may be
// another Porchlight's. The file is trusted only while its pid is alive and, where
// the lock holder can be read (/proc/locks on Linux), only when that pid holds the
// lock: a file left by a crash names nobody.
const servingFileName = "serving.json"

// serving is the content of the serving file.
type serving struct {
	PID int    `json:"pid"`
	URL string `json:"url,omitempty"` // http://host:port of the API; "" when it is off
}

// announceServing writes the serving file for this process (temporary name, then
// rename, so readers never see half a file).
func announceServing(dataDir, url string) error {
	b, err := json.Marshal(serving{PID: os.Getpid(), URL: url})
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, servingFileName)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// withdrawServing removes the serving file if it is still this process's.
func withdrawServing(dataDir string) {
	path := filepath.Join(dataDir, servingFileName)
	if s, err := readServing(dataDir); err == nil && s.PID == os.Getpid() {
		os.Remove(path)
	}
}

func readServing(dataDir string) (serving, error) {
	var s serving
	b, err := os.ReadFile(filepath.Join(dataDir, servingFileName))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil || s.PID <= 0 {
		return serving{}, errors.New("unreadable serving file")
	}
	return s, nil
}

// dbHolder is who holds the database, as far as can be told.
type dbHolder struct {
	PID  int    // 0: unknown
	Name string // the holder's program name, when PID is known
	URL  string // where it serves the API, from its serving file
	Own  bool   // a Porchlight that announced itself in the data dir
}

// findHolder names the process holding the database of dataDir.
func findHolder(dataDir, dbPath string) dbHolder {
	var h dbHolder
	h.PID, h.Name = lockHolder(dbPath)
	s, err := readServing(dataDir)
	if err != nil || !alive(s.PID) || (h.PID != 0 && s.PID != h.PID) {
		return h
	}
	h.PID, h.URL, h.Own = s.PID, s.URL, true
	return h
}

// String reads "the Porchlight serving at http://127.0.0.1:8787 (pid 1234)".
func (h dbHolder) String() string {
	switch {
	case h.Own && h.URL != "":
		return fmt.Sprintf("the Porchlight serving at %s (pid %d)", h.URL, h.PID)
	case h.Own:
		return fmt.Sprintf("the Porchlight window (pid %d), with its API off", h.PID)
	case h.PID != 0 && h.Name != "":
		return fmt.Sprintf("pid %d (%s)", h.PID, h.Name)
	case h.PID != 0:
		return fmt.Sprintf("pid %d", h.PID)
	}
	return "another process"
}

// alive reports whether a process with that pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
