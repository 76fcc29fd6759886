package raw

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// LibRaw parses hostile binary formats in C, and the distribution's version can crash
// on malformed files (fuzzing found a segfault in its TIFF parser when reading from
// memory). A crash must not take the application down with it, so every LibRaw call
// runs in a short-lived child process: this same executable, started with WorkerEnv
// set, whose main hands over to MaybeRunWorker before doing anything else. The file
// travels to the child on stdin and LibRaw reads it from memory (libraw_open_buffer);
// results come back on stdout. A child that crashes, or runs past Timeout, yields
// ErrCrashed.
//
// The worker is registered explicitly, as moby's reexec does: only an executable
// whose main (or a test binary whose TestMain) calls MaybeRunWorker ever starts
// itself as a worker or turns into one. Any other binary that imports this package
// runs LibRaw in its own process, unprotected, and ignores WorkerEnv.

// WorkerEnv is the environment variable that makes this executable a LibRaw worker.
const WorkerEnv = "PORCHLIGHT_LIBRAW_WORKER"

// Timeout bounds one LibRaw call.
var Timeout = 3 * time.Minute

// ErrCrashed reports that LibRaw died (or hung) on the file.
var ErrCrashed = errors.New("raw: LibRaw crashed or hung on this file")

// MemoryLimit is the address space a worker may map beyond what it has at start: a
// file crafted to make LibRaw allocate without bound fails instead of exhausting the
// machine. Half-size development of a 120 MP raw needs about 1.5 GB.
var MemoryLimit int64 = 4 << 30

// The worker's limits travel in its environment, which holds nothing else: the
// parent's environment carries API and model-server keys that a process parsing
// hostile files has no business seeing.
const (
	limitMemoryEnv = "PORCHLIGHT_LIBRAW_MEMORY"
	limitCPUEnv    = "PORCHLIGHT_LIBRAW_CPU"
)

// registered records that this executable's main called MaybeRunWorker, so a child
// started from it serves LibRaw calls instead of running the program.
var registered atomic.Bool

// MaybeRunWorker registers this executable as the LibRaw worker; main calls it first
// thing, and the TestMain of a test binary that decodes RAW files likewise. In a
// process started as a worker (WorkerEnv set) it serves the one request on stdin and
// returns the process's exit status and true: the caller exits with that status at
// once. Anywhere else it returns 0 and false, and the program goes on.
func MaybeRunWorker() (exitCode int, isWorker bool) {
	registered.Store(true)
	if os.Getenv(WorkerEnv) != "1" {
		return 0, false
	}
	if err := applyLimits(os.Getenv(limitMemoryEnv), os.Getenv(limitCPUEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "raw worker:", err)
		return 3, true
	}
	return serveWorker(os.Stdin, os.Stdout), true
}

// workerCommand is the command line of one worker: this executable with only the
// worker's own variables (CPU time a little over Timeout, so a spinning parser is
// stopped by the kernel even if the parent's timer is late).
func workerCommand(exe string) *exec.Cmd {
	cmd := exec.Command(exe)
	cmd.Env = []string{
		WorkerEnv + "=1",
		limitMemoryEnv + "=" + strconv.FormatInt(MemoryLimit, 10),
		limitCPUEnv + "=" + strconv.FormatInt(int64(Timeout/time.Second)+1, 10),
	}
	return cmd
}

const (
	opProbe byte = 1 + iota
	opDevelop
	opThumbnail
)

// Response status bytes.
const (
	stOK byte = iota
	stLibRaw
	stCorrupt
	stNoImage
	stOther
)

// Probe parses the headers only.
func Probe(data []byte) (Info, error) {
	var in Info
	err := call(opProbe, false, data, func(r io.Reader) error { return readJSON(r, &in) })
	return in, err
}

// Develop demosaics and colour-corrects the file into linear sRGB. half develops at
// half size (each 2×2 Bayer block to one pixel), four times less work.
func Develop(data []byte, half bool) (*Image, Info, error) {
	var in Info
	var img *Image
	err := call(opDevelop, half, data, func(r io.Reader) error {
		w, h, err := readDeveloped(r, &in)
		if err != nil {
			return err
		}
		img = &Image{Width: w, Height: h, Pix: make([]uint16, w*h*3)}
		_, err = io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(&img.Pix[0])), len(img.Pix)*2))
		return err
	})
	if err != nil {
		return nil, Info{}, err
	}
	return img, in, nil
}

// DevelopRows develops like Develop but hands the image over one row at a time, so the
// caller never holds the whole frame here: start gets the developed size before the
// first row, row gets each row (3 samples a pixel, the buffer reused between calls).
// The worker process holds LibRaw's own buffers and exits afterwards.
func DevelopRows(data []byte, half bool, start func(w, h int) error, row func(y int, rgb []uint16) error) (Info, error) {
	var in Info
	err := call(opDevelop, half, data, func(r io.Reader) error {
		w, h, err := readDeveloped(r, &in)
		if err != nil {
			return err
		}
		if err := start(w, h); err != nil {
			return err
		}
		buf := make([]uint16, w*3)
		bytes := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*2)
		for y := 0; y < h; y++ {
			if _, err := io.ReadFull(r, bytes); err != nil {
				return err
			}
			if err := row(y, buf); err != nil {
				return err
			}
		}
		return nil
	})
	return in, err
}

// readDeveloped reads what the worker sends ahead of a developed image's pixels:
// the file's Info into in, then the image's size.
func readDeveloped(r io.Reader, in *Info) (w, h int, err error) {
	if err := readJSON(r, in); err != nil {
		return 0, 0, err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, err
	}
	w, h = int(binary.LittleEndian.Uint32(hdr[:4])), int(binary.LittleEndian.Uint32(hdr[4:]))
	if w <= 0 || h <= 0 || int64(w)*int64(h) > 1<<31 {
		return 0, 0, fmt.Errorf("raw: worker sent a %dx%d image", w, h)
	}
	return w, h, nil
}

// Thumbnail returns the embedded JPEG preview, if the file has one.
func Thumbnail(data []byte) ([]byte, error) {
	var out []byte
	err := call(opThumbnail, false, data, func(r io.Reader) error {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return err
		}
		out = make([]byte, binary.LittleEndian.Uint32(n[:]))
		_, err := io.ReadFull(r, out)
		return err
	})
	return out, err
}

var (
	exeOnce sync.Once
	exePath string
)

// call runs one operation in a worker process and decodes a successful answer with ok.
// When this executable is no worker (MaybeRunWorker never called) or cannot be
// started again (deleted, or exec forbidden), the operation runs in this process
// instead.
func call(op byte, half bool, data []byte, ok func(io.Reader) error) error {
	if len(data) == 0 {
		return &Error{Code: -2, Op: "open"} // LIBRAW_FILE_UNSUPPORTED
	}
	exeOnce.Do(func() {
		if p, err := os.Executable(); err == nil {
			if _, err := os.Stat(p); err == nil {
				exePath = p
			}
		}
	})
	inProcess := func() error {
		var buf bytes.Buffer
		work(op, half, data, &buf)
		return readResponse(&buf, ok)
	}
	if exePath == "" || !registered.Load() {
		return inProcess()
	}
	cmd := workerCommand(exePath)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("raw: worker stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("raw: worker stdout: %w", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return inProcess() // no way to start a process here (sandbox): run unprotected
	}
	timer := time.AfterFunc(Timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	go func() {
		var hdr [10]byte
		hdr[0], hdr[1] = op, 0
		if half {
			hdr[1] = 1
		}
		binary.LittleEndian.PutUint64(hdr[2:], uint64(len(data)))
		stdin.Write(hdr[:])
		stdin.Write(data)
		stdin.Close()
	}()
	rerr := readResponse(bufio.NewReaderSize(stdout, 1<<16), ok)
	io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) && !ee.Exited() { // killed by a signal: crash or timeout
			return ErrCrashed
		}
		if rerr == nil {
			return fmt.Errorf("raw: LibRaw worker failed: %v %s", werr, bytes.TrimSpace(stderr.Bytes()))
		}
	}
	return rerr
}

func readResponse(r io.Reader, ok func(io.Reader) error) error {
	var st [1]byte
	if _, err := io.ReadFull(r, st[:]); err != nil {
		return ErrCrashed // the worker died before answering
	}
	switch st[0] {
	case stOK:
		return ok(r)
	case stLibRaw:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return ErrCrashed
		}
		var opName string
		if err := readJSON(r, &opName); err != nil {
			return ErrCrashed
		}
		return &Error{Code: int(int32(binary.LittleEndian.Uint32(b[:]))), Op: opName}
	case stCorrupt:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return ErrCrashed
		}
		return &CorruptError{Offset: int64(binary.LittleEndian.Uint64(b[:]))}
	case stNoImage:
		return ErrNoImage
	}
	var msg string
	if err := readJSON(r, &msg); err != nil {
		return ErrCrashed
	}
	return errors.New(msg)
}

func readJSON(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	ln := binary.LittleEndian.Uint32(n[:])
	if ln > 1<<20 {
		return fmt.Errorf("raw: worker message of %d bytes", ln)
	}
	b := make([]byte, ln)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(b))))
	w.Write(b)
}

// serveWorker answers one request from r on w; it is the worker process's main.
func serveWorker(r io.Reader, w io.Writer) int {
	var hdr [10]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 2
	}
	n := binary.LittleEndian.Uint64(hdr[2:])
	if n == 0 || n > 1<<40 {
		return 2
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return 2
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	work(hdr[0], hdr[1] == 1, data, bw)
	if bw.Flush() != nil {
		return 2
	}
	return 0
}

// work performs one operation in this process and writes the response.
func work(op byte, half bool, data []byte, w io.Writer) {
	fail := func(err error) {
		var le *Error
		var ce *CorruptError
		switch {
		case errors.As(err, &le):
			w.Write([]byte{stLibRaw})
			w.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(le.Code))))
			writeJSON(w, le.Op)
		case errors.As(err, &ce):
			w.Write([]byte{stCorrupt})
			w.Write(binary.LittleEndian.AppendUint64(nil, uint64(ce.Offset)))
		case errors.Is(err, ErrNoImage):
			w.Write([]byte{stNoImage})
		default:
			w.Write([]byte{stOther})
			writeJSON(w, err.Error())
		}
	}
	switch op {
	case opProbe:
		in, err := probeLocal(data)
		if err != nil {
			fail(err)
			return
		}
		w.Write([]byte{stOK})
		writeJSON(w, in)
	case opDevelop:
		// The answer streams from LibRaw's buffer (native byte order: parent and
		// worker are the same executable on the same machine); gray is expanded.
		_, err := developLocal(data, half, func(in Info, iw, ih, nc int, src []uint16) error {
			w.Write([]byte{stOK})
			writeJSON(w, in)
			w.Write(binary.LittleEndian.AppendUint32(nil, uint32(iw)))
			w.Write(binary.LittleEndian.AppendUint32(nil, uint32(ih)))
			img := src
			if nc != 3 {
				img = toImage(iw, ih, nc, src).Pix
			}
			_, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&img[0])), len(img)*2))
			return err
		})
		if err != nil {
			fail(err)
		}
	case opThumbnail:
		t, err := thumbnailLocal(data)
		if err != nil {
			fail(err)
			return
		}
		w.Write([]byte{stOK})
		w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(t))))
		w.Write(t)
	default:
		fail(fmt.Errorf("raw: unknown worker operation %d", op))
	}
}
