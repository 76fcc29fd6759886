// Package align registers exposure brackets of one scene to a reference bracket.
//
// It works on a reduced copy of each bracket (a power-of-two box reduction, at most
// Options.WorkSide on the longer side) in a form that does not depend on exposure:
// median-threshold bitmaps (Ward 2003) for a coarse translation, then Lucas–Kanade
// tracking of Shi–Tomasi corners on histogram-equalized luma, with a gain and offset
// per patch, for sub-pixel correspondences. A translation is fitted to them; when its
// residual is above Options.ResidualThreshold a homography is fitted by RANSAC.
// Brackets are chained by brightness (each to its neighbour towards the reference),
// so no pair differs by more than one bracket step. Warping is bilinear, in parallel
// row bands.
package align

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Model says which motion model a Transform was fitted with.
type Model int

// Motion models, simplest first.
const (
	ModelIdentity Model = iota
	ModelTranslation
	ModelHomography
	// ModelMesh is a homography (or translation) plus a smooth Mesh.
	ModelMesh
)

func (m Model) String() string {
	switch m {
	case ModelIdentity:
		return "identity"
	case ModelTranslation:
		return "translation"
	case ModelHomography:
		return "homography"
	case ModelMesh:
		return "mesh"
	}
	return fmt.Sprintf("Model(%d)", int(m))
}

// Transform registers one bracket to the reference.
type Transform struct {
	// M maps reference pixel coordinates to this bracket's pixel coordinates
	// (full resolution, pixel centres at integers): the aligned bracket at (x, y) is
	// the bracket sampled at M·(x, y, 1).
	M     Mat3
	Mesh  *Mesh // nil unless Model is ModelMesh
	Model Model
	// Matches is the number of correspondences the model was fitted to (0 for the
	// reference and when only the coarse bitmap search succeeded).
	Matches int
	// Residual is the RMS distance, in full-resolution pixels, between the matched
	// points and where the model puts them (for a chained bracket, of its last link).
	Residual float64
}

// Options tunes Align and Estimate. The zero value is valid and means the defaults.
type Options struct {
	// WorkSide is the longest side, in pixels, of the reduced copies the motion is
	// estimated on. 0 means 2100 (a 12 MP phone frame is analysed at half size, a
	// 21 MP one at a quarter).
	WorkSide int
	// ResidualThreshold is the translation residual, in full-resolution pixels, above
	// which a homography is tried. 0 means 0.3.
	ResidualThreshold float64
	// TranslationOnly never fits a homography.
	TranslationOnly bool
	// IdentityTolerance: a transform that moves no point of the frame by more than
	// this many pixels is treated as identity and the bracket is not resampled:
	// bilinear resampling softens more than such a shift misaligns, and it is the
	// size of the estimator's own error. 0 means 0.1.
	IdentityTolerance float64
}

func (o Options) withDefaults() Options {
	if o.WorkSide <= 0 {
		o.WorkSide = 2100
	}
	if o.ResidualThreshold <= 0 {
		o.ResidualThreshold = 0.3
	}
	if o.IdentityTolerance <= 0 {
		o.IdentityTolerance = 0.1
	}
	return o
}

// Align registers every bracket to imgs[ref] and returns the aligned brackets with
// their transforms. Brackets whose transform is the identity (within
// Options.IdentityTolerance), the reference included, are returned as they are, not
// copied; the others are resampled into new images of the reference's size, with
// edge pixels repeated where a bracket does not cover the frame. Once ctx is done it
// returns ctx.Err() within a bracket's reduction or a few rows of a warp.
func Align(ctx context.Context, imgs []*imaging.Image, ref int, opt Options) ([]*imaging.Image, []Transform, error) {
	ts, err := Estimate(ctx, imgs, ref, opt)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*imaging.Image, len(imgs))
	for i, t := range ts {
		if t.Model == ModelIdentity {
			out[i] = imgs[i]
			continue
		}
		if out[i], err = Warp(ctx, imgs[i], t); err != nil {
			return nil, nil, err
		}
	}
	return out, ts, nil
}

// ReferenceIndex returns the index of the bracket with the median mean luma (the
// brighter of the two middle ones for an even count), the usual reference.
func ReferenceIndex(imgs []*imaging.Image) int {
	if len(imgs) == 0 {
		return -1
	}
	type lm struct {
		i    int
		mean float64
	}
	ms := make([]lm, len(imgs))
	for i, m := range imgs {
		ms[i] = lm{i, meanLuma(m)}
	}
	sort.SliceStable(ms, func(a, b int) bool { return ms[a].mean < ms[b].mean })
	return ms[len(ms)/2].i
}

// meanLuma averages the encoded luma over every fourth pixel of every fourth row.
func meanLuma(m *imaging.Image) float64 {
	if m == nil || m.W() == 0 || m.H() == 0 {
		return 0
	}
	var s float64
	var n int
	var lin []float32
	if m.IsNarrow() {
		lin = make([]float32, m.W()*m.C)
	}
	for y := 0; y < m.H(); y += 4 {
		row := m.LinearRow(y, lin)
		for x := 0; x < m.W(); x += 4 {
			v := row[x*m.C]
			if m.C >= 3 {
				v = 0.2126*row[x*m.C] + 0.7152*row[x*m.C+1] + 0.0722*row[x*m.C+2]
			}
			s += float64(imaging.Encode16(v))
			n++
		}
	}
	return s / float64(n)
}

func validate(imgs []*imaging.Image, ref int) error {
	if len(imgs) == 0 {
		return errors.New("align: no images")
	}
	if ref < 0 || ref >= len(imgs) {
		return fmt.Errorf("align: reference index %d outside 0..%d", ref, len(imgs)-1)
	}
	for i, m := range imgs {
		if m == nil {
			return fmt.Errorf("align: image %d is nil", i)
		}
		if m.C != 1 && m.C < 3 {
			return fmt.Errorf("align: image %d has %d channels, want 1, 3 or 4", i, m.C)
		}
		if !imaging.SameSize(m, imgs[ref]) {
			return fmt.Errorf("align: image %d is %dx%d, the reference is %dx%d", i, m.W(), m.H(), imgs[ref].W(), imgs[ref].H())
		}
		if m.W() < 64 || m.H() < 64 {
			return fmt.Errorf("align: image %d is %dx%d, smaller than 64x64", i, m.W(), m.H())
		}
		if err := m.CheckBuffer(); err != nil {
			return fmt.Errorf("align: image %d: %w", i, err)
		}
	}
	return nil
}

// WorkPixels is the number of pixels of the reduced copy of a w×h bracket that
// Estimate works on with opt (the memory estimate scales with it).
func WorkPixels(w, h int, opt Options) int {
	f := workFactor(w, h, opt.withDefaults())
	return (w / f) * (h / f)
}

func workFactor(w, h int, opt Options) int {
	f := 1
	for max(w, h)/f > opt.WorkSide {
		f *= 2
	}
	return f
}

// Estimate computes the transforms Align would apply, without resampling. It checks
// ctx between brackets and between pairs.
func Estimate(ctx context.Context, imgs []*imaging.Image, ref int, opt Options) ([]Transform, error) {
	if err := validate(imgs, ref); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	W, H := imgs[ref].W(), imgs[ref].H()
	f := workFactor(W, H, opt)
	ws := make([]*prepared, len(imgs))
	for i, m := range imgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ws[i] = prepare(reduceWork(m, f))
	}
	order := make([]int, len(imgs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ws[order[a]].mean < ws[order[b]].mean })
	pos := 0
	for i, j := range order {
		if j == ref {
			pos = i
		}
	}
	ts := make([]Transform, len(imgs))
	ts[ref] = Transform{M: Identity, Model: ModelIdentity}
	link := func(src, tgt int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := estimatePair(ws[tgt], ws[src], f, W, H, opt)
		if err != nil {
			return fmt.Errorf("align: bracket %d to %d: %w", src, tgt, err)
		}
		t = compose(t, ts[tgt], W, H)
		if t.M.maxDisplacement(W, H)+t.Mesh.maxAbs() <= opt.IdentityTolerance {
			t.Model, t.M, t.Mesh = ModelIdentity, Identity, nil
		}
		ts[src] = t
		return nil
	}
	for i := pos + 1; i < len(order); i++ {
		if err := link(order[i], order[i-1]); err != nil {
			return nil, err
		}
	}
	for i := pos - 1; i >= 0; i-- {
		if err := link(order[i], order[i+1]); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// prepared is a reduced bracket with what matching needs from it, computed once.
type prepared struct {
	mean   float64
	levels []*level // equalized luma, finest first
	mtb    *bitmaps
}

func prepare(w *work) *prepared {
	l0 := makeLevel(w.eq, w.valid)
	l1 := makeLevel(w.eq.half(), halfMask(w.valid, w.eq.w, w.eq.h))
	// The bitmap search runs from half the working size: tracking refines it anyway.
	return &prepared{mean: w.mean, levels: []*level{l0, l1}, mtb: makeBitmaps(w.luma.half(), 7)}
}

// minMatches is the fewest tracked corners a fitted model is trusted with.
const minMatches = 12

// compose returns the transform that applies inner (reference to the neighbour) and
// then outer (neighbour to this bracket). Matrices multiply; a mesh is resampled at
// its nodes from the exact composition.
func compose(outer, inner Transform, w, h int) Transform {
	t := outer
	t.M = outer.M.Mul(inner.M).normalized()
	t.Model = max(outer.Model, inner.Model)
	if outer.Mesh == nil && inner.Mesh == nil {
		return t
	}
	cols, rows := meshCols, meshRows
	mesh := &Mesh{Cols: cols, Rows: rows, W: w, H: h, D: make([][2]float64, cols*rows)}
	for j := 0; j < rows; j++ {
		for i := 0; i < cols; i++ {
			x, y := mesh.node(i, j)
			ix, iy := inner.apply(x, y)
			ox, oy := outer.apply(ix, iy)
			mx, my := t.M.Apply(x, y)
			mesh.D[j*cols+i] = [2]float64{ox - mx, oy - my}
		}
	}
	t.Mesh = mesh
	return t
}

// Mesh size: nodes per row and per column.
const (
	meshCols = 9
	meshRows = 7
)

// estimatePair finds the transform from tgt's coordinates to src's, at full scale
// (a W×H frame reduced by f for the analysis).
func estimatePair(tgt, src *prepared, fi, W, H int, opt Options) (Transform, error) {
	f := float64(fi)
	// Start tracking from the bitmap translation and from no motion, and keep
	// whichever follows more corners: on nearly blown or black brackets the bitmaps can
	// be misled, while most brackets move little.
	bx, by := mtbShift(tgt.mtb, src.mtb)
	margin := patchRadius + 4
	pts := corners(tgt.levels[0], tgt.levels[1], margin)
	ms := track(tgt.levels, src.levels, pts, 0, 0)
	dx, dy := float64(2*bx), float64(2*by)
	if bx != 0 || by != 0 {
		if alt := track(tgt.levels, src.levels, pts, dx, dy); len(alt) > len(ms) {
			ms = alt
		}
	}
	if len(ms) < minMatches {
		// Too little texture to track. Trust the bitmaps only when the shift they
		// found clearly beats staying put; otherwise assume the camera did not move.
		if (bx != 0 || by != 0) && mtbError(tgt.mtb, src.mtb, bx, by)*10 < mtbError(tgt.mtb, src.mtb, 0, 0)*7 {
			return Transform{M: Translation(dx, dy).rescale(f), Model: ModelTranslation, Residual: math.NaN()}, nil
		}
		return Transform{M: Identity, Model: ModelIdentity, Residual: math.NaN()}, nil
	}
	const inlier = 1.0 // working pixels
	t, in, res := fitTranslation(ms, inlier)
	if len(in) < minMatches {
		return Transform{}, fmt.Errorf("no consistent motion among %d tracked corners", len(ms))
	}
	best := Transform{M: t, Model: ModelTranslation, Matches: len(in), Residual: res * f}
	if !opt.TranslationOnly && res*f > opt.ResidualThreshold {
		if h, hin, ok := fitHomography(ms, inlier); ok && len(hin) >= len(in)*3/4 {
			if hr := rms(h, hin); hr < 0.8*res && plausible(h, tgt.levels[0].img.w, tgt.levels[0].img.h) {
				best = Transform{M: h, Model: ModelHomography, Matches: len(hin), Residual: hr * f}
			}
		}
	}
	work := best.M
	best.M = best.M.rescale(f)
	if opt.TranslationOnly || best.Residual <= opt.ResidualThreshold || best.Matches < 8*meshCols {
		return best, nil
	}
	// Still above the threshold: fit a smooth mesh to what the matrix leaves. With
	// about two parameters per node it could fit noise, so it must earn its place by
	// cross-validation: fitted on half of the matches, it has to predict the other half
	// clearly better than the matrix alone.
	w, h := tgt.levels[0].img.w, tgt.levels[0].img.h
	var near []match
	for _, m := range ms {
		if reproj(work, m) <= 2*inlier {
			near = append(near, m)
		}
	}
	mesh := fitRobustMesh(work, near, w, h)
	if mesh == nil {
		return best, nil
	}
	var even, odd []match
	for i, m := range near {
		if i%2 == 0 {
			even = append(even, m)
		} else {
			odd = append(odd, m)
		}
	}
	if half := fitRobustMesh(work, even, w, h); half == nil ||
		meshRMS(work, half, odd, 0.75*inlier) >= 0.85*meshRMS(work, nil, odd, 0.75*inlier) {
		return best, nil
	}
	mr := meshRMS(work, mesh, near, 0.75*inlier) * f
	// Carry the mesh to full scale: at full-size X the displacement is f times the
	// working mesh at the working position of X.
	full := &Mesh{Cols: meshCols, Rows: meshRows, W: W, H: H, D: make([][2]float64, meshCols*meshRows)}
	for j := 0; j < meshRows; j++ {
		for i := 0; i < meshCols; i++ {
			x, y := full.node(i, j)
			dx, dy := mesh.At((x+0.5)/f-0.5, (y+0.5)/f-0.5)
			full.D[j*meshCols+i] = [2]float64{dx * f, dy * f}
		}
	}
	return Transform{M: best.M, Mesh: full, Model: ModelMesh, Matches: best.Matches, Residual: mr}, nil
}

// meshSmooth weighs the membrane term of the mesh fit against the matches.
const meshSmooth = 2.0

// fitRobustMesh fits a mesh to the residuals of ms under m, drops the matches it
// leaves more than 0.75 working pixels off, and fits again.
func fitRobustMesh(m Mat3, ms []match, w, h int) *Mesh {
	if len(ms) < 4*meshCols {
		return nil
	}
	mesh := fitMesh(m, ms, w, h, meshCols, meshRows, meshSmooth)
	if mesh == nil {
		return nil
	}
	var kept []match
	for _, p := range ms {
		t := Transform{M: m, Mesh: mesh}
		x, y := t.apply(p.tx, p.ty)
		if math.Hypot(x-p.sx, y-p.sy) <= 0.75 {
			kept = append(kept, p)
		}
	}
	if len(kept) < 4*meshCols {
		return nil
	}
	return fitMesh(m, kept, w, h, meshCols, meshRows, meshSmooth)
}

// meshRMS is the RMS error of the matches within limit of m plus mesh (mesh may be
// nil); matches beyond limit count as limit.
func meshRMS(m Mat3, mesh *Mesh, ms []match, limit float64) float64 {
	if len(ms) == 0 {
		return math.Inf(1)
	}
	t := Transform{M: m, Mesh: mesh}
	var s float64
	for _, p := range ms {
		x, y := t.apply(p.tx, p.ty)
		d := math.Min(math.Hypot(x-p.sx, y-p.sy), limit)
		s += d * d
	}
	return math.Sqrt(s / float64(len(ms)))
}

// plausible rejects homographies no hand-held bracket pair could need: corners moving
// by more than a tenth of the frame or folding over.
func plausible(h Mat3, w, ht int) bool {
	if h.maxDisplacement(w, ht) > 0.1*float64(max(w, ht)) {
		return false
	}
	det := h[0]*h[4] - h[1]*h[3]
	return det > 0.8 && det < 1.25
}
