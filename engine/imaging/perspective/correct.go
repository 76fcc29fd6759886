// Package perspective straightens converging verticals and small camera roll in
// architectural photos. It finds line segments on a downscaled luminance plane,
// estimates the vertical vanishing direction from the near-vertical ones, undoes the
// camera rotation that made verticals converge (a homography K R K^-1), crops to the
// largest rectangle of the source's aspect ratio that has no empty corners, and
// resamples that back to the source size with a bicubic warp in parallel row bands.
//
// Of vanishing directions that fit the lines about equally the estimate takes the
// smallest correction, so that the rounding of one JPEG decoder or another cannot
// swing it along the flat valley that verticals on one side of a room leave between
// pitch and roll.
//
// A full correction is what a careful photographer makes when it is modest. When it
// is not, delivered photos (Options.Limits = SafeLimits) get the strongest partial
// correction, along the same rotation, that stays within three limits, and the Result
// says which ones the full correction would have passed:
//
//   - at most 15 degrees of camera rotation undone. The rooms and street-side
//     exteriors of the test photos need at most 11; a library shot up at its gallery
//     and shots from the foot of a building need 18 to 28, and fully straightened
//     those look top-heavy, the facade leaning back at the viewer. Lightroom's
//     Upright "auto" (a balanced correction, unlike "full") leaves them some
//     convergence too.
//   - at least 80 % of the photo's area kept (Frame.KeptArea). Full corrections up to
//     11 degrees keep 82 % or more; the 18 to 28 degree ones keep 56 to 73 %, losing the
//     ground floor or the ceiling. 80 % leaves room above the hard floor of 75 % that no
//     limited correction goes below.
//   - a stretch (Frame.Stretch: the largest over the smallest local magnification in
//     the output) of at most 1.6. A bedroom shot looking down 10.5 degrees reaches 1.54
//     and looks right; the 18 to 28 degree ones reach 1.8 to 2.8, where the upper
//     windows turn visibly taller than the lower ones and the enlargement shows as
//     softness.
//
// Correct and Apply without limits make the full correction asked for.
package perspective

import (
	"context"
	"fmt"
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Model is the camera geometry estimated from one photo.
type Model struct {
	Width, Height int     // size of the photo the model was estimated on
	Focal         float64 // assumed focal length in pixels
	// Vertical is the unit direction of the world's vertical (pointing down) in camera
	// coordinates: x right, y down, z along the optical axis. A level camera has
	// (0, 1, 0).
	Vertical [3]float64
	PitchDeg float64 // camera tilt: positive when it looks up (verticals converge upward)
	RollDeg  float64 // camera roll about the optical axis: positive when the vanishing direction lies right of straight down
	Segments int     // near-vertical line segments found
	Inliers  int     // of those, the ones that agree with the vanishing direction
	Support  float64 // total inlier length in image heights
	Found    bool    // whether the photo has enough vertical structure for a correction
	Reason   string  // why not, when Found is false
}

// Result says what Correct did.
type Result struct {
	Applied  bool
	Reason   string // why not, when Applied is false
	Strength float64
	Model    Model
	// H maps source pixel coordinates to output pixel coordinates (see Homography), so
	// callers can carry points and masks through the correction.
	H Homography
	// RotationDeg is the camera rotation undone at this strength.
	RotationDeg float64
	// Kept is the crop rectangle's width over the output width: below 1 the crop is
	// enlarged to the source size, above 1 (a strong correction that stretches the
	// frame) it is reduced.
	Kept float64
	// Frame is what the applied correction does to the frame.
	Frame Frame
	// Limited is set when the correction asked for passed one of the Limits and a
	// partial one was made instead: Strength is then what was applied, and
	// FullRotationDeg, FullFrame and Limit describe the correction asked for and the
	// limit it passed.
	Limited         bool
	FullRotationDeg float64
	FullFrame       Frame
	Limit           string
}

const (
	// estimateSide is the long side of the plane segments are detected on: enough for
	// sub-pixel line fits, small enough to take well under 100 ms.
	estimateSide = 1400
	// focalPerDiagonal is the assumed focal length over the image diagonal when it is
	// not known: about a 24 mm lens in full-frame terms, typical of real-estate work and
	// of phone main cameras. Verticals come out vertical whatever the focal length;
	// it only shapes how horizontal lines and proportions follow.
	focalPerDiagonal = 0.55
	// minSupport is the least total length of agreeing verticals, in image heights,
	// for a correction to be trusted.
	minSupport = 1.5
	minInliers = 4
	// minAgreement is the least fraction of near-vertical line length that must agree
	// with the vanishing direction: below it the "verticals" are mostly something
	// else (a fisheye's curves, people, foliage) and the estimate is a guess.
	minAgreement = 0.5
	// strongSupport is the support a correction of more than bigRotationDeg needs: a
	// large warp from weak evidence does more harm than good.
	strongSupport  = 3.0
	bigRotationDeg = 10.0
	// minSpread is the least horizontal spread of the agreeing verticals, as a
	// fraction of the width: verticals all on one object do not fix the convergence.
	minSpread = 0.2
	// lmedsMinLength is the shortest segment, in image heights, the final median fit
	// uses.
	lmedsMinLength = 0.05
	// minRotationDeg is the smallest correction worth a resample.
	minRotationDeg = 0.05
)

// Options tune the estimate with what the file's metadata knows.
type Options struct {
	// Focal35mm is the lens focal length in 35 mm film terms (EXIF
	// FocalLengthIn35mmFilm); 0 assumes about 24 mm. It shapes how horizontals and
	// proportions follow the correction, not whether verticals come out vertical.
	Focal35mm float64
	// Limits scale back a correction that would warp the frame too far (SafeLimits
	// for delivered photos); the zero value corrects in full.
	Limits Limits
}

// fullFrameDiagonal is the diagonal of a 36 x 24 mm frame.
const fullFrameDiagonal = 43.2666

// Estimate finds the vertical vanishing direction of img. It returns an error only for
// unusable input; a photo without enough vertical structure gives a Model with Found
// false and a Reason. It checks ctx between its passes and returns ctx.Err() once it
// is done.
func Estimate(ctx context.Context, img *imaging.Image) (Model, error) {
	return EstimateWith(ctx, img, Options{})
}

// EstimateWith is Estimate with metadata options.
func EstimateWith(ctx context.Context, img *imaging.Image, opt Options) (Model, error) {
	if err := checkImage(img); err != nil {
		return Model{}, err
	}
	if !(opt.Focal35mm >= 0 && opt.Focal35mm < 2000) {
		return Model{}, fmt.Errorf("perspective: 35 mm focal length %v is out of range", opt.Focal35mm)
	}
	W, H := img.W(), img.H()
	diag := math.Hypot(float64(W), float64(H))
	focal := focalPerDiagonal * diag
	if opt.Focal35mm > 0 {
		focal = opt.Focal35mm / fullFrameDiagonal * diag
	}
	m := Model{Width: W, Height: H, Focal: focal, Vertical: [3]float64{0, 1, 0}}
	gray, gw, gh, factor := grayPlane(img, estimateSide)
	if err := ctx.Err(); err != nil {
		return Model{}, err
	}
	segs := nearVertical(gray, gw, gh, maxLeanDeg, minSegment(gh))
	if err := ctx.Err(); err != nil {
		return Model{}, err
	}
	obs := verticalObservations(segs, float64(factor), m.Focal, float64(W)/2, float64(H)/2)
	m.Segments = len(obs)
	if len(obs) < minInliers {
		m.Reason = fmt.Sprintf("too little vertical structure: %d near-vertical lines", len(obs))
		return m, nil
	}
	fit, ok := fitVertical(obs)
	if !ok {
		m.Reason = "too little vertical structure: the near-vertical lines share no vanishing point"
		return m, nil
	}
	m.Inliers = fit.count
	m.Support = fit.support / float64(gh)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, in := range fit.inliers {
		if in {
			x := obs[i].mid[0]*m.Focal + float64(W)/2
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	spread := (hi - lo) / float64(W)
	switch {
	case m.Inliers < minInliers || m.Support < minSupport:
		m.Reason = fmt.Sprintf("too little vertical structure: %d agreeing vertical lines, %.2f image heights long", m.Inliers, m.Support)
		return m, nil
	case fit.support < minAgreement*fit.total:
		m.Reason = fmt.Sprintf("no consistent verticals: only %.0f%% of the near-vertical lines agree on a vanishing point", 100*fit.support/fit.total)
		return m, nil
	case spread < minSpread:
		m.Reason = fmt.Sprintf("too little vertical structure: agreeing vertical lines span only %.0f%% of the width", spread*100)
		return m, nil
	}
	// The median is taken over architecture-scale lines: short segments are mostly
	// book spines, handles and clutter.
	long := make([]lineObs, 0, len(obs))
	for _, o := range obs {
		if o.length >= lmedsMinLength*float64(gh) {
			long = append(long, o)
		}
	}
	if len(long) < 8 {
		long = obs
	}
	v := refineLMedS(long, fit.dir)
	v = remeasure(ctx, gray, gw, gh, factor, m, v, long)
	if err := ctx.Err(); err != nil {
		return Model{}, err
	}
	m.Vertical = v
	m.PitchDeg = math.Asin(-v[2]) * 180 / math.Pi
	m.RollDeg = math.Atan2(v[0], v[1]) * 180 / math.Pi
	if rot := m.RotationDeg(); rot > bigRotationDeg && m.Support < strongSupport {
		m.Reason = fmt.Sprintf("too little vertical structure for a %.0f degree correction: %.2f image heights of agreeing lines", rot, m.Support)
		return m, nil
	}
	m.Found = true
	return m, nil
}

// minSegment is the shortest segment worth measuring on a plane of height h.
func minSegment(h int) float64 { return math.Max(12, 0.025*float64(h)) }

// verticalObservations converts near-vertical segments found on a plane downscaled by
// factor to normalized camera coordinates.
func verticalObservations(segs []segment, factor, f, cx, cy float64) []lineObs {
	var obs []lineObs
	for _, s := range segs {
		l := s.length()
		x1, y1 := (s.X1*factor-cx)/f, (s.Y1*factor-cy)/f
		x2, y2 := (s.X2*factor-cx)/f, (s.Y2*factor-cy)/f
		dx, dy := x2-x1, y2-y1
		dn := math.Hypot(dx, dy)
		// One pixel of end-point uncertainty over the length, but never tighter than
		// the residual lens distortion of a real photo leaves.
		tol := math.Max(0.75*math.Pi/180, math.Atan(2/l))
		obs = append(obs, lineObs{
			line:   unit(cross([3]float64{x1, y1, 1}, [3]float64{x2, y2, 1})),
			p1:     [3]float64{x1, y1, 1},
			p2:     [3]float64{x2, y2, 1},
			mid:    [2]float64{(x1 + x2) / 2, (y1 + y2) / 2},
			dir:    [2]float64{dx / dn, dy / dn},
			length: l,
			weight: l,
			tol:    tol,
			sinTol: math.Sin(tol),
		})
	}
	return obs
}

// RotationDeg is the camera rotation in degrees that a full correction undoes.
func (m Model) RotationDeg() float64 {
	return math.Acos(math.Max(-1, math.Min(1, dot(unit(m.Vertical), [3]float64{0, 1, 0})))) * 180 / math.Pi
}

// Homography returns the transform, in this model's image coordinates, that rotates
// the camera by strength (0..1) of the way to level: verticals vertical and the roll
// undone at 1. It does not crop.
func (m Model) Homography(strength float64) Homography {
	r := rotationBetween(unit(m.Vertical), [3]float64{0, 1, 0}, strength)
	return rotationHomography(r, m.Focal, float64(m.Width)/2, float64(m.Height)/2)
}

// Correct estimates the model of img and applies it at strength 0..1. The output has
// the source's size and aspect ratio: the warped frame is cropped to its largest
// inscribed rectangle of that aspect and resampled back. When the photo has too little
// vertical structure, or needs no correction, img itself is returned with
// Result.Applied false and the Reason. Once ctx is done it returns ctx.Err() within a
// pass of the estimate or a row of the warp.
func Correct(ctx context.Context, img *imaging.Image, strength float64) (*imaging.Image, Result, error) {
	return CorrectWith(ctx, img, strength, Options{})
}

// CorrectWith is Correct with metadata options.
func CorrectWith(ctx context.Context, img *imaging.Image, strength float64, opt Options) (*imaging.Image, Result, error) {
	if !(strength >= 0 && strength <= 1) {
		return nil, Result{}, fmt.Errorf("perspective: strength %v is outside 0..1", strength)
	}
	m, err := EstimateWith(ctx, img, opt)
	if err != nil {
		return nil, Result{}, err
	}
	return ApplyWith(ctx, img, m, strength, opt.Limits)
}

// Apply corrects img with an already estimated model (for instance one estimated on
// another exposure of the same scene, which must have the same size). Once ctx is
// done it stops within a row of the warp and returns ctx.Err().
func Apply(ctx context.Context, img *imaging.Image, m Model, strength float64) (*imaging.Image, Result, error) {
	return ApplyWith(ctx, img, m, strength, Limits{})
}

// ApplyWith is Apply within limits: a correction that would pass one of them is made
// at the largest strength that stays within all of them, and the Result says so.
func ApplyWith(ctx context.Context, img *imaging.Image, m Model, strength float64, lim Limits) (*imaging.Image, Result, error) {
	if err := checkImage(img); err != nil {
		return nil, Result{}, err
	}
	if !(strength >= 0 && strength <= 1) {
		return nil, Result{}, fmt.Errorf("perspective: strength %v is outside 0..1", strength)
	}
	W, H := img.W(), img.H()
	if m.Width != W || m.Height != H {
		return nil, Result{}, fmt.Errorf("perspective: model is for %dx%d, image is %dx%d", m.Width, m.Height, W, H)
	}
	res := Result{Strength: strength, Model: m, H: Identity, Kept: 1, Frame: Frame{KeptArea: 1, Stretch: 1}}
	if !m.Found {
		res.Reason = m.Reason
		return img, res, nil
	}
	if lim.set() && m.RotationDeg()*strength >= minRotationDeg {
		s, why := m.limit(strength, lim)
		if why != "" {
			full, _, err := m.plan(strength)
			if err == nil {
				res.FullFrame, _ = frameOf(full, W, H)
			}
			res.Limited, res.Limit, res.FullRotationDeg = true, why, m.RotationDeg()*strength
			strength, res.Strength = s, s
		}
	}
	res.RotationDeg = m.RotationDeg() * strength
	if res.RotationDeg < minRotationDeg && res.Limited {
		res.Reason = fmt.Sprintf("a correction of %.1f degrees would give %s, and none within the limits is worth making", res.FullRotationDeg, res.Limit)
		return img, res, nil
	}
	if res.RotationDeg < minRotationDeg {
		res.Reason = fmt.Sprintf("verticals already straight: correction of %.3f degrees at strength %.2f", res.RotationDeg, strength)
		return img, res, nil
	}
	total, scale, err := m.plan(strength)
	if err != nil {
		return nil, Result{}, err
	}
	out, err := Warp(ctx, img, total, W, H)
	if err != nil {
		return nil, Result{}, err
	}
	res.Applied = true
	res.H = total
	res.Kept = scale
	res.Frame, _ = frameOf(total, W, H)
	return out, res, nil
}

// plan returns the correction at strength as one transform from source pixels to the
// output frame (the warped frame cropped to its largest inscribed rectangle of the
// source's aspect and scaled back to the source size), and the crop's scale.
func (m Model) plan(strength float64) (Homography, float64, error) {
	W, H := m.Width, m.Height
	h := m.Homography(strength)
	var quad [4][2]float64
	for i, p := range [4][2]float64{{0, 0}, {float64(W), 0}, {float64(W), float64(H)}, {0, float64(H)}} {
		x, y, ok := h.Apply(p[0], p[1])
		if !ok {
			return Homography{}, 0, fmt.Errorf("perspective: correction of %.1f degrees maps a corner to infinity", m.RotationDeg()*strength)
		}
		quad[i] = [2]float64{x, y}
	}
	rect, err := largestInscribed(quad, float64(W)/float64(H))
	if err != nil {
		return Homography{}, 0, err
	}
	// Output pixel coordinates -> crop rectangle in the warped plane.
	scale := (rect.X1 - rect.X0) / float64(W)
	toOut, err := Homography{scale, 0, rect.X0, 0, scale, rect.Y0, 0, 0, 1}.Inverse()
	if err != nil {
		return Homography{}, 0, err
	}
	return toOut.Mul(h), scale, nil
}

func checkImage(img *imaging.Image) error {
	switch {
	case img == nil:
		return fmt.Errorf("perspective: nil image")
	case img.C < 1 || img.C > 4:
		return fmt.Errorf("perspective: %d channels", img.C)
	case img.W() < 16 || img.H() < 16:
		return fmt.Errorf("perspective: image of %dx%d is too small", img.W(), img.H())
	case img.Stride < img.W()*img.C || len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C:
		return fmt.Errorf("perspective: image buffer is shorter than its size")
	}
	return nil
}

// remeasure takes a second look: the plane corrected by vertical v is searched for
// segments again, they are mapped back and the fit is refined over both sets. A line
// is measured differently once it stands upright (other end points, other pieces
// merged), and what a viewer judges is the corrected photo; pooling the two
// detections halves the weight of either one's errors in the median (median tilt
// left: the old house from 0.88 to 0.53 degrees, bedroom 156 from 0.97 to 0.78, the
// kids' bedroom from 0.29 to 0.28). It costs a second detection on the reduced plane.
func remeasure(ctx context.Context, gray []float32, gw, gh, factor int, m Model, v [3]float64, obs []lineObs) [3]float64 {
	pm := m
	pm.Width, pm.Height, pm.Focal, pm.Vertical, pm.Found = gw, gh, m.Focal/float64(factor), v, true
	src := &imaging.Image{Pix: gray, Stride: gw, C: 1, Rect: image.Rect(0, 0, gw, gh)}
	out, res, err := Apply(ctx, src, pm, 1)
	if err != nil || !res.Applied || out.Stride != gw {
		return v
	}
	inv, err := res.H.Inverse()
	if err != nil {
		return v
	}
	segs := nearVertical(out.Pix, gw, gh, maxLeanDeg, lmedsMinLength*float64(gh))
	back := segs[:0]
	for _, s := range segs {
		x1, y1, ok1 := inv.Apply(s.X1, s.Y1)
		x2, y2, ok2 := inv.Apply(s.X2, s.Y2)
		if ok1 && ok2 {
			s.X1, s.Y1, s.X2, s.Y2 = x1, y1, x2, y2
			back = append(back, s)
		}
	}
	if len(back) < 8 {
		return v
	}
	pooled := append(verticalObservations(back, float64(factor), m.Focal, float64(m.Width)/2, float64(m.Height)/2), obs...)
	return refineLMedS(pooled, v)
}
