package fuse_test

import (
	"context"
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
)

// encLuma returns the encoded luma of every pixel.
func encLuma(m *imaging.Image) []float64 {
	out := make([]float64, m.W()*m.H())
	for y := 0; y < m.H(); y++ {
		r := m.Row(y)
		for x := 0; x < m.W(); x++ {
			out[y*m.W()+x] = float64(imaging.LinearToSRGB(0.2126*r[3*x] + 0.7152*r[3*x+1] + 0.0722*r[3*x+2]))
		}
	}
	return out
}

// blownMask marks pixels whose brightest channel is clipped.
func blownMask(m *imaging.Image) []bool {
	out := make([]bool, m.W()*m.H())
	for y := 0; y < m.H(); y++ {
		r := m.Row(y)
		for x := 0; x < m.W(); x++ {
			out[y*m.W()+x] = max(r[3*x], r[3*x+1], r[3*x+2]) >= 0.98
		}
	}
	return out
}

// dilate grows the mask by a square of radius r.
func dilate(m []bool, w, h, r int) []bool {
	tmp := make([]bool, len(m))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for d := max(0, x-r); d <= min(w-1, x+r); d++ {
				if m[y*w+d] {
					tmp[y*w+x] = true
					break
				}
			}
		}
	}
	out := make([]bool, len(m))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for d := max(0, y-r); d <= min(h-1, y+r); d++ {
				if tmp[d*w+x] {
					out[y*w+x] = true
					break
				}
			}
		}
	}
	return out
}

// haloRatio measures halos the way they look: next to a blown window, how the fused
// image relates to the reference bracket, divided by the same a little farther away
// (1 is no halo). A Mertens halo darkens or brightens a band along the frame.
func haloRatio(ref, out *imaging.Image) (float64, int) {
	w, h := ref.W(), ref.H()
	blown := blownMask(ref)
	d4, d12, d24, d40 := dilate(blown, w, h, 4), dilate(blown, w, h, 12), dilate(blown, w, h, 24), dilate(blown, w, h, 40)
	lf, lr := encLuma(out), encLuma(ref)
	var nearF, nearR, farF, farR float64
	n := 0
	for i := range blown {
		if lr[i] < 0.1 || lr[i] > 0.9 {
			continue
		}
		switch {
		case d12[i] && !d4[i]:
			nearF += lf[i]
			nearR += lr[i]
			n++
		case d40[i] && !d24[i]:
			farF += lf[i]
			farR += lr[i]
		}
	}
	return (nearF / nearR) / (farF / farR), n
}

// TestNoHaloAtWindows checks that the additions to Mertens fusion (detail-aware
// weights, lighter exposure weight, deghosting) add no halo around windows: the
// halo ratio must be at least as close to 1 as classic Mertens fusion's, and within
// 30% absolutely (enfuse and OpenCV measure 0.62 and 0.65 on this scene).
func TestNoHaloAtWindows(t *testing.T) {
	seq := loadHouse(t)
	out, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	classicOpt := fuse.DefaultOptions()
	classicOpt.Exposure, classicOpt.DetailPower, classicOpt.Deghost = 1, 0, 0
	classic, err := fuse.Fuse(context.Background(), seq, classicOpt)
	if err != nil {
		t.Fatal(err)
	}
	r, n := haloRatio(seq[2], out)
	rc, _ := haloRatio(seq[2], classic)
	if n < 500 {
		t.Fatalf("only %d pixels next to windows", n)
	}
	t.Logf("halo ratio %.3f (classic Mertens %.3f)", r, rc)
	if math.Abs(1-r) > math.Abs(1-rc)+0.01 || math.Abs(1-r) > 0.3 {
		t.Errorf("halo ratio %.3f, classic Mertens %.3f", r, rc)
	}
}

// TestWindowPull checks the default pull against none: windows blown in the
// reference come out darker and closer to the darker bracket's view, the room around
// them does not change, and the frames get no halo (the halo ratio stays as close to
// 1 as without the pull). A full-strength pull must pull further.
func TestWindowPull(t *testing.T) {
	seq := loadHouse(t)
	ref, darker := seq[2], seq[1]
	off := fuse.DefaultOptions()
	off.WindowPull = 0
	plain, err := fuse.Fuse(context.Background(), seq, off)
	if err != nil {
		t.Fatal(err)
	}
	if fuse.DefaultOptions().WindowPull <= 0 {
		t.Fatal("window pull is off by default")
	}
	pulled, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	full := fuse.DefaultOptions()
	full.WindowPull = 1
	strong, err := fuse.Fuse(context.Background(), seq, full)
	if err != nil {
		t.Fatal(err)
	}
	w, h := ref.W(), ref.H()
	blown := blownMask(ref)
	// The window interior: blown and at least 6 pixels from anything that is not.
	notBlown := make([]bool, len(blown))
	for i, b := range blown {
		notBlown[i] = !b
	}
	edge := dilate(notBlown, w, h, 6)
	far := dilate(blown, w, h, 30)
	lp, lq, ls, ld := encLuma(plain), encLuma(pulled), encLuma(strong), encLuma(darker)
	var inP, inQ, inS, viewP, viewQ, outDiff float64
	var nIn, nOut int
	for i := range blown {
		switch {
		case blown[i] && !edge[i]:
			inP += lp[i]
			inQ += lq[i]
			inS += ls[i]
			viewP += math.Abs(lp[i] - ld[i])
			viewQ += math.Abs(lq[i] - ld[i])
			nIn++
		case !far[i]:
			outDiff += math.Abs(lp[i] - lq[i])
			nOut++
		}
	}
	n := float64(nIn)
	inP, inQ, inS, viewP, viewQ, outDiff = inP/n, inQ/n, inS/n, viewP/n, viewQ/n, outDiff/float64(nOut)
	rp, _ := haloRatio(ref, plain)
	rq, _ := haloRatio(ref, pulled)
	t.Logf("window luma %.3f off, %.3f default, %.3f full; off the darker bracket's view by %.3f off, %.3f default; room change %.4f; halo ratio %.3f off, %.3f default",
		inP, inQ, inS, viewP, viewQ, outDiff, rp, rq)
	if inQ > inP-0.01 || inS > inQ-0.05 {
		t.Errorf("windows not pulled down: %.3f off, %.3f default, %.3f full", inP, inQ, inS)
	}
	if viewQ > viewP-0.01 {
		t.Errorf("windows no closer to the darker bracket's view: %.3f off, %.3f default", viewP, viewQ)
	}
	if outDiff > 0.005 {
		t.Errorf("the pull changed the room away from the windows by %.4f", outDiff)
	}
	if math.Abs(1-rq) > math.Abs(1-rp)+0.005 {
		t.Errorf("the pull adds a halo at the window frames: ratio %.3f, %.3f without", rq, rp)
	}
}
