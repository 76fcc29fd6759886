// Package grouping sorts dropped photos into scenes: the exposure brackets of one
// shot. The window and the hot folders both use it, so a folder dropped on either
// gives the same scenes.
//
// Rules, in order:
//
//  1. Brackets of one scene live in one folder: folders are never mixed.
//  2. A RAW file and a JPEG with the same name are two copies of one frame, not two
//     brackets: the RAW is kept (it holds more of the highlights and shadows).
//  3. Within a folder, photos are taken in capture order (EXIF DateTimeOriginal with
//     sub-seconds) when every photo has one, else in name order.
//  4. A photo joins the current scene when all of these hold: the scene has fewer than
//     MaxFrames (nine) frames; the camera is the same; it was taken within MaxGap of the end of
//     the previous frame's exposure (so long exposures do not split a scene, and a
//     photographer bracketing by hand still counts); its exposure (time × ISO ÷ f²,
//     else its measured brightness) differs from every frame already in the scene (a
//     repeated exposure starts the next scene); and it looks like the same scene:
//     the rank correlation of small exposure-normalised thumbnails with the scene's
//     frame of nearest exposure is at least MinSimilarity. Rank correlation is
//     insensitive to exposure, because a brighter bracket keeps the order of pixel
//     brightness, while two different rooms do not share it.
//  5. A photo that cannot be read is in no scene, but it is placed beside the scene
//     it was shot with, and that scene is judged: it is made from what is left only
//     when that still spans the exposures (see lost.go).
//  6. A flash frame (EXIF Flash fired) is no bracket: it is lit by other light, so
//     neither its exposure nor the order of its pixels' brightness says anything. It
//     joins the scene it was shot with (rule 4's room, camera and time) when its
//     edges match a frame of the scene: the correlation of the thumbnails' gradient
//     magnitudes (of log luminance, which light changes little where a flash does not
//     cast a shadow) is at least MinFlashSimilarity. Brackets are judged against the
//     scene's other brackets only, so a flash frame neither repeats an exposure nor
//     stands in for the frame of nearest exposure; a bracket after only flash frames
//     is compared with them by edges.
//
// Culling (cull.go) comes after grouping: Cull and CullScenes read small copies of
// a scene's frames and set aside, with a reason for the photographer, a repeated
// bracket set's weaker run and blurred, black and test frames (see package cull).
// A set shot twice is split by rule 4 at the repeated exposures, so CullScenes
// judges neighbouring scenes of a folder together.
package grouping

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/porchlight/porchlight/engine/cull"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// MaxFrames is the most brackets a scene may have: photographers shoot up to nine,
// and the window, hot folders and process merge them all (the API takes fewer
// unless a studio raises api.max_inputs).
const MaxFrames = 9

// Options tune the rules. The zero value means the defaults.
type Options struct {
	MaxGap        time.Duration // longest pause between brackets of one scene (default 30 s)
	MinSimilarity float64       // least rank correlation of thumbnails (default 0.6)
	MinEVStep     float64       // least exposure difference between brackets, in EV (default 0.3)
	// MinFlashSimilarity is the least edge correlation of a flash frame with a frame
	// of its scene (default 0.5: the flambient pairs of one view measure 0.67 to
	// 0.95, two views of one kitchen at most 0.35).
	MinFlashSimilarity float64
}

func (o Options) withDefaults() Options {
	if o.MaxGap <= 0 {
		o.MaxGap = 30 * time.Second
	}
	if o.MinSimilarity <= 0 {
		o.MinSimilarity = 0.6
	}
	if o.MinEVStep <= 0 {
		o.MinEVStep = 0.3
	}
	if o.MinFlashSimilarity <= 0 {
		o.MinFlashSimilarity = 0.5
	}
	return o
}

// Photo is what grouping knows of one file.
type Photo struct {
	Path     string
	Camera   string    // make and model, "" when unknown
	Taken    time.Time // zero when unknown
	Duration float64   // exposure time in seconds, 0 when unknown
	// EV is log2 of the light the frame gathered (time × ISO ÷ f²) when the EXIF says,
	// else NaN.
	EV float64
	// Brightness is log2 of the thumbnail's mean linear luminance.
	Brightness float64
	Raw        bool
	// Flash: the EXIF says the flash fired (rule 6).
	Flash bool
	// lum is the linear luminance of a small thumbnail, compared by Similarity;
	// lumW is its width (0: one row).
	lum  []float32
	lumW int
}

// Scene is one group of brackets.
type Scene struct {
	Files []string
	// Lost are brackets of this scene that cannot be read (they are in Skipped too).
	Lost []Lost
	// With lost brackets, Warning says the scene is made from what is left, which
	// still spans the exposures; Problem says why it cannot be (see Judge).
	Warning string
	Problem string
}

// Skipped is a file that is in no scene, and why.
type Skipped struct {
	Path   string
	Reason string
}

// Result is the outcome of grouping.
type Result struct {
	Scenes  []Scene
	Skipped []Skipped
}

// imageExts are the file name extensions taken from a dropped folder.
var imageExts = map[string]bool{
	".jpg": true, ".jpeg": true, ".png": true, ".webp": true, ".tif": true, ".tiff": true,
	".heic": true, ".heif": true, ".dng": true, ".cr2": true, ".cr3": true, ".crw": true,
	".nef": true, ".arw": true, ".raf": true, ".orf": true, ".rw2": true,
}

// Expand turns dropped paths (files and folders) into the image files below them,
// skipping hidden files and files that are not images by name.
func Expand(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			add(root)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if p != root && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && imageExts[strings.ToLower(filepath.Ext(name))] {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Group expands paths, reads each photo and groups them into scenes. Files that
// cannot be read are listed in Skipped with the reason; they never stop the others.
func Group(paths []string, opt Options) (Result, error) {
	files, err := Expand(paths)
	if err != nil {
		return Result{}, err
	}
	var res Result
	photos := make([]Photo, 0, len(files))
	var lost []Lost
	for _, f := range files {
		p, err := Analyze(f)
		if err != nil {
			res.Skipped = append(res.Skipped, Skipped{Path: f, Reason: err.Error()})
			lost = append(lost, LostPhoto(f, err.Error()))
			continue
		}
		photos = append(photos, p)
	}
	scenes, twins := GroupAll(photos, lost, opt)
	res.Scenes = scenes
	res.Skipped = append(res.Skipped, twins...)
	return res, nil
}

// thumbEdge is the long edge of the thumbnails compared; small enough that handheld
// shifts of a few pixels vanish and reading is fast (EXIF thumbnail or DCT-scaled).
const thumbEdge = 64

// Analyze reads one photo's metadata and a small thumbnail.
func Analyze(path string) (Photo, error) {
	f, err := os.Open(path)
	if err != nil {
		return Photo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Photo{}, err
	}
	head := make([]byte, 64)
	n, _ := f.ReadAt(head, 0)
	p := Photo{Path: path, EV: math.NaN(), Raw: codec.SniffRaw(head[:n]) != ""}
	if m, err := codec.ReadMeta(f, st.Size()); err == nil {
		p.Camera, p.Taken, p.Duration, p.EV = fromMeta(m)
		p.Flash = m.FlashFired
	}
	thumb, err := codec.Thumbnail(f, st.Size(), thumbEdge*4)
	if err != nil {
		return Photo{}, fmt.Errorf("not a readable photo: %w", err)
	}
	w, h := fit(thumb.W(), thumb.H())
	p.lum, p.Brightness = luminance(imaging.Resize(thumb, w, h))
	p.lumW = w
	return p, nil
}

// fromMeta reads the camera, capture time, exposure time and EV out of EXIF.
func fromMeta(m codec.Meta) (camera string, taken time.Time, duration, ev float64) {
	camera = strings.TrimSpace(strings.TrimSpace(m.Make) + " " + strings.TrimSpace(m.Model))
	ev = math.NaN()
	if m.ExposureTime > 0 && m.ISO > 0 {
		fn := m.FNumber
		if fn <= 0 {
			fn = 1
		}
		ev = math.Log2(m.ExposureTime * m.ISO / (fn * fn))
	}
	return camera, m.DateTimeOriginal, m.ExposureTime, ev
}

func fit(w, h int) (int, int) {
	if w >= h {
		return thumbEdge, max(1, h*thumbEdge/w)
	}
	return max(1, w*thumbEdge/h), thumbEdge
}

// luminance returns the thumbnail's linear luminance and log2 of its mean.
func luminance(img *imaging.Image) ([]float32, float64) {
	lum := make([]float32, img.W()*img.H())
	var sum float64
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			o := x * img.C
			l := row[o]
			if img.C >= 3 {
				l = 0.2126*row[o] + 0.7152*row[o+1] + 0.0722*row[o+2]
			}
			lum[y*img.W()+x] = l
			sum += float64(l)
		}
	}
	return lum, math.Log2(sum/float64(len(lum)) + 1e-6)
}

// Pixels darker or brighter than these (linear light: about 2/255 and 250/255 in
// sRGB) carry no ordering information.
const (
	crushed = 0.0007
	clipped = 0.95
)

// usable returns the range of a thumbnail's values that carry ordering information:
// above its own black floor (dark brackets are mostly a flat floor of sensor noise)
// and below its clipping point.
func usable(lum []float32) (lo, hi float32) {
	s := append([]float32(nil), lum...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	lo = max(crushed, s[len(s)*2/100]*1.25)
	if med := s[len(s)/2]; med < 0.01 {
		// A dark bracket: most of it is the floor, and only what stands well above
		// the median (windows, lamps) is picture.
		lo = max(lo, med*1.5)
	}
	hi = min(clipped, s[len(s)-1]*0.97)
	return lo, hi
}

// Similarity is Spearman's rank correlation (-1..1) of two photos' thumbnails over the
// pixels that are usable in both: a dark bracket keeps only its windows, and those
// must agree with the same windows in the next bracket. Photos of different shapes
// are not similar.
func Similarity(a, b Photo) float64 {
	s, _ := similarity(a, b)
	return s
}

// similarity also reports whether enough pixels were usable in both to judge.
func similarity(a, b Photo) (float64, bool) {
	if len(a.lum) != len(b.lum) || len(a.lum) == 0 {
		return 0, false
	}
	alo, ahi := usable(a.lum)
	blo, bhi := usable(b.lum)
	var xs, ys []float64
	for i := range a.lum {
		if a.lum[i] > alo && a.lum[i] < ahi && b.lum[i] > blo && b.lum[i] < bhi {
			xs = append(xs, float64(a.lum[i]))
			ys = append(ys, float64(b.lum[i]))
		}
	}
	if len(xs) < len(a.lum)/10 {
		return 0, false // too little in common to tell
	}
	return cull.Pearson(ranks(xs), ranks(ys)), true
}

// EdgeSimilarity is the correlation (-1..1) of two photos' edges: the gradient
// magnitudes of their thumbnails' log luminance. Unlike Similarity it holds between
// frames lit by different light (a flash frame and an ambient bracket), whose
// brightness differs in order but whose edges sit in the same places.
func EdgeSimilarity(a, b Photo) float64 {
	if len(a.lum) != len(b.lum) || len(a.lum) == 0 || a.lumW != b.lumW {
		return 0
	}
	return cull.Pearson(edgeMap(a), edgeMap(b))
}

// edgeMap is the gradient magnitude of log luminance (forward differences; the last
// row and column take the one difference they have).
func edgeMap(p Photo) []float64 {
	w := p.lumW
	if w <= 0 {
		w = len(p.lum)
	}
	h := len(p.lum) / w
	l := make([]float64, len(p.lum))
	for i, v := range p.lum {
		l[i] = math.Log(float64(v) + 0.002) // about the floor of an 8-bit thumbnail
	}
	out := make([]float64, len(l))
	for y := range h {
		for x := range w {
			i := y*w + x
			var gx, gy float64
			if x+1 < w {
				gx = l[i+1] - l[i]
			}
			if y+1 < h {
				gy = l[i+w] - l[i]
			}
			out[i] = math.Hypot(gx, gy)
		}
	}
	return out
}

// ranks replaces values by their ranks; ties (clipped highlights) share the mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return r
}

// GroupPhotos applies the rules to analysed photos. It returns the scenes and the
// JPEG twins of RAW files it set aside.
func GroupPhotos(photos []Photo, opt Options) ([]Scene, []Skipped) {
	return GroupAll(photos, nil, opt)
}

// GroupAll is GroupPhotos for a drop some of whose files could not be read: each
// lost photo is placed beside the scene it was shot with, and every scene that
// lost brackets is judged (Scene.Warning, Scene.Problem).
func GroupAll(photos []Photo, lost []Lost, opt Options) ([]Scene, []Skipped) {
	opt = opt.withDefaults()
	byDir := map[string][]Photo{}
	lostByDir := map[string][]Lost{}
	var dirs []string
	for _, p := range photos {
		d := filepath.Dir(p.Path)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], p)
	}
	for _, l := range lost {
		d := filepath.Dir(l.Path)
		lostByDir[d] = append(lostByDir[d], l)
	}
	sort.Strings(dirs)
	var scenes []Scene
	var skipped []Skipped
	for _, d := range dirs {
		ps, twins := dropTwins(byDir[d])
		skipped = append(skipped, twins...)
		sortCaptureOrder(ps)
		ls := withoutTwins(lostByDir[d], ps)
		groups := scan(ps, ls, opt)
		placed := place(groups, ls, opt)
		for i, g := range groups {
			s := Scene{Lost: placed[i]}
			for _, p := range g {
				s.Files = append(s.Files, p.Path)
			}
			s.Warning, s.Problem = Judge(g, placed[i])
			scenes = append(scenes, s)
		}
	}
	return scenes, skipped
}

func stem(p string) string {
	b := filepath.Base(p)
	return strings.ToLower(strings.TrimSuffix(b, filepath.Ext(b)))
}

func dropTwins(ps []Photo) ([]Photo, []Skipped) {
	raws := map[string]bool{}
	for _, p := range ps {
		if p.Raw {
			raws[stem(p.Path)] = true
		}
	}
	var keep []Photo
	var skipped []Skipped
	for _, p := range ps {
		if !p.Raw && raws[stem(p.Path)] {
			skipped = append(skipped, Skipped{Path: p.Path, Reason: "JPEG twin of a RAW file of the same frame; the RAW is used"})
			continue
		}
		keep = append(keep, p)
	}
	return keep, skipped
}

func sortCaptureOrder(ps []Photo) {
	captureOrder(ps, func(p *Photo) (string, time.Time) { return p.Path, p.Taken })
}

// captureOrder sorts xs, stably, by capture time when every one has a time, else
// (and between equal times) by file name in natural order; key gives an element's
// path and capture time.
func captureOrder[T any](xs []T, key func(*T) (path string, taken time.Time)) {
	timed := true
	for i := range xs {
		if _, t := key(&xs[i]); t.IsZero() {
			timed = false
		}
	}
	sort.SliceStable(xs, func(i, j int) bool {
		pi, ti := key(&xs[i])
		pj, tj := key(&xs[j])
		if timed && !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return naturalLess(filepath.Base(pi), filepath.Base(pj))
	})
}

// naturalLess compares names with digit runs as numbers ("IMG_9" before "IMG_10").
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// scan splits photos in capture order into scenes. lost are the folder's
// unreadable photos: those with a capture time bridge the time gap.
func scan(ps []Photo, lost []Lost, opt Options) [][]Photo {
	var scenes [][]Photo
	var cur []Photo
	for _, p := range ps {
		if len(cur) > 0 && !joins(cur, p, lost, opt) {
			scenes = append(scenes, cur)
			cur = nil
		}
		cur = append(cur, p)
	}
	if len(cur) > 0 {
		scenes = append(scenes, cur)
	}
	return scenes
}

// joins reports whether p continues the scene cur (rule 4).
func joins(cur []Photo, p Photo, lost []Lost, opt Options) bool {
	if len(cur) >= MaxFrames {
		return false
	}
	last := cur[len(cur)-1]
	if last.Camera != "" && p.Camera != "" && last.Camera != p.Camera {
		return false
	}
	if !last.Taken.IsZero() && !p.Taken.IsZero() {
		end := bridge(last, p, lost, opt)
		if gap := p.Taken.Sub(end); gap > opt.MaxGap || gap < -opt.MaxGap {
			return false
		}
	}
	// Rule 6: flash frames are compared by their edges, and brackets only with
	// brackets.
	var brackets []Photo
	for _, q := range cur {
		if !q.Flash {
			brackets = append(brackets, q)
		}
	}
	if p.Flash || len(brackets) == 0 {
		best := math.Inf(-1)
		for _, q := range cur {
			best = max(best, EdgeSimilarity(q, p))
		}
		return best >= opt.MinFlashSimilarity
	}
	cur = brackets
	// Without EXIF on both sides the exposure cannot be told reliably from pixels
	// (processed or auto-exposed frames), so only the look of the frames counts.
	// Frames far apart in exposure share few usable pixels, so p is compared with the
	// frame nearest to it in exposure.
	nearest := cur[0]
	for _, q := range cur {
		if d := exposureDistance(q, p); d < opt.MinEVStep {
			return false // the same exposure again: the next scene has begun
		}
		if math.Abs(q.Brightness-p.Brightness) < math.Abs(nearest.Brightness-p.Brightness) {
			nearest = q
		}
	}
	if s, ok := similarity(nearest, p); ok {
		return s >= opt.MinSimilarity
	}
	// Nothing to compare: p is almost all black or all white. That is the extreme
	// bracket of a sequence when it continues the scene's exposure direction past
	// every frame so far.
	return len(cur) >= 2 && extends(cur, p)
}

// extends reports whether p is darker than every frame of cur while cur darkens
// frame to frame, or brighter than every frame while cur brightens.
func extends(cur []Photo, p Photo) bool {
	down, up := true, true
	for i := 1; i < len(cur); i++ {
		down = down && cur[i].Brightness < cur[i-1].Brightness
		up = up && cur[i].Brightness > cur[i-1].Brightness
	}
	last := cur[len(cur)-1].Brightness
	return (down && p.Brightness < last) || (up && p.Brightness > last)
}

// exposureDistance is how far apart two frames' exposures are, in EV, from the EXIF;
// NaN when either lacks it (NaN compares false, so the repeat rule does not apply).
func exposureDistance(a, b Photo) float64 {
	if !math.IsNaN(a.EV) && !math.IsNaN(b.EV) {
		return math.Abs(a.EV - b.EV)
	}
	return math.NaN()
}

// ErrNoPhotos is returned by callers that need at least one scene.
var ErrNoPhotos = errors.New("no photos found")
