package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"

	"github.com/porchlight/porchlight/engine/imaging"
)

// iccProfile is the part of an ICC profile a matrix/TRC conversion needs: RGB (or gray)
// display and input profiles with XYZ colorants and per-channel tone curves. Profiles
// built on lookup tables (most CMYK and some camera profiles) are described but not
// converted.
type iccProfile struct {
	Description string
	ColorSpace  string // "RGB ", "GRAY", "CMYK", ...
	Version     uint32
	// toXYZ maps linear RGB to PCS XYZ relative to D50, row-major.
	toXYZ     [9]float64
	trc       [3]iccCurve
	hasMatrix bool // RGB with colorants and curves, or GRAY with a kTRC
	white     [3]float64
}

// iccCurve is a tone curve from encoded values to linear light, both 0..1.
type iccCurve struct {
	gamma  float64   // pure power law when table and para are empty
	table  []float64 // sampled curve (curv with >1 entries)
	para   []float64 // parametric curve (g, a, b, c, d, e, f)
	ptype  int
	linear bool // curv with 0 entries
}

func (c *iccCurve) eval(x float64) float64 {
	x = math.Max(0, math.Min(1, x))
	switch {
	case c.linear:
		return x
	case c.table != nil:
		n := len(c.table) - 1
		p := x * float64(n)
		i := int(p)
		if i >= n {
			return c.table[n]
		}
		f := p - float64(i)
		return c.table[i]*(1-f) + c.table[i+1]*f
	case c.para != nil:
		p := c.para
		g := p[0]
		switch c.ptype {
		case 0:
			return math.Pow(x, g)
		case 1:
			if x >= -p[2]/p[1] {
				return math.Pow(p[1]*x+p[2], g)
			}
			return 0
		case 2:
			if x >= -p[2]/p[1] {
				return math.Pow(p[1]*x+p[2], g) + p[3]
			}
			return p[3]
		case 3:
			if x >= p[4] {
				return math.Pow(p[1]*x+p[2], g)
			}
			return p[3] * x
		case 4:
			if x >= p[4] {
				return math.Pow(p[1]*x+p[2], g) + p[5]
			}
			return p[3]*x + p[6]
		}
	}
	return math.Pow(x, c.gamma)
}

var errICC = errors.New("icc: malformed profile")

const maxICCTags = 200

// parseICC reads the header, the description and (when present) the matrix/TRC tags.
func parseICC(b []byte) (*iccProfile, error) {
	if len(b) < 132 {
		return nil, fmt.Errorf("%w: %d bytes is shorter than a header", errICC, len(b))
	}
	if string(b[36:40]) != "acsp" {
		return nil, fmt.Errorf("%w: no 'acsp' signature", errICC)
	}
	be := binary.BigEndian
	if n := be.Uint32(b[0:4]); int64(n) < int64(len(b)) && n >= 132 {
		b = b[:n] // trailing padding is common; a short declared size is trusted
	}
	p := &iccProfile{ColorSpace: string(b[16:20]), Version: be.Uint32(b[8:12])}
	count := int(be.Uint32(b[128:132]))
	if count > maxICCTags || 132+count*12 > len(b) {
		return nil, fmt.Errorf("%w: tag table of %d entries does not fit", errICC, count)
	}
	tags := map[string][]byte{}
	for i := 0; i < count; i++ {
		e := b[132+i*12:]
		sig := string(e[:4])
		off, size := int64(be.Uint32(e[4:8])), int64(be.Uint32(e[8:12]))
		if off+size > int64(len(b)) || size < 8 {
			continue // skip broken entries; a needed one missing fails below
		}
		tags[sig] = b[off : off+size]
	}
	p.Description = iccText(tags["desc"])
	if p.Description == "" {
		p.Description = "ICC " + strings.TrimSpace(p.ColorSpace)
	}
	if w, ok := iccXYZ(tags["wtpt"]); ok {
		p.white = w
	}
	switch p.ColorSpace {
	case "RGB ":
		r, ok1 := iccXYZ(tags["rXYZ"])
		g, ok2 := iccXYZ(tags["gXYZ"])
		bl, ok3 := iccXYZ(tags["bXYZ"])
		c1, ok4 := parseCurve(tags["rTRC"])
		c2, ok5 := parseCurve(tags["gTRC"])
		c3, ok6 := parseCurve(tags["bTRC"])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 {
			p.toXYZ = [9]float64{r[0], g[0], bl[0], r[1], g[1], bl[1], r[2], g[2], bl[2]}
			p.trc = [3]iccCurve{c1, c2, c3}
			if _, ok := invert3(p.toXYZ); ok {
				p.hasMatrix = true
				p.adaptToD50()
			}
		}
	case "GRAY":
		if c, ok := parseCurve(tags["kTRC"]); ok {
			p.trc = [3]iccCurve{c, c, c}
			p.toXYZ = srgbToXYZD50 // gray maps onto the neutral axis: only the curve matters
			p.hasMatrix = true
		}
	}
	return p, nil
}

// adaptToD50 repairs old profiles whose colorants sum to their own white point (often
// D65) instead of the PCS white D50, by a Bradford adaptation from that white.
func (p *iccProfile) adaptToD50() {
	m := p.toXYZ
	sum := [3]float64{m[0] + m[1] + m[2], m[3] + m[4] + m[5], m[6] + m[7] + m[8]}
	w := p.white
	if near3(sum, d50, 0.01) || !(w[0] > 0.5 && w[1] > 0.5 && w[2] > 0.3) || !near3(sum, w, 0.01) {
		return
	}
	p.toXYZ = mul3(bradford(w, d50), m)
}

func iccXYZ(b []byte) ([3]float64, bool) {
	if len(b) < 20 || string(b[:4]) != "XYZ " {
		return [3]float64{}, false
	}
	return [3]float64{s15(b[8:]), s15(b[12:]), s15(b[16:])}, true
}

func s15(b []byte) float64 { return float64(int32(binary.BigEndian.Uint32(b))) / 65536 }

func parseCurve(b []byte) (iccCurve, bool) {
	if len(b) < 12 {
		return iccCurve{}, false
	}
	be := binary.BigEndian
	switch string(b[:4]) {
	case "curv":
		n := int(be.Uint32(b[8:12]))
		if n > 65536 || 12+2*n > len(b) {
			return iccCurve{}, false
		}
		switch n {
		case 0:
			return iccCurve{linear: true}, true
		case 1:
			g := float64(be.Uint16(b[12:14])) / 256
			if g <= 0 || g > 10 {
				return iccCurve{}, false
			}
			return iccCurve{gamma: g}, true
		}
		t := make([]float64, n)
		for i := range t {
			t[i] = float64(be.Uint16(b[12+2*i:])) / 65535
		}
		return iccCurve{table: t}, true
	case "para":
		ft := int(be.Uint16(b[8:10]))
		np := [...]int{1, 3, 4, 5, 7}
		if ft > 4 || 12+4*np[ft] > len(b) {
			return iccCurve{}, false
		}
		ps := make([]float64, 7)
		for i := 0; i < np[ft]; i++ {
			ps[i] = s15(b[12+4*i:])
		}
		if ps[0] <= 0 || ps[0] > 10 || (ft >= 1 && ps[1] == 0) {
			return iccCurve{}, false
		}
		return iccCurve{para: ps, ptype: ft}, true
	}
	return iccCurve{}, false
}

// iccText reads a v2 textDescriptionType or a v4 multiLocalizedUnicodeType.
func iccText(b []byte) string {
	if len(b) < 12 {
		return ""
	}
	be := binary.BigEndian
	switch string(b[:4]) {
	case "desc":
		n := int(be.Uint32(b[8:12]))
		if n <= 0 || 12+n > len(b) {
			return ""
		}
		s := string(b[12 : 12+n])
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return strings.TrimSpace(strings.ToValidUTF8(s, ""))
	case "mluc":
		if len(b) < 28 {
			return ""
		}
		nrec := int(be.Uint32(b[8:12]))
		if nrec < 1 {
			return ""
		}
		ln, off := int(be.Uint32(b[20:24])), int(be.Uint32(b[24:28]))
		if off+ln > len(b) || ln%2 != 0 {
			return ""
		}
		u := make([]uint16, ln/2)
		for i := range u {
			u[i] = be.Uint16(b[off+2*i:])
		}
		return strings.TrimSpace(strings.TrimRight(string(utf16.Decode(u)), "\x00"))
	case "text":
		return strings.TrimSpace(strings.TrimRight(string(b[8:]), "\x00"))
	}
	return ""
}

// isSRGB reports whether converting from p to sRGB would change nothing that matters.
func (p *iccProfile) isSRGB() bool {
	if !p.hasMatrix || p.ColorSpace != "RGB " {
		return false
	}
	for i := range p.toXYZ {
		if math.Abs(p.toXYZ[i]-srgbToXYZD50[i]) > 0.003 {
			return false
		}
	}
	for c := 0; c < 3; c++ {
		for i := 1; i <= 32; i++ {
			x := float64(i) / 32
			if math.Abs(p.trc[c].eval(x)-float64(imaging.SRGBToLinear(float32(x)))) > 0.002 {
				return false
			}
		}
	}
	return true
}

// converts reports whether the profile can be converted by matrix and curves.
func (p *iccProfile) converts() bool { return p.hasMatrix && !p.isSRGB() }

// lut builds, per channel, a table from n evenly spaced encoded codes to linear light
// in the profile's own primaries.
func (p *iccProfile) lut(n int) [3][]float32 {
	var t [3][]float32
	for c := 0; c < 3; c++ {
		if c > 0 && p.ColorSpace == "GRAY" {
			t[c] = t[0]
			continue
		}
		t[c] = make([]float32, n)
		for i := range t[c] {
			v := p.trc[c].eval(float64(i) / float64(n-1))
			if !(v > 0) { // negative or NaN from a malformed curve
				v = 0
			}
			t[c][i] = float32(min(v, 1))
		}
	}
	return t
}

// matrixToSRGB is the 3x3 map from the profile's linear RGB to linear sRGB.
func (p *iccProfile) matrixToSRGB() [9]float32 {
	var out [9]float32
	if p.ColorSpace == "GRAY" {
		out[0], out[4], out[8] = 1, 1, 1
		return out
	}
	m := mul3(xyzD50ToSRGB, p.toXYZ)
	for i := range m {
		out[i] = float32(m[i])
	}
	return out
}

// ToSRGB converts an image decoded as if it were sRGB into true linear sRGB: it undoes
// the sRGB curve, applies the profile's curves, then the primaries matrix. Decoders that
// can apply the profile's curves directly (from integer codes) use lut and applyMatrix.
func (p *iccProfile) ToSRGB(img *imaging.Image) {
	if !p.converts() || img.C < 3 {
		return
	}
	const n = 4096
	lut := p.lut(n + 1)
	m := p.matrixToSRGB()
	w := img.W()
	imaging.Bands(img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			for x := 0; x < w; x++ {
				px := row[x*img.C : x*img.C+3]
				for c := 0; c < 3; c++ {
					e := imaging.LinearToSRGB(px[c]) * n
					i := int(e)
					if i >= n {
						px[c] = lut[c][n]
						continue
					}
					f := e - float32(i)
					px[c] = lut[c][i]*(1-f) + lut[c][i+1]*f
				}
			}
		}
	})
	applyMatrix(img, m)
}

// applyMatrix multiplies the first three channels of every pixel by m.
func applyMatrix(img *imaging.Image, m [9]float32) {
	if img.C < 3 {
		return
	}
	w, c := img.W(), img.C
	imaging.Bands(img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			for x := 0; x < w; x++ {
				px := row[x*c : x*c+3 : x*c+3]
				r, g, b := px[0], px[1], px[2]
				px[0] = max(0, m[0]*r+m[1]*g+m[2]*b)
				px[1] = max(0, m[3]*r+m[4]*g+m[5]*b)
				px[2] = max(0, m[6]*r+m[7]*g+m[8]*b)
			}
		}
	})
}

// Colour science constants: the PCS white and the sRGB colorants adapted to it.
var (
	d50 = [3]float64{0.9642, 1, 0.8249}
	d65 = [3]float64{0.95047, 1, 1.08883}

	srgbToXYZD50 = primariesD50(0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290)
	xyzD50ToSRGB = func() [9]float64 { m, _ := invert3(srgbToXYZD50); return m }()
)

// primariesD50 returns the linear RGB -> XYZ (D50 PCS) matrix of an RGB space given by
// its primaries' and white point's xy chromaticities, Bradford-adapted to D50.
func primariesD50(xr, yr, xg, yg, xb, yb, xw, yw float64) [9]float64 {
	xyz := func(x, y float64) [3]float64 { return [3]float64{x / y, 1, (1 - x - y) / y} }
	r, g, b, w := xyz(xr, yr), xyz(xg, yg), xyz(xb, yb), xyz(xw, yw)
	m := [9]float64{r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]}
	inv, _ := invert3(m)
	s := [3]float64{
		inv[0]*w[0] + inv[1]*w[1] + inv[2]*w[2],
		inv[3]*w[0] + inv[4]*w[1] + inv[5]*w[2],
		inv[6]*w[0] + inv[7]*w[1] + inv[8]*w[2],
	}
	for i := 0; i < 3; i++ {
		m[i*3+0] *= s[0]
		m[i*3+1] *= s[1]
		m[i*3+2] *= s[2]
	}
	return mul3(bradford(w, d50), m)
}

// bradford returns the chromatic adaptation matrix from white src to white dst.
func bradford(src, dst [3]float64) [9]float64 {
	b := [9]float64{0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296}
	bi, _ := invert3(b)
	cone := func(w [3]float64) [3]float64 {
		return [3]float64{
			b[0]*w[0] + b[1]*w[1] + b[2]*w[2],
			b[3]*w[0] + b[4]*w[1] + b[5]*w[2],
			b[6]*w[0] + b[7]*w[1] + b[8]*w[2],
		}
	}
	s, d := cone(src), cone(dst)
	diag := [9]float64{d[0] / s[0], 0, 0, 0, d[1] / s[1], 0, 0, 0, d[2] / s[2]}
	return mul3(bi, mul3(diag, b))
}

func mul3(a, b [9]float64) [9]float64 {
	var m [9]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			m[i*3+j] = a[i*3]*b[j] + a[i*3+1]*b[3+j] + a[i*3+2]*b[6+j]
		}
	}
	return m
}

func invert3(m [9]float64) ([9]float64, bool) {
	det := m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
	if math.Abs(det) < 1e-12 || math.IsNaN(det) {
		return [9]float64{}, false
	}
	d := 1 / det
	return [9]float64{
		(m[4]*m[8] - m[5]*m[7]) * d, (m[2]*m[7] - m[1]*m[8]) * d, (m[1]*m[5] - m[2]*m[4]) * d,
		(m[5]*m[6] - m[3]*m[8]) * d, (m[0]*m[8] - m[2]*m[6]) * d, (m[2]*m[3] - m[0]*m[5]) * d,
		(m[3]*m[7] - m[4]*m[6]) * d, (m[1]*m[6] - m[0]*m[7]) * d, (m[0]*m[4] - m[1]*m[3]) * d,
	}, true
}

func near3(a, b [3]float64, tol float64) bool {
	return math.Abs(a[0]-b[0]) < tol && math.Abs(a[1]-b[1]) < tol && math.Abs(a[2]-b[2]) < tol
}

// adobeRGBProfile is Adobe RGB (1998): its published primaries, D65 white and a pure
// 563/256 power curve.
func adobeRGBProfile() *iccProfile {
	c := iccCurve{gamma: 563.0 / 256}
	return &iccProfile{Description: "Adobe RGB (1998)", ColorSpace: "RGB ", hasMatrix: true,
		toXYZ: primariesD50(0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.3290), trc: [3]iccCurve{c, c, c}}
}
