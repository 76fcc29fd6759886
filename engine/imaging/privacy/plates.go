package privacy

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Plate detection. The two Russian plate cascades of opencv-data fire only weakly on
// US plates (their plates are 4.6:1, US plates 2:1), so they are one of two proposal
// sources and a piece of evidence, not the detector. The other source finds rows of
// glyphs anywhere in the image (connected components of a local-mean binarisation at
// four glyph sizes). Every proposal is then checked on a full-resolution patch: its
// text row is found again, the plate box is rebuilt around it with US/EU plate
// proportions, and the glyph count, outline, flat paint between glyphs and cascade support
// give the confidence.

var plateModelFiles = [...]string{
	"haarcascades/haarcascade_russian_plate_number.xml",
	"haarcascades/haarcascade_licence_plate_rus_16stages.xml",
}

type plateModels struct {
	cascades [len(plateModelFiles)]*Cascade
}

func loadPlateModels() (*plateModels, error) {
	m := &plateModels{}
	for i, rel := range plateModelFiles {
		c, err := loadModel(rel, false)
		if err != nil {
			return nil, err
		}
		m.cascades[i] = c
	}
	return m, nil
}

func (m *plateModels) runs() []cascadeRun {
	out := make([]cascadeRun, len(m.cascades))
	for i, c := range m.cascades {
		out[i] = cascadeRun{c: c}
	}
	return out
}

// plateCandidate is a proposed plate in scanned-image pixels, with its evidence.
type plateCandidate struct {
	box      rectF // plate box estimate
	glyphs   int   // glyphs in the text row found on the full-resolution patch
	contrast float64
	gapFlat  float64 // share of the row's non-glyph pixels close to their median
	hDev     float64 // spread of glyph heights
	aspect   float64 // mean glyph width over height
	border   float64 // plate outline strength: weakest of its four sides, 0..1
	support  int     // cascade windows agreeing with the plate box
	conf     float64
}

// glyphRadii are the local-mean radii (scanned pixels) of the global glyph search; a
// radius r finds glyphs from 1.5r to 4r tall.
var glyphRadii = []int{3, 5, 8, 12}

// rowProposals finds text rows of 4 to 10 glyphs in the scanned image and returns the
// plate boxes they imply.
func rowProposals(g *gray) []rectF {
	var cs charScratch
	var out []rectF
	for _, r := range glyphRadii {
		cs.localMean(g.pix, g.w, g.h, r)
		lim := glyphLimits{minH: max(6, int(1.5*float64(r))), maxH: 4 * r}
		for _, dark := range []bool{true, false} {
			cs.binarize(g.pix, g.w, g.h, dark)
			clearLines(cs.fg, g.w, g.h, 5*r, 5*r)
			cs.label(g.w, g.h)
			cs.keepGlyphs(lim, g.w, g.h)
			for _, row := range cs.rows(dark, 4) {
				aspect := float64(row.x1-row.x0) / row.meanH
				if row.n > 10 || aspect < 1.8 || aspect > 8 {
					continue
				}
				out = append(out, plateFromRow(rectF{float64(row.x0), float64(row.y0),
					float64(row.x1 - row.x0), float64(row.y1 - row.y0)}, row.meanH))
			}
		}
	}
	return out
}

// plateFromRow rebuilds a plate box around its text row: glyphs are about 45% of the
// plate height and the row about 80% of its width.
func plateFromRow(row rectF, glyphH float64) rectF {
	h := glyphH / 0.45
	w := math.Max(row.w/0.8, 1.6*h)
	return rectF{row.cx() - w/2, row.cy() - h/2, w, h}
}

// cascadeProposals turns grouped plate-cascade windows into plate boxes; the Russian
// windows frame the text band, so the box is made a little taller.
func cascadeProposals(hits [][]rawHit) []rectF {
	var out []rectF
	for _, h := range hits {
		for _, g := range groupHits(h, 0, 0.2) {
			b := rectF{g.x, g.y, g.w, g.h}
			out = append(out, b.expand(0, 0.25))
		}
	}
	return out
}

// verifyPlates checks each proposal on a patch 80 pixels tall, merges proposals that
// land on the same text row, and scores them. Small plates are read from the
// full-resolution image (k original pixels per scanned pixel), whose detail the scanned
// image has averaged away; large ones from the scanned image's pyramid, which has
// resolution to spare and costs far less to sample.
func verifyPlates(img *imaging.Image, pyr *pyramid, k float64, props []rectF, hits [][]rawHit) []plateCandidate {
	var cs charScratch
	var patch []uint8
	l := newLocal(pyr)
	var out []plateCandidate
	const ph = 80 // patch height: plate glyphs come out about 25 pixels tall
	for _, p := range props {
		region := p.expand(0.2, 0.3)
		if region.w < 8 || region.h < 4 {
			continue
		}
		pw := int(ph * region.w / region.h)
		if pw < 16 || pw > 12*ph {
			continue
		}
		hh := ph
		if s := region.h / ph; s >= 1 || k == 1 {
			l.sample(region, s, 0)
			pw, hh = l.img.w, l.img.h
			patch = append(patch[:0], l.img.pix...)
		} else {
			orig := rectF{region.x * k, region.y * k, region.w * k, region.h * k}
			patch = lumaPatch(img, orig, pw, ph, patch)
		}
		row := cs.findTextRow(patch, pw, hh)
		if row.n < 3 {
			continue
		}
		// Back to scanned pixels.
		sx, sy := region.w/float64(pw), region.h/float64(hh)
		rowBox := rectF{region.x + float64(row.x0)*sx, region.y + float64(row.y0)*sy,
			float64(row.x1-row.x0) * sx, float64(row.y1-row.y0) * sy}
		c := plateCandidate{
			box:      plateFromRow(rowBox, row.meanH*sy),
			glyphs:   row.n,
			contrast: row.contrast,
		}
		c.gapFlat, c.hDev = row.gapFlat, row.heightDev
		c.aspect = row.sumAspect / float64(row.n)
		c.border = plateBorder(patch, pw, hh, row)
		c.support = cascadeSupport(hits, c.box)
		out = append(out, c)
	}
	// The same plate is usually proposed several times; keep the best reading.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].glyphs != out[j].glyphs {
			return out[i].glyphs > out[j].glyphs
		}
		return out[i].contrast > out[j].contrast
	})
	var kept []plateCandidate
	for _, c := range out {
		dup := false
		for _, d := range kept {
			if sameObject(c.box, d.box) {
				dup = true
				break
			}
		}
		if !dup {
			kept = append(kept, c)
		}
	}
	return kept
}

// cascadeSupport counts plate-cascade windows centred inside the plate box with a
// width between half and twice the plate's.
func cascadeSupport(hits [][]rawHit, box rectF) int {
	n := 0
	for _, hs := range hits {
		for _, h := range hs {
			cx, cy := float64(h.x+h.w/2), float64(h.y+h.h/2)
			r := float64(h.w) / box.w
			if cx >= box.x && cx <= box.x+box.w && cy >= box.y && cy <= box.y+box.h && r >= 0.5 && r <= 2 {
				n++
			}
		}
	}
	return n
}

// plateBorder looks for the plate's outline around its text row: a horizontal edge
// above and below the glyphs (0.6 to 1.6 glyph heights from the row's centre) and a
// vertical edge left and right of the row (up to 1.5 glyph heights out). Each side
// scores the best line's share of positions with a clear step (>= 16 grey levels); the
// weakest side is the result, so a shelf with only top and bottom boards scores low.
func plateBorder(pix []uint8, w, h int, row textRow) float64 {
	gh := row.meanH
	cy := float64(row.y0+row.y1) / 2
	xa := max(1, row.x0-int(0.3*gh))
	xb := min(w-1, row.x1+int(0.3*gh))
	const step = 16
	hline := func(y int) float64 {
		if y < 1 || y >= h-1 || xb <= xa {
			return 0
		}
		n := 0
		for x := xa; x < xb; x++ {
			d := int(pix[(y+1)*w+x]) - int(pix[(y-1)*w+x])
			if d >= step || d <= -step {
				n++
			}
		}
		return float64(n) / float64(xb-xa)
	}
	bestH := func(from, to float64) float64 {
		b := 0.0
		for y := int(from); y <= int(to); y++ {
			b = math.Max(b, hline(y))
		}
		return b
	}
	top := bestH(cy-1.6*gh, cy-0.6*gh)
	bottom := bestH(cy+0.6*gh, cy+1.6*gh)
	ya := max(1, int(cy-0.9*gh))
	yb := min(h-1, int(cy+0.9*gh))
	vline := func(x int) float64 {
		if x < 1 || x >= w-1 || yb <= ya {
			return 0
		}
		n := 0
		for y := ya; y < yb; y++ {
			d := int(pix[y*w+x+1]) - int(pix[y*w+x-1])
			if d >= step || d <= -step {
				n++
			}
		}
		return float64(n) / float64(yb-ya)
	}
	bestV := func(from, to int) float64 {
		b := 0.0
		for x := from; x <= to; x++ {
			b = math.Max(b, vline(x))
		}
		return b
	}
	left := bestV(row.x0-int(1.5*gh), row.x0-1)
	right := bestV(row.x1, row.x1+int(1.5*gh))
	return math.Min(math.Min(top, bottom), math.Min(left, right))
}

// plateConfidence maps a verified candidate's evidence to 0..1. The terms were set by
// hand on the six annotated plates and the plate-like text of the other test photos
// (book spines, house numbers and signs, railings, window grids): a closed outline
// around the row, support from the plate cascades and flat paint between the glyphs
// weigh most; glyphs that are too wide or thin, or uneven in height, count against.
// The six plates score 0.76 and above, no other text in the photos above 0.23.
func plateConfidence(c plateCandidate) float64 {
	if c.glyphs < 4 || c.glyphs > 9 {
		return 0
	}
	z := 4*(c.border-0.55) +
		1.5*math.Log1p(float64(c.support)) +
		4*(c.gapFlat-0.55) -
		8*math.Max(0, math.Abs(c.aspect-0.42)-0.1) -
		10*math.Max(0, c.hDev-0.06) +
		0.3*float64(min(c.glyphs, 8)-4) - 1
	return sigmoid(2 * (z - 2.6))
}
