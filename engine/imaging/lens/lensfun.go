package lens

/*
#cgo CFLAGS: -I/usr/include/lensfun
#cgo LDFLAGS: -llensfun
#include <stdlib.h>
#include <lensfun.h>

static const lfCamera *lp_camera(const lfDatabase *db, const char *maker, const char *model) {
	const lfCamera **l = lf_db_find_cameras_ext(db, maker, model, 0);
	if (!l) return NULL;
	const lfCamera *c = l[0];
	lf_free(l);
	return c;
}

// lp_lens returns the best-scoring lens for the strings, and how many matched.
static const lfLens *lp_lens(const lfDatabase *db, const lfCamera *cam, const char *maker, const char *model, int *n) {
	*n = 0;
	const lfLens **l = lf_db_find_lenses_hd(db, cam, maker, model, LF_SEARCH_SORT_AND_UNIQUIFY);
	if (!l) return NULL;
	while (l[*n]) (*n)++;
	const lfLens *r = l[0];
	lf_free(l);
	return r;
}

static int lp_has_distortion(const lfLens *lens, float focal) {
	lfLensCalibDistortion d;
	if (!lens->CalibDistortion || !lens->CalibDistortion[0]) return 0;
	if (!lf_lens_interpolate_distortion(lens, focal, &d)) return 0;
	return d.Model != LF_DIST_MODEL_NONE;
}

static float lp_camera_crop(const lfCamera *c) { return c ? c->CropFactor : 0; }
static const char *lp_camera_name(const lfCamera *c) { return c ? lf_mlstr_get(c->Model) : ""; }
static const char *lp_camera_maker(const lfCamera *c) { return c ? lf_mlstr_get(c->Maker) : ""; }
static const char *lp_lens_name(const lfLens *l) { return lf_mlstr_get(l->Model); }
static float lp_lens_crop(const lfLens *l) { return l->CropFactor; }
static int lp_lens_type(const lfLens *l) { return (int)l->Type; }
static int lp_lens_score(const lfLens *l) { return l->Score; }

static lfModifier *lp_modifier(const lfLens *lens, float crop, int w, int h, float focal, float aperture,
		float distance, int flags, int reverse, int *got) {
	lfModifier *m = lf_modifier_new(lens, crop, w, h);
	if (!m) return NULL;
	*got = lf_modifier_initialize(m, lens, LF_PF_F32, focal, aperture, distance, reverse ? 1.0f : 0.0f,
		lens->Type, flags, reverse);
	return m;
}

// lp_grid fills grid rows [j0, j1) of a gw-wide grid of nodes step pixels apart:
// per node the source coordinates of red, green and blue and the vignetting gain
// at the green one (7 floats).
static void lp_grid(lfModifier *m, int j0, int j1, int gw, int step, int vignetting, float *out) {
	for (int j = j0; j < j1; j++) {
		for (int i = 0; i < gw; i++) {
			float *p = out + ((size_t)(j - j0) * gw + i) * 7;
			float xy[6];
			if (!lf_modifier_apply_subpixel_geometry_distortion(m, (float)(i * step), (float)(j * step), 1, 1, xy)) {
				xy[0] = xy[2] = xy[4] = (float)(i * step);
				xy[1] = xy[3] = xy[5] = (float)(j * step);
			}
			for (int k = 0; k < 6; k++) p[k] = xy[k];
			float g = 1.0f;
			if (vignetting) {
				lf_modifier_apply_color_modification(m, &g, xy[2], xy[3], 1, 1, LF_CR_1(INTENSITY), sizeof(float));
			}
			p[6] = g;
		}
	}
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unsafe"

	"github.com/porchlight/porchlight/engine/imaging"
)

// ErrNoDatabase means lensfun's database could not be loaded (liblensfun-data-v1 is
// not installed).
var ErrNoDatabase = errors.New("lens: the lensfun database is not installed")

var (
	dbOnce sync.Once
	db     *C.lfDatabase
	dbErr  error
	// dbMu serialises lookups: lensfun does not promise that its searches are safe
	// from several threads at once. Modifiers are used read-only after Initialize.
	dbMu sync.Mutex
)

func database() (*C.lfDatabase, error) {
	dbOnce.Do(func() {
		d := C.lf_db_new()
		if d == nil {
			dbErr = ErrNoDatabase
			return
		}
		// lf_db_load fails without data files; an empty lens list means the same.
		if C.lf_db_load(d) != C.LF_NO_ERROR {
			C.lf_db_destroy(d)
			dbErr = ErrNoDatabase
			return
		}
		if l := C.lf_db_get_lenses(d); l == nil || *l == nil {
			C.lf_db_destroy(d)
			dbErr = ErrNoDatabase
			return
		}
		db = d
	})
	return db, dbErr
}

// Available reports whether the lensfun database loaded.
func Available() bool {
	_, err := database()
	return err == nil
}

// gridStep is the spacing in pixels of the nodes where lensfun computes the map; the
// map between them is bilinear. Distortion, TCA and vignetting are smooth: at 16 px
// the interpolation is off by under a hundredth of a pixel (0.006 px at worst, in
// the corners, for the six real-estate lenses the tests use, against nodes 8 px
// apart; the 8-bit sampler rounds positions to 1/256 px anyway), and lensfun runs on
// 1/256 of the pixels: preparing a 21 MP map costs about 10 ms instead of 40.
const gridStep = 16

func cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

func freeStr(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// minLensScore is the least lensfun match score accepted: below it the lens string
// only shares a focal range or a maker with the entry.
const minLensScore = 15

func prepare(s Shot, w, h int, reverse bool) (*Correction, error) {
	d, err := database()
	if err != nil {
		return nil, err
	}
	if w < 2 || h < 2 {
		return nil, &NoProfileError{Reason: "the photo is too small"}
	}
	if s.Focal <= 0 {
		return nil, &NoProfileError{Reason: "the photo records no focal length"}
	}
	dbMu.Lock()
	defer dbMu.Unlock()
	cmk, cmd := cstr(strings.TrimSpace(s.Make)), cstr(strings.TrimSpace(s.Model))
	defer freeStr(cmk)
	defer freeStr(cmd)
	var cam *C.lfCamera
	if cmk != nil || cmd != nil {
		cam = C.lp_camera(d, cmk, cmd)
	}
	lens, why := findLens(d, cam, s)
	if lens == nil {
		return nil, &NoProfileError{Reason: why}
	}
	name := C.GoString(C.lp_lens_name(lens))
	if C.lp_has_distortion(lens, C.float(s.Focal)) == 0 {
		return nil, &NoProfileError{Reason: fmt.Sprintf("lensfun's %q has no distortion calibration", name)}
	}
	crop := float32(C.lp_camera_crop(cam))
	if crop <= 0 {
		// Without the camera, the lens's own calibration crop is the best guess.
		crop = float32(C.lp_lens_crop(lens))
	}
	flags := C.int(C.LF_MODIFY_DISTORTION | C.LF_MODIFY_TCA | C.LF_MODIFY_SCALE)
	if s.Aperture > 0 {
		flags |= C.LF_MODIFY_VIGNETTING
	}
	dist := s.Distance
	if dist <= 0 {
		dist = 1000 // lensfun's "far away"
	}
	rev := C.int(0)
	if reverse {
		rev = 1
	}
	var got C.int
	m := C.lp_modifier(lens, C.float(crop), C.int(w), C.int(h), C.float(s.Focal), C.float(s.Aperture),
		C.float(dist), flags, rev, &got)
	if m == nil {
		return nil, &NoProfileError{Reason: "lensfun could not set up the correction"}
	}
	defer C.lf_modifier_destroy(m)
	if got&C.LF_MODIFY_DISTORTION == 0 {
		return nil, &NoProfileError{Reason: fmt.Sprintf("lensfun's %q has no distortion calibration at %g mm", name, s.Focal)}
	}
	c := &Correction{
		W: w, H: h,
		Lens:       name,
		Camera:     strings.TrimSpace(C.GoString(C.lp_camera_maker(cam)) + " " + C.GoString(C.lp_camera_name(cam))),
		Distortion: true,
		TCA:        got&C.LF_MODIFY_TCA != 0,
		Vignetting: got&C.LF_MODIFY_VIGNETTING != 0,
		Focal:      s.Focal,
		Aperture:   s.Aperture,
		score:      int(C.lp_lens_score(lens)),
	}
	c.gw = (w-1+gridStep-1)/gridStep + 1
	c.gh = (h-1+gridStep-1)/gridStep + 1
	c.grid = make([]float32, c.gw*c.gh*7)
	vig := C.int(0)
	if c.Vignetting {
		vig = 1
	}
	// Grid rows in bands: lensfun's apply calls only read the modifier.
	imaging.Bands(c.gh, func(_, j0, j1 int) {
		C.lp_grid(m, C.int(j0), C.int(j1), C.int(c.gw), gridStep, vig,
			(*C.float)(unsafe.Pointer(&c.grid[j0*c.gw*7])))
	})
	for _, v := range c.grid {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, &NoProfileError{Reason: fmt.Sprintf("lensfun's %q gave no usable map at %g mm", name, s.Focal)}
		}
	}
	c.maxScale = maxScale(c.grid, c.gw, c.gh)
	return c, nil
}

// maxScale is the largest factor by which the correction stretches a short distance
// anywhere in the frame: the inverse of the smallest singular value of the green
// channel's map between neighbouring nodes.
func maxScale(grid []float32, gw, gh int) float64 {
	m := 1.0
	for j := 0; j+1 < gh; j++ {
		for i := 0; i+1 < gw; i++ {
			p := grid[(j*gw+i)*7:]
			px, py := grid[(j*gw+i+1)*7:], grid[((j+1)*gw+i)*7:]
			a, c := float64(px[2]-p[2])/gridStep, float64(px[3]-p[3])/gridStep
			b, d := float64(py[2]-p[2])/gridStep, float64(py[3]-p[3])/gridStep
			s := a*a + b*b + c*c + d*d
			det := a*d - b*c
			lo := (s - math.Sqrt(max(0, s*s-4*det*det))) / 2
			if lo > 0 {
				m = max(m, 1/math.Sqrt(lo))
			}
		}
	}
	return m
}

// findLens matches the shot's lens: LensModel with LensMake, then without the maker
// (third-party lenses often record the camera's maker), then a fixed-lens camera's
// only lens.
func findLens(d *C.lfDatabase, cam *C.lfCamera, s Shot) (*C.lfLens, string) {
	model := strings.TrimSpace(s.LensModel)
	var n C.int
	if namesLens(model) {
		cm := C.CString(model)
		defer C.free(unsafe.Pointer(cm))
		makers := []string{strings.TrimSpace(s.LensMake)}
		if makers[0] != "" {
			makers = append(makers, "")
		}
		for _, mk := range makers {
			cmk := cstr(mk)
			l := C.lp_lens(d, cam, cmk, cm, &n)
			freeStr(cmk)
			if l != nil && C.lp_lens_score(l) >= minLensScore {
				return l, ""
			}
		}
		return nil, fmt.Sprintf("lensfun knows no lens %q", model)
	}
	if cam != nil {
		if l := C.lp_lens(d, cam, nil, nil, &n); l != nil && n == 1 {
			return l, ""
		}
	}
	return nil, "the photo does not name its lens"
}

// namesLens reports whether a lens string says more than a focal length and an
// aperture: lensfun matches a bare "8mm" to whichever 8 mm lens it knows.
func namesLens(model string) bool {
	rest := strings.NewReplacer("mm", "", "MM", "", "f/", "", "F", "").Replace(model)
	return strings.Trim(rest, "0123456789.-/ ") != ""
}
