package quality

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// mefSSIMDirect is a line-by-line transcription of the authors' reference code (one
// scale): it builds every desired patch explicitly. Slow, used as the oracle.
func mefSSIMDirect(xs []*plane, f *plane) float64 {
	k := len(xs)
	const ws = mefWindow
	const bd = ws / 2
	gauss := gaussianWindow(ws, mefSigma)
	w2 := make([]float64, ws*ws)
	for i := range ws {
		for j := range ws {
			w2[i*ws+j] = gauss[i] * gauss[j]
		}
	}
	cc := (mefK * 255) * (mefK * 255)
	var sum float64
	var count int
	vec := make([][]float64, k)
	for i := range vec {
		vec[i] = make([]float64, ws*ws)
	}
	mu := make([]float64, k)
	ed := make([]float64, k)
	for y := bd; y < f.h-bd; y++ {
		for x := bd; x < f.w-bd; x++ {
			for i := range k {
				var s, s2 float64
				for dy := -bd; dy <= bd; dy++ {
					for dx := -bd; dx <= bd; dx++ {
						v := xs[i].pix[(y+dy)*f.w+x+dx]
						vec[i][(dy+bd)*ws+dx+bd] = v
						s += v
						s2 += v * v
					}
				}
				mu[i] = s / (ws * ws)
				sig := s2/(ws*ws) - mu[i]*mu[i]
				ed[i] = math.Sqrt(math.Max(ws*ws*sig, 0)) + 0.001
			}
			// consistency
			var den float64
			sumv := make([]float64, ws*ws)
			for i := range k {
				var nn float64
				for p, v := range vec[i] {
					d := v - mu[i]
					nn += d * d
					sumv[p] += v
				}
				den += math.Sqrt(nn)
			}
			var ms float64
			for _, v := range sumv {
				ms += v
			}
			ms /= float64(len(sumv))
			var num float64
			for _, v := range sumv {
				num += (v - ms) * (v - ms)
			}
			r := (math.Sqrt(num) + matlabEps) / (den + matlabEps)
			r = math.Min(math.Max(r, matlabEps), 1-matlabEps)
			pw := math.Min(math.Tan(math.Pi/2*r), 10)
			wm := make([]float64, k)
			var norm float64
			maxEd := 0.0
			for i := range k {
				wm[i] = math.Pow(ed[i]/ws, pw) + matlabEps
				norm += wm[i]
				maxEd = math.Max(maxEd, ed[i])
			}
			rb := make([]float64, ws*ws)
			for i := range k {
				for p, v := range vec[i] {
					rb[p] += wm[i] / norm * (v - mu[i]) / ed[i]
				}
			}
			var rn float64
			for _, v := range rb {
				rn += v * v
			}
			rn = math.Sqrt(rn)
			if rn > 0 {
				for p := range rb {
					rb[p] = rb[p] / rn * maxEd
				}
			}
			var mu1, mu2 float64
			for dy := -bd; dy <= bd; dy++ {
				for dx := -bd; dx <= bd; dx++ {
					p := (dy+bd)*ws + dx + bd
					mu1 += w2[p] * rb[p]
					mu2 += w2[p] * f.pix[(y+dy)*f.w+x+dx]
				}
			}
			var s1, s2, s12 float64
			for dy := -bd; dy <= bd; dy++ {
				for dx := -bd; dx <= bd; dx++ {
					p := (dy+bd)*ws + dx + bd
					a := rb[p] - mu1
					b := f.pix[(y+dy)*f.w+x+dx] - mu2
					s1 += w2[p] * a * a
					s2 += w2[p] * b * b
					s12 += w2[p] * a * b
				}
			}
			sum += (2*s12 + cc) / (s1 + s2 + cc)
			count++
		}
	}
	return sum / float64(count)
}

func crop(p *plane, x0, y0, w, h int) *plane {
	out := newPlane(w, h)
	for y := range h {
		copy(out.row(y), p.pix[(y0+y)*p.w+x0:(y0+y)*p.w+x0+w])
	}
	return out
}

func TestMEFSSIMMatchesReferenceTranscription(t *testing.T) {
	names := []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"}
	var full []*plane
	for _, n := range names {
		p, err := luma(loadPhoto(t, "brackets", "house_interior_kim", n))
		if err != nil {
			t.Fatal(err)
		}
		full = append(full, p)
	}
	for _, at := range [][2]int{{300, 80}, {40, 300}, {600, 200}} {
		xs := make([]*plane, len(full))
		for i := range full {
			xs[i] = crop(full[i], at[0], at[1], 48, 40)
		}
		// A plain average and one of the sources as the "fused" images.
		avg := newPlane(48, 40)
		for _, x := range xs {
			for p := range avg.pix {
				avg.pix[p] += x.pix[p] / float64(len(xs))
			}
		}
		for fi, f := range []*plane{avg, xs[2]} {
			want := mefSSIMDirect(xs, f)
			got := mefSSIMScale(xs, f)
			if math.Abs(got-want) > 1e-6 { // cancellation in flat patches
				t.Errorf("crop %v fused %d: fast %.12f, reference %.12f", at, fi, got, want)
			}
		}
	}
}

func TestMEFSSIMOrdersFusions(t *testing.T) {
	if testing.Short() {
		t.Skip("several MEF-SSIM evaluations")
	}
	var seq []*imaging.Image
	for _, n := range []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"} {
		seq = append(seq, loadPhoto(t, "brackets", "house_interior_kim", n))
	}
	score := func(f *imaging.Image) float64 {
		r, err := MEFSSIM(seq, f, MEFOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Score
	}
	// The linear-light average keeps every bracket's structure somewhat; a single dark
	// bracket loses the shadows entirely.
	avg := imaging.New(seq[0].W(), seq[0].H(), 3)
	for _, m := range seq {
		for i, v := range m.Pix {
			avg.Pix[i] += v / float32(len(seq))
		}
	}
	sAvg, sDark, sMid := score(avg), score(seq[0]), score(seq[2])
	t.Logf("MEF-SSIM average %.4f, darkest %.4f, C %.4f", sAvg, sDark, sMid)
	if !(sDark < sMid) {
		t.Errorf("darkest bracket scored %.4f, not below the middle one %.4f", sDark, sMid)
	}
	if sAvg <= 0.5 || sAvg >= 1 {
		t.Errorf("average scored %.4f, want within (0.5, 1)", sAvg)
	}
	if _, err := MEFSSIM(seq[:1], avg, MEFOptions{}); err == nil {
		t.Error("one source accepted")
	}
	if _, err := MEFSSIM(seq, shrink(avg, 2), MEFOptions{}); err == nil {
		t.Error("size mismatch accepted")
	}
}
