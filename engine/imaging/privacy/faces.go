package privacy

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Face detection is two passes. Proposals: the frontal cascade with the best recall
// (haarcascade_frontalface_default) and the profile cascade, plain and mirrored, slide
// over the whole pyramid; their windows are grouped with no neighbour minimum, so
// every plausible face becomes a candidate. Verification: around each candidate, a
// panel of cascades trained differently (two more Haar frontal models, two LBP frontal
// models, both profile directions) is run densely at nine scales, an eye cascade looks
// in the upper half, and the skin-tone share of the centre is measured. A logistic
// model over that evidence gives the confidence. Running the panel only where a face
// was proposed costs a small fraction of running it everywhere.

// faceModelFiles are the cascades of the face panel, in feature order.
var faceModelFiles = [...]struct {
	rel      string
	mirrored bool
}{
	{"haarcascades/haarcascade_frontalface_default.xml", false},
	{"haarcascades/haarcascade_frontalface_alt2.xml", false},
	{"haarcascades/haarcascade_frontalface_alt.xml", false},
	{"lbpcascades/lbpcascade_frontalface_improved.xml", false},
	{"lbpcascades/lbpcascade_frontalface.xml", false},
	{"haarcascades/haarcascade_profileface.xml", false},
	{"haarcascades/haarcascade_profileface.xml", true},
}

// Indexes into faceModelFiles of the proposal cascades.
const (
	faceDefault  = 0
	faceProfile  = 5
	faceProfileM = 6
	facePanel    = len(faceModelFiles)
)

const eyeModel = "haarcascades/haarcascade_eye.xml"

type faceModels struct {
	panel [facePanel]*Cascade
	eye   *Cascade
}

func loadFaceModels() (*faceModels, error) {
	m := &faceModels{}
	for i, f := range faceModelFiles {
		c, err := loadModel(f.rel, f.mirrored)
		if err != nil {
			return nil, err
		}
		m.panel[i] = c
	}
	var err error
	if m.eye, err = loadModel(eyeModel, false); err != nil {
		return nil, err
	}
	return m, nil
}

// profileMinObj is the smallest face width (scanned pixels) the profile proposals look
// for. The profile model is the slowest to run (its early stages pass many windows), and
// small faces are proposed by the frontal model anyway; from two windows up the two
// profile scans cost about a quarter as much.
const profileMinObj = 40

// proposalRuns are the whole-image scans the face detector needs; gate (nil for a
// photo without colour) skips windows without skin tone.
func (m *faceModels) proposalRuns(gate *skinGate) []cascadeRun {
	return []cascadeRun{
		{c: m.panel[faceDefault], gate: gate},
		{c: m.panel[faceProfile], minObj: profileMinObj, gate: gate},
		{c: m.panel[faceProfileM], minObj: profileMinObj, gate: gate},
	}
}

// faceEvidence is everything the confidence model reads about one candidate.
type faceEvidence struct {
	panel [facePanel]evidence
	eyesL int     // eye windows centred in the upper left of the face
	eyesR int     // ... upper right
	eyesX int     // ... anywhere else (texture that fires the eye model everywhere)
	skin  float64 // share of skin-tone samples in the centre
}

// faceCandidate is a proposed face in scanned-image pixels.
type faceCandidate struct {
	box  rectF
	seed int // hits of the proposal group
	ev   faceEvidence
	conf float64
}

// maxFaceCandidates bounds the verification work on busy photos; candidates are taken
// strongest first.
const maxFaceCandidates = 400

// minSeed is the fewest proposal windows a candidate needs. A lone window is what
// texture produces everywhere (six of seven candidates of the test photos, and no face
// that the panel could confirm), so it is not worth verifying.
const minSeed = 2

// faceCandidates clusters the proposal groups of all three proposal cascades.
func faceCandidates(hits [][]rawHit) []faceCandidate {
	var gs []group
	for _, h := range hits {
		gs = append(gs, groupHits(h, minSeed-1, 0.2)...)
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].n > gs[j].n })
	var out []faceCandidate
	for _, g := range gs {
		b := rectF{g.x, g.y, g.w, g.h}
		dup := false
		for _, c := range out {
			if sameObject(b, c.box) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, faceCandidate{box: b, seed: g.n})
			if len(out) == maxFaceCandidates {
				break
			}
		}
	}
	return out
}

// sameObject says whether two boxes frame the same object: they overlap by a third of
// their union, or one's centre lies in the other and their sizes are within 2x.
func sameObject(a, b rectF) bool {
	if iouF(a, b) >= 0.3 {
		return true
	}
	inside := func(p, q rectF) bool {
		return p.cx() >= q.x && p.cx() <= q.x+q.w && p.cy() >= q.y && p.cy() <= q.y+q.h
	}
	ratio := a.w / b.w
	return (inside(a, b) || inside(b, a)) && ratio <= 2 && ratio >= 0.5
}

func iouF(a, b rectF) float64 {
	x0, y0 := math.Max(a.x, b.x), math.Max(a.y, b.y)
	x1, y1 := math.Min(a.x+a.w, b.x+b.w), math.Min(a.y+a.h, b.y+b.h)
	if x1 <= x0 || y1 <= y0 {
		return 0
	}
	in := (x1 - x0) * (y1 - y0)
	return in / (a.w*a.h + b.w*b.h - in)
}

// panelScales are the window widths, relative to the candidate's width, at which the
// panel looks: about -30% to +45% in steps of 1.1, so that models whose boxes are
// tighter or looser than the proposal's still land on the face.
var panelScales = []float64{0.7, 0.77, 0.85, 0.93, 1.0, 1.1, 1.21, 1.33, 1.46}

// eyeScales are eye window widths relative to the face width.
var eyeScales = []float64{0.16, 0.18, 0.2, 0.22, 0.25, 0.28, 0.31}

// verifyFaces gathers the evidence of every candidate, spreading candidates over the
// workers; each worker has its own local scanner.
func verifyFaces(m *faceModels, pyr *pyramid, img *imaging.Image, k float64, cands []faceCandidate) {
	if len(cands) == 0 {
		return
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < min(imaging.Workers(), len(cands)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := newLocal(pyr)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(cands) {
					return
				}
				c := &cands[i]
				c.ev = verifyFace(m, l, c.box, skinShare(img, c.box, k))
			}
		}()
	}
	wg.Wait()
}

// faceAngles are the in-plane turns (radians, about 17 degrees) at which the panel
// looks, since the cascades were trained on upright faces and people tilt their heads.
var faceAngles = [...]float64{0, 0.3, -0.3}

// sureFace is the confidence at which an upright face needs no look at the turned
// versions: turning can only raise the panel's agreement, not the decision.
const sureFace = 0.95

// verifyFace collects the evidence at each angle and keeps the angle where the panel
// agrees most. An upright face that is already certain skips the turned looks, which
// are most of the cost on group photos.
func verifyFace(m *faceModels, l *local, box rectF, skin float64) faceEvidence {
	var best faceEvidence
	bestScore := -1.0
	for i, a := range faceAngles {
		ev := verifyFaceAt(m, l, box, a)
		ev.skin = skin
		if i == 0 && faceConfidence(ev) >= sureFace {
			return ev
		}
		score := 0.0
		for _, e := range ev.panel {
			score += math.Log1p(float64(e.n))
		}
		if score > bestScore {
			best, bestScore = ev, score
		}
	}
	return best
}

func verifyFaceAt(m *faceModels, l *local, box rectF, angle float64) faceEvidence {
	var ev faceEvidence
	roi := box.expand(0.35, 0.35)
	cx, cy := box.cx(), box.cy()
	cos, sin := math.Cos(angle), math.Sin(angle)
	// local returns image positions; turn them back into the face's own frame.
	frame := func(x, y float64) (u, v float64) {
		dx, dy := x-cx, y-cy
		return cos*dx + sin*dy, -sin*dx + cos*dy
	}
	for i, c := range m.panel {
		var n int
		for _, rel := range panelScales {
			l.scanAt(c, roi, box.w*rel, angle, func(x, y, _, _ float64) {
				// A window counts when its centre is near the candidate's centre.
				if u, v := frame(x, y); math.Abs(u) <= 0.2*box.w && math.Abs(v) <= 0.2*box.h {
					n++
				}
			})
		}
		ev.panel[i] = evidence{n: n}
	}
	// Eyes: a face has one on each side of the upper half and none lower down; busy
	// texture fires the eye model everywhere, so hits elsewhere count against.
	area := box.expand(0.05, 0.05)
	for _, rel := range eyeScales {
		l.scanAt(m.eye, area, box.w*rel, angle, func(x, y, _, _ float64) {
			u, v := frame(x, y)
			u, v = u/box.w+0.5, v/box.h+0.5
			switch {
			case v >= 0.15 && v <= 0.55 && u >= 0.1 && u < 0.5:
				ev.eyesL++
			case v >= 0.15 && v <= 0.55 && u >= 0.5 && u <= 0.9:
				ev.eyesR++
			default:
				ev.eyesX++
			}
		})
	}
	return ev
}

// skinShare is the share of a 12x12 grid over the centre of the box (scanned-image
// pixels, k original pixels each) whose colour falls in the usual YCbCr skin cluster
// (Cb 77..127, Cr 133..173 on 8-bit sRGB).
func skinShare(img *imaging.Image, box rectF, k float64) float64 {
	const grid = 12
	n, skin := 0, 0
	for gy := 0; gy < grid; gy++ {
		for gx := 0; gx < grid; gx++ {
			x := int((box.x + box.w*(0.25+0.5*(float64(gx)+0.5)/grid)) * k)
			y := int((box.y + box.h*(0.25+0.5*(float64(gy)+0.5)/grid)) * k)
			if x < 0 || y < 0 || x >= img.W() || y >= img.H() {
				continue
			}
			n++
			if img.C < 3 {
				continue
			}
			o := y*img.Stride + x*img.C
			r := float64(imaging.Encode8(img.Pix[o]))
			g := float64(imaging.Encode8(img.Pix[o+1]))
			b := float64(imaging.Encode8(img.Pix[o+2]))
			cb := 128 - 0.168736*r - 0.331264*g + 0.5*b
			cr := 128 + 0.5*r - 0.418688*g - 0.081312*b
			if cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173 {
				skin++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(skin) / float64(n)
}

// faceWeights is the logistic model from evidence to the probability that a candidate
// is a face, fitted (unweighted, L2 0.01) on the candidates of the shared test photos:
// the 43 annotated faces against every other candidate of the face set, the interiors,
// exteriors and sky photos, the car photos without drivers and one frame of five
// bracket sets. At 0.3 it keeps 41 of the 43 faces (40 in leave-one-photo-out
// validation) with one false detection, a glass of orange juice that every frontal
// model takes for a face; no candidate of an interior scores above 0.2. The cascades'
// last-stage margins were tried as further evidence and left out: they added nothing
// in validation once the panel's window counts were in.
var faceWeights = struct {
	bias                               float64
	frontal, haarPanel, lbpPanel, prof float64
	eyePair, eyeElse, skin             float64
}{
	bias: -8.235, frontal: 0.242, haarPanel: 0.795, lbpPanel: 1.197, prof: 1.275,
	eyePair: 0.382, eyeElse: 0.298, skin: 0.453,
}

// faceConfidence maps a candidate's evidence to 0..1.
func faceConfidence(ev faceEvidence) float64 {
	w := &faceWeights
	l := func(n int) float64 { return math.Log1p(float64(n)) }
	p := &ev.panel
	z := w.bias +
		w.frontal*l(p[0].n) +
		w.haarPanel*l(p[1].n+p[2].n) +
		w.lbpPanel*l(p[3].n+p[4].n) +
		w.prof*l(p[5].n+p[6].n) +
		w.eyePair*l(min(ev.eyesL, ev.eyesR)) +
		w.eyeElse*l(ev.eyesX) +
		w.skin*ev.skin
	return sigmoid(z)
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
