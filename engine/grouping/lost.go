package grouping

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// A bracket that cannot be read (corrupt, cut short, not an image at all) must not
// quietly leave its scene to be merged from the rest: with the bright frames gone,
// that gives a dark photo. So a lost photo is placed beside the scene it was shot
// with, and the scene is judged.
//
// Placing. The folder's photos and lost files are put in capture order when all of
// them have a capture time, else in name order. A lost file between two brackets of
// one scene belongs to it. Otherwise each scene beside it may take it when:
//   - the scene has room (fewer than MaxFrames brackets, lost ones included);
//   - it is a bracketed shot: it has several brackets, or other scenes of the folder
//     do, or its one frame is far from a normal exposure (see offExposure), as what
//     is left of a bracket set is; in a folder of normally exposed single photos an
//     unreadable file is a photo of its own;
//   - it was shot within MaxGap of the lost file (per lost file in between) when
//     both times are known; when the lost file's time is unknown, its name looks
//     like the scene's (same extension, same length give or take one), so that a
//     stray "notes.jpg" is not taken for a bracket of IMG_0001.JPG.
// When both neighbours may take it, the one shot nearer in time does; without
// times, the one with fewer brackets than the folder's largest scene; when that
// does not decide, both are judged with it.
//
// Judging (Judge). The scene is made from what is left only when that spans the
// exposures: at least MinKept brackets remain, spread over at least MinSpread EV,
// and every lost bracket lies within their range. A lost bracket's exposure comes
// from its EXIF (time × ISO ÷ f², which a truncated copy keeps) when the remaining
// brackets have EXIF too; else from its place in the sequence, since brackets are
// shot in exposure order: one between two remaining brackets lies within the range,
// one before the first or after the last does not. The remaining brackets' spread
// is their EXIF EV, else their measured brightness. The scene is then made with a
// warning saying what was lost; otherwise it fails, naming the lost brackets.

// MinKept and MinSpread are the least a scene that lost brackets must keep.
const (
	MinKept   = 3
	MinSpread = 2.0 // EV between the darkest and the brightest remaining bracket
)

// Lost is a photo that cannot be read, with what its EXIF says when that much was
// readable.
type Lost struct {
	Path     string
	Reason   string
	Camera   string
	Taken    time.Time // zero when unknown
	Duration float64   // exposure time in seconds, 0 when unknown
	EV       float64   // as Photo.EV; NaN when unknown
}

// LostPhoto describes a file that cannot be used, reading what metadata it can.
func LostPhoto(path, reason string) Lost {
	l := Lost{Path: path, Reason: reason, EV: math.NaN()}
	f, err := os.Open(path)
	if err != nil {
		return l
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return l
	}
	if m, err := codec.ReadMeta(f, st.Size()); err == nil {
		l.Camera, l.Taken, l.Duration, l.EV = fromMeta(m)
	}
	return l
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// withoutTwins drops lost JPEGs whose RAW twin is one of the photos: the frame is
// there.
func withoutTwins(lost []Lost, ps []Photo) []Lost {
	raws := map[string]bool{}
	for _, p := range ps {
		if p.Raw {
			raws[stem(p.Path)] = true
		}
	}
	var out []Lost
	for _, l := range lost {
		if !raws[stem(l.Path)] {
			out = append(out, l)
		}
	}
	return out
}

// bridge returns the end of last's exposure, carried on over the lost brackets
// shot between last and p, so that losing the middle brackets does not turn one
// scene into two where the pause between the brackets left is long.
func bridge(last, p Photo, lost []Lost, opt Options) time.Time {
	end := last.Taken.Add(seconds(last.Duration))
	var between []Lost
	for _, l := range lost {
		if !l.Taken.IsZero() && l.Taken.After(last.Taken) && l.Taken.Before(p.Taken) &&
			(l.Camera == "" || p.Camera == "" || l.Camera == p.Camera) {
			between = append(between, l)
		}
	}
	sort.Slice(between, func(i, j int) bool { return between[i].Taken.Before(between[j].Taken) })
	for _, l := range between {
		if l.Taken.Sub(end) > opt.MaxGap {
			break
		}
		if e := l.Taken.Add(seconds(l.Duration)); e.After(end) {
			end = e
		}
	}
	return end
}

// entry is a photo or a lost file in a folder's sequence.
type entry struct {
	path  string
	taken time.Time
	scene int // the photo's scene; -1 for a lost file
	lost  int // index into the lost files; -1 for a photo
}

// sequence orders entries by capture time when all have one, else by name.
func sequence(es []entry) {
	captureOrder(es, func(e *entry) (string, time.Time) { return e.path, e.taken })
}

// place returns, for each scene of one folder, the lost files that belong to it.
func place(scenes [][]Photo, lost []Lost, opt Options) [][]Lost {
	out := make([][]Lost, len(scenes))
	if len(lost) == 0 || len(scenes) == 0 {
		return out
	}
	var es []entry
	largest := 0
	for i, sc := range scenes {
		largest = max(largest, len(sc))
		for _, p := range sc {
			es = append(es, entry{path: p.Path, taken: p.Taken, scene: i, lost: -1})
		}
	}
	for i, l := range lost {
		es = append(es, entry{path: l.Path, taken: l.Taken, scene: -1, lost: i})
	}
	sequence(es)

	size := func(c int) int { return len(scenes[c]) + len(out[c]) }
	// distance is how far l was shot from scene c, ok false when either time is unknown.
	distance := func(c int, l Lost) (time.Duration, bool) {
		if l.Taken.IsZero() {
			return 0, false
		}
		best, ok := time.Duration(math.MaxInt64), false
		for _, p := range scenes[c] {
			if p.Taken.IsZero() {
				continue
			}
			d := l.Taken.Sub(p.Taken)
			if d < 0 {
				d = -d
			}
			best, ok = min(best, d), true
		}
		return best, ok
	}
	may := func(c int, l Lost, between int) bool {
		if size(c) >= MaxFrames || (len(scenes[c]) < 2 && largest < 2 && !offExposure(scenes[c][0])) {
			return false
		}
		if cam := scenes[c][0].Camera; l.Camera != "" && cam != "" && cam != l.Camera {
			return false
		}
		if d, ok := distance(c, l); ok {
			return d <= opt.MaxGap*time.Duration(between+1)
		}
		if l.Taken.IsZero() {
			for _, p := range scenes[c] {
				if looksAlike(l.Path, p.Path) {
					return true
				}
			}
			return false
		}
		return true
	}
	var run []int
	settle := func(prev, next int) {
		for k, li := range run {
			l := lost[li]
			if prev >= 0 && prev == next {
				out[prev] = append(out[prev], l)
				continue
			}
			var cands []int
			if prev >= 0 && may(prev, l, k) {
				cands = append(cands, prev)
			}
			if next >= 0 && may(next, l, len(run)-1-k) {
				cands = append(cands, next)
			}
			if len(cands) == 2 {
				da, oka := distance(cands[0], l)
				db, okb := distance(cands[1], l)
				shortA, shortB := size(cands[0]) < largest, size(cands[1]) < largest
				switch {
				case oka && okb && da != db:
					if da > db {
						cands = cands[1:]
					} else {
						cands = cands[:1]
					}
				case shortA && !shortB:
					cands = cands[:1]
				case shortB && !shortA:
					cands = cands[1:]
				}
			}
			for _, c := range cands {
				out[c] = append(out[c], l)
			}
		}
		run = run[:0]
	}
	prev := -1
	for _, e := range es {
		if e.lost >= 0 {
			run = append(run, e.lost)
			continue
		}
		settle(prev, e.scene)
		prev = e.scene
	}
	settle(prev, -1)
	for _, ls := range out {
		sort.SliceStable(ls, func(i, j int) bool { return naturalLess(filepath.Base(ls[i].Path), filepath.Base(ls[j].Path)) })
	}
	return out
}

// A frame whose thumbnail's mean linear luminance is below darkFrame or above
// brightFrame (log2) is some 2 EV or more from a normal exposure (about -3: kim's
// and library_phone's middle brackets measure -3.7 and -3.2, their extremes -6.6
// and -0.3).
const (
	darkFrame   = -5.0
	brightFrame = -0.8
)

// offExposure reports whether a lone frame looks like one end of a bracket set.
func offExposure(p Photo) bool { return p.Brightness < darkFrame || p.Brightness > brightFrame }

// looksAlike reports whether two file names look like frames of one camera: the
// same extension and stems of the same length give or take one (IMG_0999, IMG_1000).
func looksAlike(a, b string) bool {
	ea, eb := filepath.Ext(a), filepath.Ext(b)
	if !strings.EqualFold(ea, eb) {
		return false
	}
	la, lb := len(filepath.Base(a))-len(ea), len(filepath.Base(b))-len(eb)
	return la-lb <= 1 && lb-la <= 1
}

// Judge decides whether a scene that lost brackets can be made from the ones kept
// (see the rule above). With nothing lost both answers are empty; else exactly one
// of warning (made, with this said) and problem (not made, and why) is set.
func Judge(kept []Photo, lost []Lost) (warning, problem string) {
	if len(lost) == 0 {
		return "", ""
	}
	total := len(kept) + len(lost)
	var names []string
	for _, l := range lost {
		names = append(names, fmt.Sprintf("%s (%s)", filepath.Base(l.Path), l.Reason))
	}
	lostText := strings.Join(names, ", ")
	if len(kept) == 0 {
		return "", fmt.Sprintf("none of the scene's %d brackets can be read: %s", total, lostText)
	}

	useEV := true
	for _, p := range kept {
		if math.IsNaN(p.EV) {
			useEV = false
		}
	}
	exposure := func(p Photo) float64 {
		if useEV {
			return p.EV
		}
		return p.Brightness
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range kept {
		lo, hi = min(lo, exposure(p)), max(hi, exposure(p))
	}

	// Where each lost bracket lies: -1 darker than every kept one, +1 brighter, 0
	// within their range, 2 outside it on an unknown side.
	es := make([]entry, 0, total)
	for i, p := range kept {
		es = append(es, entry{path: p.Path, taken: p.Taken, scene: i, lost: -1})
	}
	for i, l := range lost {
		es = append(es, entry{path: l.Path, taken: l.Taken, scene: -1, lost: i})
	}
	sequence(es)
	first, last := -1, -1
	for i, e := range es {
		if e.lost < 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	trend := 0 // how exposure runs along the sequence
	if d := exposure(kept[es[last].scene]) - exposure(kept[es[first].scene]); d > 0 {
		trend = 1
	} else if d < 0 {
		trend = -1
	}
	// Without a trend (one frame left), frames that are all dark or all bright say
	// on which side the lost ones were.
	allDark, allBright := true, true
	for _, p := range kept {
		allDark = allDark && p.Brightness < darkFrame
		allBright = allBright && p.Brightness > brightFrame
	}
	side := make([]int, len(lost))
	for i, e := range es {
		if e.lost < 0 {
			continue
		}
		l := lost[e.lost]
		switch {
		case useEV && !math.IsNaN(l.EV):
			const slack = 0.1
			if l.EV < lo-slack {
				side[e.lost] = -1
			} else if l.EV > hi+slack {
				side[e.lost] = 1
			}
		case i < first || i > last:
			switch {
			case trend != 0 && i < first:
				side[e.lost] = -trend
			case trend != 0:
				side[e.lost] = trend
			case allDark:
				side[e.lost] = 1
			case allBright:
				side[e.lost] = -1
			default:
				side[e.lost] = 2
			}
		}
	}
	darker, brighter, unknown := false, false, false
	for _, s := range side {
		darker = darker || s == -1
		brighter = brighter || s == 1
		unknown = unknown || s == 2
	}

	spread := hi - lo
	var why string
	switch {
	case darker || brighter || unknown:
		which := "lost ones lie outside the range of those left"
		switch {
		case brighter && !darker && !unknown:
			which = "lost ones are brighter than those left"
		case darker && !brighter && !unknown:
			which = "lost ones are darker than those left"
		}
		why = fmt.Sprintf("%s not span the scene's exposures (the %s)", left(len(kept), "does", "do"), which)
	case len(kept) < MinKept:
		why = fmt.Sprintf("%s too few: a scene that lost brackets needs at least %d to span its exposures", left(len(kept), "is", "are"), MinKept)
	case spread < MinSpread:
		why = fmt.Sprintf("%s only %.1f EV apart", left(len(kept), "is", "are"), spread)
	}
	if why == "" {
		return fmt.Sprintf("made from %d of %d brackets: %s could not be used; the brackets left span the exposures (%.1f EV, the lost ones within)",
			len(kept), total, lostText, spread), ""
	}
	result := "badly exposed"
	switch {
	case brighter && darker:
		result = "both too dark and too bright"
	case brighter:
		result = "too dark"
	case darker:
		result = "too bright"
	}
	return "", fmt.Sprintf("%d of the scene's %d brackets cannot be used: %s; %s, so the result would be %s",
		len(lost), total, lostText, why, result)
}

// left says how many brackets are left, with the verb agreeing.
func left(n int, one, many string) string {
	if n == 1 {
		return "the 1 bracket left " + one
	}
	return fmt.Sprintf("the %d brackets left %s", n, many)
}
