package codec

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/bmff"
	"github.com/porchlight/porchlight/internal/hostile"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// fuzzMaxPixels keeps fuzzed decodes small.
const fuzzMaxPixels = 1 << 20

// seeds are small valid files of every format plus crafted headers, so the fuzzer
// starts inside each parser.
func seeds(f *testing.F) {
	img := imaging.New(24, 16, 3)
	for i := range img.Pix {
		img.Pix[i] = float32(i%13) / 13
	}
	rgba := imaging.New(9, 7, 4)
	for i := range rgba.Pix {
		rgba.Pix[i] = float32(i%5) / 5
	}
	for _, opt := range []EncodeOptions{
		{Format: "jpeg", Quality: 80, Meta: sampleMeta(), KeepGPS: true},
		{Format: "png", Meta: sampleMeta()},
		{Format: "png", Bits16: true},
		{Format: "webp", Quality: 50, Meta: sampleMeta()},
	} {
		var buf bytes.Buffer
		if err := Encode(&buf, img, opt); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		buf.Reset()
		if err := Encode(&buf, rgba, opt); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	for _, b := range bombs() {
		f.Add(b)
	}
	// A HEIC grid of four tiles whose coded data is junk: the grid parsing and the
	// per-tile repackaging run, the decode fails.
	junk := hostile.HEIFTile{Props: [][]byte{bmff.Box("hvcC", make([]byte, 23)), bmff.Box("ispe", bmff.BE32(0), bmff.BE32(64), bmff.BE32(64))},
		Data: []byte{0, 0, 0, 1, 2, 3}}
	f.Add(hostile.HEIFGrid(2, 2, 100, 100, []hostile.HEIFTile{junk}))
	f.Add(hostile.HEICGrid(2, 3))
	f.Add(mosaicDNG(img, 6))
	f.Add(withICC(encodeFuzzJPEG(f, img), buildICC("P3", "x", primariesD50(0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329), srgbCurve)))
	if dir, ok := testphotos.Root(); ok {
		for _, rel := range []string{
			"raw/DNG.dng", "raw/Nikon.nef", "sky/masks/ADE_val_00001599.png",
			"sky/images/ADE_val_00001599.jpg", "brackets/house_interior_kim/A.jpg",
		} {
			if b, err := os.ReadFile(filepath.Join(dir, rel)); err == nil {
				f.Add(b)
			}
		}
	}
}

func encodeFuzzJPEG(f *testing.F, img *imaging.Image) []byte {
	var buf bytes.Buffer
	if err := Encode(&buf, img, EncodeOptions{Format: "jpeg"}); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

func FuzzSniff(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, k := Sniff(b), SniffRaw(b)
		if (k != "") != (s == FormatRaw) {
			t.Fatalf("Sniff %q but SniffRaw %q", s, k)
		}
	})
}

func FuzzProbe(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Probe(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if in.Width <= 0 || in.Height <= 0 || in.Format == "" {
			t.Fatalf("probe succeeded with %+v", in)
		}
	})
}

func FuzzReadMeta(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMeta(bytes.NewReader(b), int64(len(b)))
		if err == nil && (m.Orientation < 0 || m.Orientation > 8) {
			t.Fatalf("orientation %d", m.Orientation)
		}
		// The EXIF parser alone, on the raw bytes as a TIFF stream.
		var mm Meta
		exifFromBlock(b, &mm)
	})
}

func FuzzDecode(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		in, perr := Probe(bytes.NewReader(b), int64(len(b)))
		// Half the inputs take the reduced-decode paths (DCT scaling, fused resize).
		edge := 0
		if len(b)%2 == 1 {
			edge = 37
		}
		img, _, err := Decode(bytes.NewReader(b), int64(len(b)), DecodeOptions{MaxPixels: fuzzMaxPixels, ScaleToMaxEdge: edge})
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if perr != nil {
			t.Fatalf("decoded what Probe refused: %v", perr)
		}
		if w, h := imaging.FitWithin(in.Width, in.Height, edge); img.W() != w || img.H() != h {
			t.Fatalf("decoded %s, probe said %dx%d (edge %d)", dims(img), in.Width, in.Height, edge)
		}
		for _, v := range img.Pix {
			if math.IsNaN(float64(v)) || v < 0 {
				t.Fatalf("sample %v", v)
			}
		}
	})
}

func FuzzScan(f *testing.F) {
	seeds(f)
	f.Add(hostile.JPEGTruncated(300, 200))
	f.Add(hostile.JPEGFlat(100, 60, 3, true))
	var mask bytes.Buffer
	hostile.PNGMask(&mask, 40, 30)
	f.Add(mask.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{MaxPixels: fuzzMaxPixels, MaxEdge: 37})
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		in := s.Info
		if w, h := imaging.FitWithin(in.Width, in.Height, 37); s.Preview.W() != w || s.Preview.H() != h {
			t.Fatalf("preview %s, probe said %dx%d", dims(s.Preview), in.Width, in.Height)
		}
		for _, v := range s.Preview.Pix {
			if math.IsNaN(float64(v)) || v < 0 {
				t.Fatalf("sample %v", v)
			}
		}
		if s.Mask && (in.Format != FormatPNG || s.Preview.C != 4) {
			t.Fatalf("mask from a %s with %d channels", in.Format, s.Preview.C)
		}
	})
}

func FuzzDecodeMask(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		m, err := DecodeMask(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		for _, v := range m.Pix {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("coverage %v", v)
			}
		}
	})
}

func FuzzICC(f *testing.F) {
	f.Add(srgbICC)
	f.Add(buildICC("a", "b", primariesD50(0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.329), iccCurve{gamma: 2.2}))
	for _, n := range []string{"a98.icc", "srgb.icc", "rommrgb.icc", "sgray.icc", "default_cmyk.icc"} {
		if b, err := os.ReadFile(ghostscriptICC + n); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseICC(b)
		if err != nil {
			return
		}
		img := imaging.New(4, 2, 3)
		for i := range img.Pix {
			img.Pix[i] = float32(i) / 24
		}
		p.ToSRGB(img)
		l := p.lut(256)
		for c := 0; c < 3; c++ {
			for _, v := range l[c] {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("curve value %v", v)
				}
			}
		}
		for _, v := range img.Pix {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("converted sample %v", v)
			}
		}
	})
}
