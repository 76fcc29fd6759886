package cull

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// room is a synthetic scene's radiance (linear, 0.18 = a mid-grey wall at the
// middle exposure): discs of random size and reflectance (edges in every
// direction, at every scale) over a softly textured wall, and a window some 6 EV
// brighter with its own detail.
func room(w, h int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := make([]float32, w*h)
	for i := range r {
		r[i] = 0.18
	}
	for range 200 {
		cx, cy := rng.Float64()*float64(w), rng.Float64()*float64(h)
		rad := 3 + 50*rng.Float64()*rng.Float64()
		v := float32(0.02 + 0.6*rng.Float64())
		for y := max(0, int(cy-rad)); y < min(h, int(cy+rad)+1); y++ {
			for x := max(0, int(cx-rad)); x < min(w, int(cx+rad)+1); x++ {
				if dx, dy := float64(x)-cx, float64(y)-cy; dx*dx+dy*dy <= rad*rad {
					r[y*w+x] = v
				}
			}
		}
	}
	// Texture: noise smoothed over a few pixels, as paint and fabric have.
	n := make([]float32, w*h)
	for i := range n {
		n[i] = float32(rng.NormFloat64())
	}
	for y := 2; y < h-2; y++ {
		for x := 2; x < w-2; x++ {
			var s float32
			for dy := -2; dy <= 2; dy++ {
				for dx := -2; dx <= 2; dx++ {
					s += n[(y+dy)*w+x+dx]
				}
			}
			r[y*w+x] *= 1 + 0.1*s/5
		}
	}
	for y := h / 6; y < h/2; y++ {
		for x := w * 3 / 5; x < w*4/5; x++ {
			r[y*w+x] = float32(8 + 6*math.Sin(float64(x)/5)*math.Sin(float64(y)/7))
		}
	}
	return r
}

// shot is the room at an exposure (EV relative to the middle one), shifted by dx
// pixels, as an 8-bit camera file: clipped, noisy, rounded to sRGB codes.
func shot(r []float32, w, h int, ev float64, dx int, seed uint64) *imaging.Image {
	rng := rand.New(rand.NewPCG(seed, 2))
	img := imaging.New(w, h, 3)
	k := float32(math.Exp2(ev))
	for y := range h {
		row := img.Row(y)
		for x := range w {
			sx := min(max(x+dx, 0), w-1)
			v := min(r[y*w+sx]*k, 1)
			for c := range 3 {
				code := float64(imaging.Encode16(v))/257 + 0.8*rng.NormFloat64()
				row[3*x+c] = imaging.Decode8(uint8(math.Round(min(max(code, 0), 255))))
			}
		}
	}
	return img
}

// boxBlur averages img over rx×ry pixels (a lens out of focus when both are set,
// a shake along one axis when one is 1).
func boxBlur(img *imaging.Image, rx, ry int) *imaging.Image {
	w, h, c := img.W(), img.H(), img.C
	out := imaging.New(w, h, c)
	for y := range h {
		for x := range w {
			for k := range c {
				var s float32
				for dy := -ry / 2; dy <= ry/2; dy++ {
					for dx := -rx / 2; dx <= rx/2; dx++ {
						s += img.At(min(max(x+dx, 0), w-1), min(max(y+dy, 0), h-1), k)
					}
				}
				out.Set(x, y, k, s/float32((rx/2*2+1)*(ry/2*2+1)))
			}
		}
	}
	return out
}

func flatFrame(w, h int, level float32, seed uint64) *imaging.Image {
	rng := rand.New(rand.NewPCG(seed, 3))
	img := imaging.New(w, h, 3)
	for y := range h {
		for x := range w {
			v := level * (1 + 0.08*(float32(x)/float32(w)-0.5))
			code := float64(imaging.Encode16(v))/257 + 1.2*rng.NormFloat64()
			for c := range 3 {
				img.Set(x, y, c, imaging.Decode8(uint8(math.Round(min(max(code, 0), 255)))))
			}
		}
	}
	return img
}

const sw, sh = 600, 400

// bracket is a 5-frame bracket of the room, -4 to +4 EV, with EXIF exposures.
func bracket(r []float32) []Frame {
	var fs []Frame
	for i, ev := range []float64{-4, -2, 0, 2, 4} {
		fs = append(fs, Frame{Image: shot(r, sw, sh, ev, 0, uint64(i)), ExposureTime: math.Exp2(ev) / 60, FNumber: 8, ISO: 100})
	}
	return fs
}

func codes(v []Verdict) []Code {
	out := make([]Code, len(v))
	for i := range v {
		out[i] = v[i].Code
		if v[i].Keep != (v[i].Code == CodeKeep) || v[i].Reason != Reason(v[i].Code) {
			panic("inconsistent verdict")
		}
	}
	return out
}

func wantCodes(t *testing.T, got []Verdict, want ...Code) {
	t.Helper()
	g := codes(got)
	for i := range want {
		if g[i] != want[i] {
			t.Fatalf("verdicts %q, want %q", g, want)
		}
	}
}

// A clean bracket loses nothing: not its darkest frame (black but for the window)
// nor its brightest (mostly clipped).
func TestJudgeKeepsCleanBracket(t *testing.T) {
	fs := bracket(room(sw, sh, 1))
	wantCodes(t, JudgeWith(fs, Options{Trace: t.Logf}), "", "", "", "", "")
	if got := Judge(nil); len(got) != 0 {
		t.Fatalf("no frames: %v", got)
	}
}

func TestJudgeBlur(t *testing.T) {
	r := room(sw, sh, 2)
	fs := bracket(r)
	fs[2].Image = boxBlur(fs[2].Image, 9, 1)
	wantCodes(t, JudgeWith(fs, Options{Trace: t.Logf}), "", "", CodeMotion, "", "")
	fs = bracket(r)
	fs[3].Image = boxBlur(fs[3].Image, 5, 5)
	wantCodes(t, Judge(fs), "", "", "", CodeFocus, "")
}

func TestJudgeBlackAndTestFrames(t *testing.T) {
	fs := bracket(room(sw, sh, 3))
	fs[0].Image = flatFrame(sw, sh, 0.0004, 1)
	fs[4].Image = flatFrame(sw, sh, 0.2, 2)
	wantCodes(t, JudgeWith(fs, Options{Trace: t.Logf}), CodeBlack, "", "", "", CodeTest)
	// The middle frame with the lens cap on: the EXIF says it should be bright.
	fs = bracket(room(sw, sh, 3))
	fs[2].Image = shot(room(sw, sh, 3), sw, sh, -9, 0, 9)
	wantCodes(t, JudgeWith(fs, Options{Trace: t.Logf}), "", "", CodeBlack, "", "")
}

// Every frame black: one is kept all the same.
func TestJudgeNeverSetsAsideAll(t *testing.T) {
	fs := []Frame{{Image: flatFrame(sw, sh, 0.0004, 1)}, {Image: flatFrame(sw, sh, 0.0002, 2)}}
	v := Judge(fs)
	if v[0].Keep == v[1].Keep {
		t.Fatalf("verdicts %+v, want exactly one kept", v)
	}
}

// A set shot twice keeps the sharper run, whichever comes first, and names the twin.
func TestJudgeRepeatedSet(t *testing.T) {
	r := room(sw, sh, 4)
	a, b := bracket(r), bracket(r)
	for i := range b {
		b[i].Image = boxBlur(b[i].Image, 3, 3)
	}
	v := JudgeWith(append(append([]Frame(nil), b...), a...), Options{Trace: t.Logf})
	wantCodes(t, v, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, "", "", "", "", "")
	if v[1].Twin != 6 {
		t.Fatalf("twin of frame 1: %d, want 6", v[1].Twin)
	}
	v = Judge(append(append([]Frame(nil), a...), b...))
	wantCodes(t, v, "", "", "", "", "", CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat)
}

// Two runs as sharp: the one whose frames did not move between shots is kept.
func TestJudgeRepeatedSetAlignment(t *testing.T) {
	r := room(sw, sh, 5)
	a, b := bracket(r), bracket(r)
	for i := range b {
		b[i].Image = shot(r, sw, sh, float64(2*i-4), 10*(i%2), uint64(10+i))
	}
	v := JudgeWith(append(append([]Frame(nil), a...), b...), Options{Trace: t.Logf})
	wantCodes(t, v, "", "", "", "", "", CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat)
	v = Judge(append(append([]Frame(nil), b...), a...))
	wantCodes(t, v, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, "", "", "", "", "")
}

// Frames without pixels are kept and leave the others' judging as it was.
func TestJudgeMissingImage(t *testing.T) {
	r := room(sw, sh, 6)
	a, b := bracket(r), bracket(r)
	for i := range b {
		b[i].Image = boxBlur(b[i].Image, 3, 3)
	}
	fs := append(append([]Frame{{}}, b...), a...)
	v := Judge(fs)
	wantCodes(t, v, "", CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, CodeRepeat, "", "", "", "", "")
	if v[2].Twin != 7 {
		t.Fatalf("twin of frame 2: %d, want 7", v[2].Twin)
	}
}

// Two rooms shot with one bracket setting are no repeated set, though the EXIF
// exposures repeat.
func TestJudgeTwoRoomsNoRepeat(t *testing.T) {
	fs := append(bracket(room(sw, sh, 7)), bracket(room(sw, sh, 8))...)
	wantCodes(t, JudgeWith(fs, Options{Trace: t.Logf}), "", "", "", "", "", "", "", "", "", "")
}

// BenchmarkJudge judges a 5-frame bracket at 1000×667, the size grouping.Cull
// reads frames at.
func BenchmarkJudge(b *testing.B) {
	const w, h = 1000, 667
	r := room(w, h, 9)
	var fs []Frame
	for i, ev := range []float64{-4, -2, 0, 2, 4} {
		fs = append(fs, Frame{Image: shot(r, w, h, ev, 0, uint64(i)), ExposureTime: math.Exp2(ev) / 60, FNumber: 8, ISO: 100})
	}
	b.ReportAllocs()
	for b.Loop() {
		Judge(fs)
	}
}
