package assets

import (
	"bytes"
	"errors"
	"image/jpeg"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

func TestExportIdempotentAndResized(t *testing.T) {
	e := newEnv(t, Config{})
	src := e.add("kitchen.jpg", "image/jpeg", photo(t, "interiors", "houses_185_kitchen.jpg"))
	if src.Status != core.AssetReady {
		t.Fatalf("source: %+v", src)
	}
	opt := core.ExportOptions{Format: "webp", Quality: 80, MaxEdge: 300}
	x, created, err := e.s.Export(owner, src.ID, opt)
	if err != nil || !created || x.Kind != core.AssetExport || x.Source != src.ID || x.Filename != "kitchen.webp" {
		t.Fatalf("first export: %+v created=%v %v", x, created, err)
	}
	again, created, err := e.s.Export(owner, src.ID, opt)
	if err != nil || created || again.ID != x.ID {
		t.Fatalf("same export again: %s created=%v %v, want %s reused", again.ID, created, err, x.ID)
	}
	done := e.wait(x.ID)
	if done.Status != core.AssetReady || done.Width != 300 || done.Height != 200 || done.ContentType != "image/webp" {
		t.Fatalf("export: %+v", done)
	}
	// The bytes are a WebP of that size.
	f, a, err := e.s.Open(x.ID)
	if err != nil {
		t.Fatal(err)
	}
	info, err := codec.Probe(f, a.Size)
	f.Close()
	if err != nil || info.Format != "webp" || info.Width != 300 || info.Height != 200 {
		t.Fatalf("export bytes: %+v %v", info, err)
	}
	// Ready exports are reused too.
	if r, created, _ := e.s.Export(owner, src.ID, opt); created || r.ID != x.ID || r.Status != core.AssetReady {
		t.Fatalf("ready export not reused: %+v %v", r, created)
	}
	// Other options make another export; options that cannot change the file do not.
	other, created, _ := e.s.Export(owner, src.ID, core.ExportOptions{Format: "webp", Quality: 70, MaxEdge: 300})
	if !created || other.ID == x.ID {
		t.Fatal("different quality reused the export")
	}
	p1, _, _ := e.s.Export(owner, src.ID, core.ExportOptions{Format: "png", Quality: 10})
	p2, created, _ := e.s.Export(owner, src.ID, core.ExportOptions{Format: "png", Quality: 95, MaxEdge: 5000})
	if created || p1.ID != p2.ID {
		t.Fatal("PNG exports that differ only in quality and a non-shrinking max_edge were not shared")
	}
	full := e.wait(p1.ID)
	if full.Width != 1024 || full.Height != 683 {
		t.Fatalf("max_edge above the source enlarged it: %dx%d", full.Width, full.Height)
	}
	// Exporting an export is refused.
	if _, _, err := e.s.Export(owner, x.ID, opt); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("export of an export: %v", err)
	}
	// Another owner cannot export it.
	if _, _, err := e.s.Export("someone-else", src.ID, opt); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("export by another owner: %v", err)
	}
}

func TestExportOptionsValidated(t *testing.T) {
	e := newEnv(t, Config{})
	src := e.add("a.jpg", "image/jpeg", photo(t, "interiors", "houses_156_bedroom.jpg"))
	for _, c := range []struct {
		opt   core.ExportOptions
		field string
	}{
		{core.ExportOptions{}, "format"},
		{core.ExportOptions{Format: "gif"}, "format"},
		{core.ExportOptions{Format: "jpeg", Quality: 101}, "quality"},
		{core.ExportOptions{Format: "jpeg", Quality: -1}, "quality"},
		{core.ExportOptions{Format: "jpeg", MaxEdge: 15}, "max_edge"},
		{core.ExportOptions{Format: "jpeg", MaxEdge: 10001}, "max_edge"},
	} {
		_, _, err := e.s.Export(owner, src.ID, c.opt)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Field != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.opt, err, c.field)
		}
	}
	x, _, err := e.s.Export(owner, src.ID, core.ExportOptions{Format: "JPEG", MaxEdge: 16})
	if err != nil || x.Export.Quality != 92 || x.Export.Format != "jpeg" {
		t.Fatalf("defaults: %+v %v", x.Export, err)
	}
	if got := e.wait(x.ID); got.Width != 16 {
		t.Fatalf("max_edge 16: %dx%d", got.Width, got.Height)
	}
	// A source still being ingested is a conflict, not a bad request.
	p, _, _ := e.s.Declare(owner, "p.jpg", "image/jpeg")
	if _, _, err := e.s.Export(owner, p.ID, core.ExportOptions{Format: "jpeg"}); core.KindOf(err) != core.KindConflict {
		t.Fatalf("export of a pending upload: %v", err)
	}
}

// A failed export is tried again, under the same id, when it is asked for again.
func TestFailedExportRetried(t *testing.T) {
	e := newEnv(t, Config{})
	data := photo(t, "interiors", "houses_162_kitchen.jpg")
	src := e.add("k.jpg", "image/jpeg", data)
	blob := e.s.blobs.Path(src.SHA256)
	// Damage the stored source, as a failing disk would.
	if err := os.WriteFile(blob, data[:2000], 0o600); err != nil {
		t.Fatal(err)
	}
	opt := core.ExportOptions{Format: "jpeg", MaxEdge: 512}
	x, _, err := e.s.Export(owner, src.ID, opt)
	if err != nil {
		t.Fatal(err)
	}
	failed := e.wait(x.ID)
	if failed.Status != core.AssetFailed || failed.Code != core.CodeUnreadable || !strings.Contains(failed.Reason, "export") {
		t.Fatalf("export of damaged bytes: %+v", failed)
	}
	os.WriteFile(blob, data, 0o600)
	retry, created, err := e.s.Export(owner, src.ID, opt)
	if err != nil || !created || retry.ID != x.ID || retry.Status != core.AssetPending {
		t.Fatalf("retry: %+v created=%v %v", retry, created, err)
	}
	done := e.wait(x.ID)
	if done.Status != core.AssetReady || done.Code != "" || done.Width != 512 {
		t.Fatalf("retried export: %+v", done)
	}
	f, a, _ := e.s.Open(x.ID)
	defer f.Close()
	m, err := jpeg.Decode(io.NewSectionReader(f, 0, a.Size))
	if err != nil || m.Bounds().Dx() != 512 || m.Bounds().Dy() != 341 {
		t.Fatalf("retried export decodes to %v: %v", m.Bounds(), err)
	}
}

func TestCreateOutputIdempotent(t *testing.T) {
	e := newEnv(t, Config{})
	data := photo(t, "exteriors", "houses_102_frontal.jpg")
	order := "0f9d8c7b-6a5e-4d3c-2b1a-0f9e8d7c6b5a"
	calls := 0
	var mu sync.Mutex
	write := func(w io.Writer) error {
		mu.Lock()
		calls++
		mu.Unlock()
		_, err := w.Write(data)
		return err
	}
	// Two workers racing to store the same order's output get one asset.
	var wg sync.WaitGroup
	outs := make([]core.Asset, 4)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, err := e.s.CreateOutput(owner, order, "jpeg", write)
			if err != nil {
				t.Error(err)
			}
			outs[i] = a
		}(i)
	}
	wg.Wait()
	for _, o := range outs[1:] {
		if o.ID != outs[0].ID {
			t.Fatalf("two outputs for one order: %s and %s", outs[0].ID, o.ID)
		}
	}
	o := outs[0]
	if o.ID != OutputID(order) || o.Kind != core.AssetOutput || o.Status != core.AssetReady || o.OrderID != order ||
		o.Width != 1000 || o.Height != 691 || o.SHA256 != hexSum(data) {
		t.Fatalf("output: %+v", o)
	}
	// Later calls (a restarted order) do not even write.
	before := calls
	again, err := e.s.CreateOutput(owner, order, "jpeg", func(io.Writer) error { t.Fatal("write called again"); return nil })
	if err != nil || again.ID != o.ID || calls != before {
		t.Fatalf("after restart: %+v %v", again, err)
	}
	if n, err := e.s.store.Refs(o.SHA256); err != nil || n != 1 {
		t.Errorf("output blob has %d references (%v), want 1", n, err)
	}
	// Outputs can be exported and downloaded.
	x, _, err := e.s.Export(owner, o.ID, core.ExportOptions{Format: "png", MaxEdge: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.wait(x.ID); got.Status != core.AssetReady || got.Width != 100 {
		t.Fatalf("export of output: %+v", got)
	}
	// The written bytes must be what the format says.
	if _, err := e.s.CreateOutput(owner, "another-order", "png", write); err == nil {
		t.Fatal("JPEG bytes accepted as a PNG output")
	}
	if _, err := e.s.Get(owner, OutputID("another-order")); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("a refused output left a record: %v", err)
	}
	// A failing writer leaves nothing.
	if _, err := e.s.CreateOutput(owner, "third", "jpeg", func(w io.Writer) error {
		w.Write(data[:100])
		return errors.New("encoder failed")
	}); err == nil || !strings.Contains(err.Error(), "encoder failed") {
		t.Fatalf("failing writer: %v", err)
	}
	if n := countBlobs(t, e.dir); n != 2 { // the output and its PNG export
		t.Fatalf("%d blobs on disk, want 2", n)
	}
}

func TestDeleteReleasesSharedBlobs(t *testing.T) {
	var deleted []string
	e := newEnv(t, Config{OnDelete: func(a core.Asset) { deleted = append(deleted, a.ID) }})
	data := photo(t, "interiors", "houses_218_kitchen.jpg")
	a := e.add("one.jpg", "image/jpeg", data)
	b := e.add("two.jpg", "image/jpeg", data)
	x, _, _ := e.s.Export(owner, a.ID, core.ExportOptions{Format: "jpeg", MaxEdge: 64})
	e.wait(x.ID)
	if n := countBlobs(t, e.dir); n != 3 { // shared upload, shared thumbnail, export
		t.Fatalf("%d blobs, want 3", n)
	}
	if err := e.s.Delete("another-key", a.ID); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("delete by another owner: %v", err)
	}
	if err := e.s.Delete(owner, a.ID); err != nil {
		t.Fatal(err)
	}
	if !e.s.blobs.Exists(a.SHA256) {
		t.Fatal("blob removed while another asset references it")
	}
	if _, err := e.s.Get(owner, a.ID); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("deleted asset still there: %v", err)
	}
	// The export outlives its source, but the source's export index is gone.
	if got, err := e.s.Get(owner, x.ID); err != nil || got.Status != core.AssetReady {
		t.Fatalf("export after source deletion: %v", err)
	}
	if idx, err := e.s.store.Exports(); err != nil || len(idx) != 0 {
		t.Errorf("export index entries left: %v %v", idx, err)
	}
	if err := e.s.Delete(owner, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Delete(owner, x.ID); err != nil {
		t.Fatal(err)
	}
	if n := countBlobs(t, e.dir); n != 0 {
		t.Fatalf("%d blobs left after deleting everything", n)
	}
	if len(deleted) != 3 {
		t.Fatalf("OnDelete called %d times, want 3", len(deleted))
	}
}

func TestSizeLimitWhileStreaming(t *testing.T) {
	e := newEnv(t, Config{MaxUploadBytes: 1 << 20})
	a, url, _ := e.s.Declare(owner, "huge.jpg", "image/jpeg")
	// Through the service: the reader would yield 1 GB; reading stops near the limit.
	body := &countingReader{r: io.LimitReader(zeros{}, 1<<30)}
	err := e.s.Upload(a.ID, "image/jpeg", body)
	if core.KindOf(err) != core.KindTooLarge || !strings.Contains(err.Error(), "1.05 MB") {
		t.Fatalf("oversized upload: %v", err)
	}
	if body.n > 2<<20 {
		t.Fatalf("read %d bytes for a 1 MiB limit", body.n)
	}
	// Through HTTP, with and without a Content-Length.
	resp, b := put(t, url, "image/jpeg", io.LimitReader(zeros{}, 50<<20)) // chunked
	envelope(t, resp, b, 413)
	resp, b = put(t, url, "image/jpeg", bytes.NewReader(make([]byte, 2<<20)))
	envelope(t, resp, b, 413)
	// Confirming reports it through ingest, as the spec wants.
	if _, err := e.s.Confirm(owner, a.ID); err != nil {
		t.Fatal(err)
	}
	got := e.wait(a.ID)
	if got.Status != core.AssetFailed || got.Code != core.CodeFileTooLarge {
		t.Fatalf("after confirm: %+v", got)
	}
	// A replacement within the limit before confirming wins over the refused one.
	c, url, _ := e.s.Declare(owner, "ok.jpg", "image/jpeg")
	put(t, url, "image/jpeg", io.LimitReader(zeros{}, 3<<20))
	if resp, b := put(t, url, "image/jpeg", bytes.NewReader(photo(t, "interiors", "houses_158_bedroom.jpg"))); resp.StatusCode != 200 {
		t.Fatalf("replacement: %d %s", resp.StatusCode, b)
	}
	e.s.Confirm(owner, c.ID)
	if got := e.wait(c.ID); got.Status != core.AssetReady {
		t.Fatalf("replacement ingest: %+v", got)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
