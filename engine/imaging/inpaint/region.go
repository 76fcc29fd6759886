package inpaint

import (
	"context"
	"fmt"
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// region is the part of the photo being worked on: the grown hole plus a margin of
// known pixels to copy from, as a pyramid (levels[0] full resolution).
type region struct {
	roi    image.Rectangle
	alpha  []float32 // per roi pixel: share of the synthesised value in the output
	levels []*level
}

// featherPixels is how many outer pixels of a growth of grow pixels blend the fill
// with the photo: none on small photos, whose one-pixel growth is there to take an
// object's soft edge away entirely.
func featherPixels(grow int) int { return grow / 2 }

// minSources is the fewest source patches a level needs to be worth searching.
const minSources = 64

// minSide is the shortest side a coarse level may have: smaller, and a 7×7 patch
// spans so much of the picture that distinct things look alike.
const minSide = 48

// newRegion copies the roi of img, grows the hole (one bool per image pixel) by grow
// pixels and builds the pyramid, checking ctx between its passes.
func newRegion(ctx context.Context, img *imaging.Image, hole []bool, roi image.Rectangle, grow int) (*region, error) {
	w, h := roi.Dx(), roi.Dy()
	iw := img.W()
	user := make([]bool, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			copy(user[y*w:(y+1)*w], hole[(y+roi.Min.Y)*iw+roi.Min.X:])
		}
	})
	_, bb := maskBounds(user, w, h)
	all := image.Rect(0, 0, w, h)
	// Grow the hole by `grow` pixels.
	toHole := chamferIn(user, w, h, bb.Inset(-grow-1).Intersect(all), false)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l0 := newLevel(w, h, img.C, patchR, false)
	for i, d := range toHole {
		l0.hole[i] = d <= int32(3*grow)
	}
	bb = bb.Inset(-grow).Intersect(all)
	depth := chamferIn(l0.hole, w, h, bb.Inset(-1).Intersect(all), true)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The mask and the inner part of the growth (where an object's soft edge lies) are
	// replaced outright; over the outer featherPixels of the growth the fill fades into
	// the photo. Distances are chamfer units from the mask, 3 per pixel (4 diagonally).
	feather := featherPixels(grow)
	solid := int32(3*(grow-feather) + 1)
	end := float32(3*grow + 3)
	r := &region{roi: roi, alpha: make([]float32, w*h)}
	var radius int32
	for y := bb.Min.Y; y < bb.Max.Y; y++ {
		for x := bb.Min.X; x < bb.Max.X; x++ {
			i := y*w + x
			switch {
			case user[i]:
				r.alpha[i] = 1
			case l0.hole[i]:
				r.alpha[i] = 1
				if d := toHole[i]; d > solid {
					r.alpha[i] = min(1, (end-float32(d))/float32(3*feather+3))
				}
			}
			radius = max(radius, depth[i])
		}
	}
	// Copy the region's pixels, replacing values that are not finite.
	nc := img.C
	if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src := img.Row(y + roi.Min.Y)[roi.Min.X*nc : roi.Max.X*nc]
			dst := l0.lin[y*w*nc : (y+1)*w*nc]
			for i, v := range src {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					v = 0
				}
				dst[i] = v
			}
		}
	}); err != nil {
		return nil, err
	}
	r.matte(ctx, l0, user, bb, grow)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := l0.prepare(ctx, depth); err != nil {
		return nil, err
	}
	if len(l0.srcs) < minSources {
		return nil, fmt.Errorf("%w: only %d intact %dx%d patches around the hole",
			ErrMaskTooLarge, len(l0.srcs), 2*patchR+1, 2*patchR+1)
	}
	r.levels = []*level{l0}
	// Coarser levels until the hole is a few pixels deep (radius in chamfer units of 3).
	rad := float64(radius) / 3
	for cur := l0; rad > 4 && min(cur.w, cur.h) >= 2*minSide; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		next := cur.downsample()
		if err := next.prepare(ctx, nil); err != nil {
			return nil, err
		}
		if len(next.srcs) < minSources {
			break
		}
		r.levels = append(r.levels, next)
		cur = next
		rad /= 2
	}
	return r, nil
}

// chamferIn is chamfer computed only inside r, which must contain every pixel that
// matters: outside it, distances to set pixels read as far and distances to unset
// ones as 0.
func chamferIn(set []bool, w, h int, r image.Rectangle, invert bool) []int32 {
	out := make([]int32, w*h)
	if !invert {
		for i := range out {
			out[i] = farDist
		}
	}
	cw, ch := r.Dx(), r.Dy()
	if cw <= 0 || ch <= 0 {
		return out
	}
	sub := make([]bool, cw*ch)
	for y := 0; y < ch; y++ {
		copy(sub[y*cw:(y+1)*cw], set[(y+r.Min.Y)*w+r.Min.X:])
	}
	d := imaging.Chamfer(sub, cw, ch, invert)
	for y := 0; y < ch; y++ {
		copy(out[(y+r.Min.Y)*w+r.Min.X:(y+r.Min.Y)*w+r.Max.X], d[y*cw:(y+1)*cw])
	}
	return out
}

// farDist is what a chamfer distance reads where there is nothing to measure to.
const farDist = imaging.ChamferFar

// schedule is the work done at one level.
// refineBand is how far from the photo (px) the full-resolution level searches.
const refineBand = 4

type schedule struct {
	em     int // expectation-maximisation iterations
	passes int // PatchMatch passes per iteration
	radius int // random search starts at this radius
	band   int // when above 0, only targets this close to the photo (px) are searched
}

// scheduleFor gives the coarse levels, which are cheap and decide the structure, many
// iterations, and the fine ones, which hold most of the pixels and only refine an
// upsampled field, few: one iteration at the two finest (a second at the half-size
// level smoothed the fill, lowering its gradient, and changed no other score), two
// at the next. The two finest levels search only near the photo, where the fill must
// line up with it: refineBand pixels at full resolution, four times as far (eight
// full-resolution pixels a level pixel) at half size; deeper, the upsampled field is
// kept as it is. Searching all of it changed no score beyond noise (hole SSIM 0.005
// higher, histogram distance 0.008 worse) and cost half of the time on a 12 MP photo.
func (r *region) scheduleFor(k int) schedule {
	l := r.levels[k]
	full := max(l.w, l.h)
	switch {
	case k == len(r.levels)-1:
		return schedule{em: 8, passes: 2, radius: full}
	case k == 0:
		return schedule{em: 1, passes: 2, radius: 4, band: refineBand}
	case k == 1:
		return schedule{em: 1, passes: 2, radius: full, band: 4 * refineBand}
	case k == 2:
		return schedule{em: 2, passes: 2, radius: full}
	default:
		return schedule{em: 3, passes: 2, radius: full}
	}
}

// solve fills the hole of levels[0], coarse to fine. It checks ctx at every level,
// iteration and pass, and the search in every band, and returns ctx.Err() once done.
func (r *region) solve(ctx context.Context, seed int64, progress func(float64)) error {
	top := len(r.levels) - 1
	for k := top; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := r.levels[k]
		sc := r.scheduleFor(k)
		if k == top {
			l.setLocality(onionSigma2)
			from := l.onionFill(seed)
			l.randomInit(seed, k)
			for t, s := range from {
				if s >= 0 && l.nnf[t] >= 0 {
					l.nnf[t] = s
				}
			}
		} else {
			l.setLocality(r.levels[k+1].sigma2)
			l.upsampleFrom(r.levels[k+1], seed, k)
			if sc.band > 0 && k > 0 {
				// Above full resolution the pixels deeper than the search reads are
				// never read again (the next level takes the field, not the pixels), so
				// they need no vote; at full resolution they are the fill.
				l.refine = int32(3 * sc.band)
			}
			if err := l.complete(ctx, k); err != nil {
				return err
			}
			if sc.band > 0 {
				l.refine = int32(3 * sc.band)
			}
			if err := l.features(ctx, true); err != nil {
				return err
			}
		}
		if err := l.evalAll(ctx); err != nil {
			return err
		}
		for it := 0; it < sc.em; it++ {
			for p := 0; p < sc.passes; p++ {
				if err := l.search(ctx, seed, k, it, p, sc.radius); err != nil {
					return err
				}
			}
			if err := l.weigh(ctx); err != nil {
				return err
			}
			if err := l.complete(ctx, k); err != nil {
				return err
			}
			if it < sc.em-1 {
				if err := l.features(ctx, true); err != nil {
					return err
				}
				if err := l.evalAll(ctx); err != nil {
					return err
				}
			}
		}
		// Each level costs about as much as the next coarser ones together.
		progress(0.1 + 0.7/float64(int(1)<<k))
	}
	progress(0.9)
	// What follows works on the full-resolution pixels and field alone: the coarse
	// levels and the search's features go before the blend's buffers come.
	clear(r.levels[1:])
	r.levels = r.levels[:1]
	r.levels[0].dropSearch()
	return r.levels[0].blend(ctx)
}

// complete sets the hole's pixels from the field: by the weighted mean of the patches
// over each pixel at coarse levels, where averaging lets the structure settle, and
// by the most coherent patch at full resolution, where averaging would blur the
// copied texture.
func (l *level) complete(ctx context.Context, k int) error {
	if k == 0 {
		return l.copyCoherent(ctx, l.reach())
	}
	return l.vote(ctx, l.reach())
}

// reach is how deep (chamfer units) a refinement limited to l.refine changes the
// hole: a pixel changes only where a patch over it (or, for the coherent copy, over
// a neighbour) was searched, and the search reads the features that far.
func (l *level) reach() int32 {
	if l.refine >= farDist {
		return farDist
	}
	return l.refine + 4*int32(l.pr+1)
}

// onionSigma2 stands in for the typical patch distance before any has been measured,
// to scale the locality penalty of the onion fill.
const onionSigma2 = 0.003

// composite writes the synthesised pixels into out (a copy of the input), blending
// over the feathered ring; pixels with alpha 0 are not touched.
func (r *region) composite(out *imaging.Image) {
	l := r.levels[0]
	w, nc := l.w, l.nc
	imaging.Bands(l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			hs := l.holeSpans[y]
			row := out.Row(y + r.roi.Min.Y)[r.roi.Min.X*nc : r.roi.Max.X*nc]
			for x := int(hs[0]); x < int(hs[1]); x++ {
				a := r.alpha[y*w+x]
				if a <= 0 {
					continue
				}
				src := l.lin[(y*w+x)*nc : (y*w+x+1)*nc]
				dst := row[x*nc : x*nc+nc]
				if a >= 1 {
					copy(dst, src)
					continue
				}
				for c := range dst {
					dst[c] = a*src[c] + (1-a)*dst[c]
				}
			}
		}
	})
}

// extrapolate leans the fill's first pixels towards the photo's frequency-selective
// extrapolation (see fse.go). The model is of encoded luma, what the eye follows
// across a border; each pixel's encoded colour is shifted by the luma it lacks, so
// the fill keeps its colour. The growth's photo values are read from img.
func (r *region) extrapolate(ctx context.Context, img *imaging.Image, grow int) error {
	l := r.levels[0]
	w, nc, cc := l.w, l.nc, l.cc
	coef := [3]float32{0.299, 0.587, 0.114}
	if cc == 1 {
		coef = [3]float32{1, 0, 0}
	}
	src := func(i int) float32 {
		px := l.lin[i*nc : i*nc+nc]
		if l.hole[i] {
			px = img.Row(i/w + r.roi.Min.Y)[(i%w+r.roi.Min.X)*nc:]
		}
		return encodedLuma(px, cc)
	}
	apply := func(i int, m, v float32) {
		px := l.lin[i*nc : i*nc+nc]
		var e [3]float32
		var y float32
		for c := 0; c < cc; c++ {
			e[c] = encode(px[c])
			y += coef[c] * e[c]
		}
		d := m * (v - y)
		for c := 0; c < cc; c++ {
			px[c] = imaging.SRGBToLinear(min(1, max(0, e[c]+d)))
		}
	}
	return l.extrapolate(ctx, r.alpha, grow, src, apply)
}

// The growth is there for an object's soft edge and halo, which a drawn mask usually
// misses; where a pixel of it shows no trace of the object it is better left as it
// was, for replacing real photo with synthesis is what makes a border visible. matte
// estimates, per growth pixel, how far its colour lies from the photo around it
// (the known pixels within grow+1 px) towards the object's (the mask's pixels within
// the same reach), in encoded colour and along the line between the two means, as a
// linear matte does. What lies within matteNoise standard deviations of the photo's
// own spread along that line is the photo's texture, not the object; beyond it the
// pixel is replaced in proportion, fully once it is matteFull of the way to the
// object. Where the object and its surroundings have nearly the same colour
// (closer than matteEps), the distance is measured against matteEps, so that noise
// is not read as a halo. The photo's spread is measured over matteSpread pixels
// more than the means: within grow+1 px of a growth pixel lie only a handful of
// photo pixels, whose spread often fell short of the texture's, so that texture
// was taken for a halo and replaced (on the benchmark's synthetic holes, which
// have no halo, the mean seam was 0.198 against 0.191 now; the object removals'
// figures did not change).
const (
	matteNoise  = 2
	matteFull   = 0.25
	matteEps    = 0.1
	matteSpread = 3
)

// matte scales the composite alpha of every growth pixel by how much of the
// object's colour it holds (see above); the mask's own pixels stay replaced.
func (r *region) matte(ctx context.Context, l0 *level, user []bool, bb image.Rectangle, grow int) {
	w, h, nc := l0.w, l0.h, l0.nc
	R := grow + 1
	imaging.Bands(bb.Dy(), func(_, y0, y1 int) {
		for y := y0 + bb.Min.Y; y < y1+bb.Min.Y; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			for x := bb.Min.X; x < bb.Max.X; x++ {
				i := y*w + x
				if user[i] || !l0.hole[i] {
					continue
				}
				var in, out [4]float32
				ni, no := 0, 0
				for yy := max(0, y-R); yy <= min(h-1, y+R); yy++ {
					for xx := max(0, x-R); xx <= min(w-1, x+R); xx++ {
						j := yy*w + xx
						switch {
						case user[j]:
							for c := 0; c < nc; c++ {
								in[c] += encode(l0.lin[j*nc+c])
							}
							ni++
						case !l0.hole[j]:
							for c := 0; c < nc; c++ {
								out[c] += encode(l0.lin[j*nc+c])
							}
							no++
						}
					}
				}
				if ni == 0 || no == 0 {
					continue
				}
				var d [4]float32
				var dd float32
				for c := 0; c < nc; c++ {
					in[c] /= float32(ni)
					out[c] /= float32(no)
					d[c] = in[c] - out[c]
					dd += d[c] * d[c]
				}
				dl := float32(math.Sqrt(float64(max(dd, matteEps*matteEps))))
				proj := func(j int) float32 {
					var t float32
					for c := 0; c < nc; c++ {
						t += (encode(l0.lin[j*nc+c]) - out[c]) * d[c]
					}
					return t / dl
				}
				// Spread of the photo around it along that direction.
				var v float32
				nn := 0
				Rs := R + matteSpread
				for yy := max(0, y-Rs); yy <= min(h-1, y+Rs); yy++ {
					for xx := max(0, x-Rs); xx <= min(w-1, x+Rs); xx++ {
						if j := yy*w + xx; !user[j] && !l0.hole[j] {
							t := proj(j)
							v += t * t
							nn++
						}
					}
				}
				noise := matteNoise * float32(math.Sqrt(float64(v/float32(nn))))
				a := min(1, max(0, (proj(i)-noise)/(matteFull*dl)))
				r.alpha[i] *= a
			}
		}
	})
}
