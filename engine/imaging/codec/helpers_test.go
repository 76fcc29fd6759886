package codec

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func readPhoto(tb testing.TB, rel ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(testphotos.Path(tb, rel...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func decodeBytes(tb testing.TB, b []byte, opt DecodeOptions) (*imaging.Image, Meta) {
	tb.Helper()
	img, m, err := Decode(bytes.NewReader(b), int64(len(b)), opt)
	if err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return img, m
}

func probeBytes(tb testing.TB, b []byte) Info {
	tb.Helper()
	in, err := Probe(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		tb.Fatalf("probe: %v", err)
	}
	return in
}

func needTool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		tb.Skipf("%s not installed", name)
	}
	return p
}

// run executes a command and fails the test with its output on error.
func run(tb testing.TB, name string, args ...string) []byte {
	tb.Helper()
	needTool(tb, name)
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// writeTemp writes b to a file in the test's temp dir.
func writeTemp(tb testing.TB, name string, b []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// magickPAM runs ImageMagick on in with args and reads the 16-bit result as a
// linear-light image, decoding the sRGB curve.
func magickPAM(tb testing.TB, in string, args ...string) *imaging.Image {
	tb.Helper()
	a := append([]string{in}, args...)
	a = append(a, "-depth", "16", "pam:-")
	return parsePAM(tb, run(tb, "convert", a...), true)
}

// parsePAM reads a P7 PAM (8- or 16-bit, 1-4 channels) into an image; srgb decodes the
// sRGB curve, otherwise samples are taken as linear.
func parsePAM(tb testing.TB, b []byte, srgb bool) *imaging.Image {
	tb.Helper()
	r := bufio.NewReader(bytes.NewReader(b))
	fields := map[string]int{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			tb.Fatalf("PAM header: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "ENDHDR" {
			break
		}
		if f := strings.Fields(line); len(f) == 2 {
			if v, err := strconv.Atoi(f[1]); err == nil {
				fields[f[0]] = v
			}
		}
	}
	w, h, d, maxv := fields["WIDTH"], fields["HEIGHT"], fields["DEPTH"], fields["MAXVAL"]
	c := d
	if d < 3 {
		c = 3
		if d == 2 {
			c = 4
		}
	}
	img := imaging.New(w, h, c)
	bps := 1
	if maxv > 255 {
		bps = 2
	}
	raw := make([]byte, w*h*d*bps)
	if _, err := io.ReadFull(r, raw); err != nil {
		tb.Fatalf("PAM data: %v", err)
	}
	s := make([]float32, d)
	lut := make([]float32, maxv+1)
	for i := range lut {
		lut[i] = float32(i) / float32(maxv)
		if srgb {
			lut[i] = imaging.SRGBToLinear(lut[i])
		}
	}
	for i := 0; i < w*h; i++ {
		for k := 0; k < d; k++ {
			var v int
			if bps == 2 {
				v = int(raw[(i*d+k)*2])<<8 | int(raw[(i*d+k)*2+1])
			} else {
				v = int(raw[i*d+k])
			}
			s[k] = float32(v)
		}
		o := img.Pix[i*c : i*c+c]
		switch d {
		case 1, 2:
			g := lut[int(s[0])]
			o[0], o[1], o[2] = g, g, g
			if d == 2 {
				o[3] = s[1] / float32(maxv)
			}
		default:
			o[0], o[1], o[2] = lut[int(s[0])], lut[int(s[1])], lut[int(s[2])]
			if d == 4 {
				o[3] = s[3] / float32(maxv)
			}
		}
	}
	return img
}

// meanAbsDiff8 is the mean absolute difference of the RGB channels in 8-bit sRGB codes.
func meanAbsDiff8(tb testing.TB, a, b *imaging.Image) float64 {
	tb.Helper()
	if !imaging.SameSize(a, b) {
		tb.Fatalf("sizes differ: %dx%d vs %dx%d", a.W(), a.H(), b.W(), b.H())
	}
	var sum float64
	for y := 0; y < a.H(); y++ {
		ra, rb := a.Row(y), b.Row(y)
		for x := 0; x < a.W(); x++ {
			for k := 0; k < 3; k++ {
				sum += math.Abs(float64(imaging.Encode8(ra[x*a.C+k])) - float64(imaging.Encode8(rb[x*b.C+k])))
			}
		}
	}
	return sum / float64(a.W()*a.H()*3)
}

// ssim is the mean structural similarity of the sRGB-encoded luma of a and b over 8x8
// windows with stride 4 (Wang et al. 2004 constants).
func ssim(tb testing.TB, a, b *imaging.Image) float64 {
	tb.Helper()
	if !imaging.SameSize(a, b) {
		tb.Fatalf("sizes differ: %dx%d vs %dx%d", a.W(), a.H(), b.W(), b.H())
	}
	luma := func(m *imaging.Image) []float64 {
		out := make([]float64, m.W()*m.H())
		for y := 0; y < m.H(); y++ {
			row := m.Row(y)
			for x := 0; x < m.W(); x++ {
				p := row[x*m.C:]
				l := 0.2126*p[0] + 0.7152*p[1] + 0.0722*p[2]
				out[y*m.W()+x] = float64(imaging.Encode16(l)) / 65535
			}
		}
		return out
	}
	la, lb := luma(a), luma(b)
	w, h := a.W(), a.H()
	const c1, c2 = 0.01 * 0.01, 0.03 * 0.03
	var total float64
	n := 0
	for y := 0; y+8 <= h; y += 4 {
		for x := 0; x+8 <= w; x += 4 {
			var ma, mb, va, vb, cov float64
			for j := 0; j < 8; j++ {
				for i := 0; i < 8; i++ {
					ma += la[(y+j)*w+x+i]
					mb += lb[(y+j)*w+x+i]
				}
			}
			ma /= 64
			mb /= 64
			for j := 0; j < 8; j++ {
				for i := 0; i < 8; i++ {
					da, db := la[(y+j)*w+x+i]-ma, lb[(y+j)*w+x+i]-mb
					va += da * da
					vb += db * db
					cov += da * db
				}
			}
			va, vb, cov = va/63, vb/63, cov/63
			total += ((2*ma*mb + c1) * (2*cov + c2)) / ((ma*ma + mb*mb + c1) * (va + vb + c2))
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return total / float64(n)
}

func encodeBytes(tb testing.TB, img *imaging.Image, opt EncodeOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, img, opt); err != nil {
		tb.Fatalf("encode %s: %v", opt.Format, err)
	}
	return buf.Bytes()
}

func dims(m *imaging.Image) string { return fmt.Sprintf("%dx%d", m.W(), m.H()) }

func testphotosPath(tb testing.TB, rel ...string) string {
	tb.Helper()
	return testphotos.Path(tb, rel...)
}

func readFile(tb testing.TB, p string) []byte {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// jpegIsProgressive reports whether a JPEG's frame is progressive.
func jpegIsProgressive(b []byte) bool {
	h, err := scanJPEG(bytes.NewReader(b), int64(len(b)))
	return err == nil && h.progressive
}

func newGray(w, h int, v ...float32) *imaging.Image {
	m := imaging.New(w, h, 1)
	copy(m.Pix, v)
	return m
}

func newReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func newRGB(w, h int) *imaging.Image {
	m := imaging.New(w, h, 3)
	for i := range m.Pix {
		m.Pix[i] = float32(i%97) / 97
	}
	return m
}

// lumaCorrelation is the Pearson correlation of the sRGB-encoded luma of two images.
func lumaCorrelation(a, b *imaging.Image) float64 {
	var sa, sb, saa, sbb, sab float64
	n := float64(a.W() * a.H())
	for y := 0; y < a.H(); y++ {
		for x := 0; x < a.W(); x++ {
			la := float64(imaging.LinearToSRGB(0.2126*a.At(x, y, 0) + 0.7152*a.At(x, y, 1) + 0.0722*a.At(x, y, 2)))
			lb := float64(imaging.LinearToSRGB(0.2126*b.At(x, y, 0) + 0.7152*b.At(x, y, 1) + 0.0722*b.At(x, y, 2)))
			sa, sb, saa, sbb, sab = sa+la, sb+lb, saa+la*la, sbb+lb*lb, sab+la*lb
		}
	}
	cov := sab/n - sa/n*sb/n
	return cov / math.Sqrt((saa/n-sa/n*sa/n)*(sbb/n-sb/n*sb/n))
}
