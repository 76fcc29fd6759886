package assets

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// craftedPNG is a PNG whose header claims w×h but which holds almost no data: what a
// decompression bomb looks like to the header check.
func craftedPNG(w, h uint32) []byte {
	chunk := func(typ string, data []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		out = append(out, typ...)
		out = append(out, data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	out = append(out, chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})...)
	return append(out, chunk("IEND", nil)...)
}

// corrupt damages a JPEG's Huffman tables (every code-length count set to 255), which
// no decoder can recover from, while the frame header stays intact for the probe.
func corrupt(t *testing.T, jpg []byte) []byte {
	out := append([]byte(nil), jpg...)
	dht := bytes.Index(out, []byte{0xFF, 0xC4})
	if dht < 0 {
		t.Fatal("no Huffman table in the test photo")
	}
	for i := dht + 5; i < dht+5+16; i++ {
		out[i] = 0xFF
	}
	return out
}

func gifBytes(t *testing.T) []byte {
	m := image.NewPaletted(image.Rect(0, 0, 32, 32), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestIngestFailureCodes(t *testing.T) {
	e := newEnv(t, Config{MaxUploadBytes: 500_000})
	jpg := photo(t, "interiors", "houses_111_bedroom.jpg")
	pngPhoto := photo(t, "sky", "masks", "ADE_val_00000219.png")
	cases := []struct {
		name, ct string
		data     []byte
		code     string
		reason   string // a word the reason must contain
	}{
		{"good.jpg", "image/jpeg", jpg, "", ""},
		{"corrupt.jpg", "image/jpeg", corrupt(t, jpg), core.CodeUnreadable, "JPEG"},
		{"truncated.jpg", "image/jpeg", jpg[:len(jpg)*6/10], core.CodeUnreadable, "JPEG"},
		{"empty.jpg", "image/jpeg", nil, core.CodeEmptyFile, "empty"},
		{"mislabelled.jpg", "image/jpeg", pngPhoto, core.CodeContentTypeMismatch, "PNG"},
		{"photo.png", "image/png", jpg, core.CodeContentTypeMismatch, "JPEG"},
		{"bomb.png", "image/png", craftedPNG(20000, 20000), core.CodeResolutionTooLarge, "400.0 megapixels"},
		{"anim.gif", "image/jpeg", gifBytes(t), core.CodeUnsupportedFormat, "GIF"},
		{"text.raw", "application/octet-stream", []byte(strings.Repeat("not an image\n", 50)), core.CodeUnsupportedFormat, "JPEG"},
		{"big.jpg", "image/jpeg", photo(t, "interiors", "houses_185_kitchen.jpg"), core.CodeFileTooLarge, "500 kB"},
		{"any.jpg", "application/octet-stream", jpg, "", ""},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		a, err := e.s.Add(owner, c.name, c.ct, bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ids[i] = a.ID
	}
	for i, c := range cases {
		got := e.wait(ids[i])
		st, _ := e.s.Status(owner, ids[i])
		if c.code == "" {
			if got.Status != core.AssetReady {
				t.Errorf("%s: %s %s %s, want ready", c.name, got.Status, got.Code, got.Reason)
			}
			continue
		}
		if st.Status != core.AssetFailed || st.Code != c.code || !strings.Contains(st.Reason, c.reason) {
			t.Errorf("%s: status %s code %q reason %q; want failed %s mentioning %q", c.name, st.Status, st.Code, st.Reason, c.code, c.reason)
		}
		if got.SHA256 != "" {
			t.Errorf("%s: failed asset still holds its bytes", c.name)
		}
		if _, _, err := e.s.DownloadURL(owner, ids[i]); core.KindOf(err) != core.KindConflict {
			t.Errorf("%s: download of a failed asset: %v", c.name, err)
		}
	}
	// Failed ingest released the bytes: only the two ready uploads (same bytes, one
	// blob) and their thumbnail remain on disk.
	if n := countBlobs(t, e.dir); n != 2 {
		t.Errorf("%d blobs on disk, want 2", n)
	}
}

func TestMaskRecognisedByContent(t *testing.T) {
	e := newEnv(t, Config{})
	gray := photo(t, "sky", "masks", "ADE_val_00000219.png")
	m, err := png.Decode(bytes.NewReader(gray))
	if err != nil {
		t.Fatal(err)
	}
	// The same ground-truth mask as white on transparent: the spec's mask format.
	b := m.Bounds()
	wot := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			v := color.GrayModel.Convert(m.At(x, y)).(color.Gray).Y
			wot.SetNRGBA(x, y, color.NRGBA{255, 255, 255, v})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, wot)

	mask := e.add("mask.png", "image/png", buf.Bytes())
	if mask.Status != core.AssetReady || mask.Kind != core.AssetMask || mask.Width != 300 || mask.Height != 240 {
		t.Fatalf("white-on-transparent PNG: %+v", mask)
	}
	plain := e.add("gray.png", "image/png", gray)
	if plain.Status != core.AssetReady || plain.Kind != core.AssetUpload {
		t.Fatalf("grayscale PNG: %+v", plain)
	}
	if _, _, err := e.s.Export(owner, mask.ID, core.ExportOptions{Format: "png"}); core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "mask") {
		t.Fatalf("export of a mask: %v", err)
	}
	// Thumbnails of transparent images are composited, so the mask stays visible.
	tf, err := e.s.Thumbnail(owner, mask.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
}
