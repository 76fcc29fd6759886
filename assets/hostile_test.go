package assets

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/internal/hostile"
)

// procKB reads a VmHWM or VmRSS line of /proc/self/status in kB.
func procKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}

// resetPeak drops the garbage of building the fixtures and restarts the kernel's
// peak resident size (VmHWM) from the current size.
func resetPeak(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident size: %v", err)
	}
	return procKB(t, "VmRSS")
}

func fileBytes(t *testing.T, write func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Uploads of a few hundred kB that declare frames of 120 MP are ingested within
// bounded memory: the complete ones (all black, flat grey, a HEIC grid of 441 tiles
// sharing one coded tile, a large mask) become
// ready with their real sizes and kinds, the truncated ones fail as unreadable. The
// process's peak resident size (C allocations included) grows by less than the memory
// budget plus the runtime's slack, where a full-size decode of the 16-bit PNG alone
// takes several GB.
func TestIngestHostileUploadsStayBounded(t *testing.T) {
	pngZeros := fileBytes(t, func(b *bytes.Buffer) error { return hostile.PNGZeros(b, 10950, 10950) })
	mask := fileBytes(t, func(b *bytes.Buffer) error { return hostile.PNGMask(b, 9000, 6000) })
	tiffZeros := fileBytes(t, func(b *bytes.Buffer) error { return hostile.TIFFZeros(b, 10950, 10950) })
	files := []struct {
		name, ct string
		data     []byte
		status   core.AssetStatus
		kind     core.AssetKind
		reason   string // for failures: a word the reason must contain
	}{
		{"zeros16.png", "image/png", pngZeros, core.AssetReady, core.AssetUpload, ""},
		{"zeros16-cut.png", "image/png", pngZeros[:len(pngZeros)/2], core.AssetFailed, "", "PNG"},
		{"mask.png", "image/png", mask, core.AssetReady, core.AssetMask, ""},
		{"zeros16.tif", "image/tiff", tiffZeros, core.AssetReady, core.AssetUpload, ""},
		{"zeros16-cut.tif", "image/tiff", tiffZeros[:len(tiffZeros)*3/4], core.AssetFailed, "", "TIFF"},
		{"flat.jpg", "image/jpeg", hostile.JPEGFlat(10900, 10900, 3, false), core.AssetReady, core.AssetUpload, ""},
		{"grid.heic", "image/heic", hostile.HEICGrid(21, 21), core.AssetReady, core.AssetUpload, ""},
		{"flat-progressive.jpg", "image/jpeg", hostile.JPEGFlat(10900, 10900, 3, true), core.AssetReady, core.AssetUpload, ""},
		{"scan-ends-early.jpg", "image/jpeg", hostile.JPEGTruncated(10900, 10900), core.AssetFailed, "", "truncated"},
		{"cut.jpg", "image/jpeg", hostile.JPEGCut(10900, 10900, 0.3), core.AssetFailed, "", "truncated"},
	}
	const budget = 768 << 20
	e := newEnv(t, Config{Memory: membudget.New(budget)})
	base := resetPeak(t)
	ids := make([]string, len(files))
	for i, f := range files {
		a, err := e.s.Add(owner, f.name, f.ct, bytes.NewReader(f.data))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		ids[i] = a.ID
	}
	for i, f := range files {
		a := e.wait(ids[i])
		t.Logf("%-22s %7d bytes: %s %s %s %s", f.name, len(f.data), a.Status, a.Kind, a.Code, a.Reason)
		switch {
		case a.Status != f.status:
			t.Errorf("%s: %s (%s %s), want %s", f.name, a.Status, a.Code, a.Reason, f.status)
		case f.status == core.AssetReady && (a.Kind != f.kind || a.Width*a.Height < 50_000_000):
			t.Errorf("%s: ready as %s %dx%d, want %s at its declared size", f.name, a.Kind, a.Width, a.Height, f.kind)
		case f.status == core.AssetFailed && (a.Code != core.CodeUnreadable || !strings.Contains(a.Reason, f.reason)):
			t.Errorf("%s: failed %s %q, want unreadable naming %q", f.name, a.Code, a.Reason, f.reason)
		}
	}
	grew := (procKB(t, "VmHWM") - base) << 10
	t.Logf("peak resident size grew by %d MB over %d MB at the start", grew>>20, base>>10)
	if limit := int64(budget + 128<<20); grew > limit {
		t.Errorf("ingest of the hostile files took %d MB at its peak, over %d MB", grew>>20, limit>>20)
	}
}

// A scan that holds more than a few rows is charged to the memory budget orders and
// exports share; one that needs more than the whole budget fails without running.
func TestIngestLargeScanChargedToBudget(t *testing.T) {
	e := newEnv(t, Config{Memory: membudget.New(256 << 20)})
	prog := e.add("progressive.jpg", "image/jpeg", hostile.JPEGFlat(10900, 10900, 3, true))
	if prog.Status != core.AssetFailed || prog.Code != core.CodeResolutionTooLarge || !strings.Contains(prog.Reason, "memory budget of 256 MB") {
		t.Fatalf("progressive 10900x10900 JPEG under a 256 MB budget: %s %s %q", prog.Status, prog.Code, prog.Reason)
	}
	flat := e.add("flat.jpg", "image/jpeg", hostile.JPEGFlat(10900, 10900, 3, false))
	if flat.Status != core.AssetReady {
		t.Fatalf("baseline 10900x10900 JPEG under a 256 MB budget: %s %s %q", flat.Status, flat.Code, flat.Reason)
	}
	if st := e.s.cfg.Memory.Stats(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("budget left with %d bytes used, %d waiting", st.Used, st.Waiting)
	}
}
