// Package privacy finds faces, licence plates and photos or frames in a listing photo
// and blurs them irreversibly (recipe privacy@1.1.0). It needs no model server: faces
// and plates use OpenCV's trained Viola-Jones cascades (from Debian's opencv-data, read
// by the evaluator in this package), plates add a glyph-row reader, and frames are
// found from edges. Every detection carries a calibrated confidence in 0..1 that the
// order's threshold filters.
package privacy

import (
	"context"
	"fmt"
	"image"
	"math"
	"sort"
	"strings"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Concepts the detectors know, as the API spells them.
const (
	ConceptFace  = "human face"
	ConceptPlate = "license plate"
	ConceptFrame = "photo or frame"
)

// DefaultCategories are detected when Options.Categories is empty.
var DefaultCategories = []string{ConceptFace, ConceptPlate, ConceptFrame}

// DefaultThreshold is the API's default detection threshold.
const DefaultThreshold = 0.3

// Options selects what to detect.
type Options struct {
	// Categories lists concepts (ConceptFace, ConceptPlate, ConceptFrame); empty means
	// all three. Matching ignores case and surrounding space.
	Categories []string
	// Threshold keeps detections whose confidence is at least this, 0..1. Callers pass
	// the resolved order option (DefaultThreshold when the order did not set one); 0
	// keeps every candidate.
	Threshold float64
}

// Detection is one region to blur, in the pixels of the image passed to Detect.
type Detection struct {
	Concept    string
	Box        image.Rectangle
	Confidence float64 // 0..1
}

// scanMaxEdge is the longest edge of the scanned image. Larger photos are box-averaged
// down by an integer factor: with the 20-pixel face window the smallest face found is
// then about 1/70 of the long edge.
const scanMaxEdge = 1344

// Detect finds the selected concepts in img (linear light, 1, 3 or 4 channels) and
// returns the detections at or above the threshold, most confident first. Once ctx
// is done it returns ctx.Err() within a pass, or a row of a pyramid level's scan.
func Detect(ctx context.Context, img *imaging.Image, opt Options) ([]Detection, error) {
	want, err := concepts(opt.Categories)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(opt.Threshold) || opt.Threshold < 0 || opt.Threshold > 1 {
		return nil, fmt.Errorf("privacy: threshold %v outside 0..1", opt.Threshold)
	}
	if err := checkImage(img); err != nil {
		return nil, err
	}
	var fm *faceModels
	var pm *plateModels
	if want[ConceptFace] {
		if fm, err = loadFaceModels(); err != nil {
			return nil, err
		}
	}
	if want[ConceptPlate] {
		if pm, err = loadPlateModels(); err != nil {
			return nil, err
		}
	}
	k := int(math.Ceil(float64(max(img.W(), img.H())) / scanMaxEdge))
	g, skin, err := grayAndSkin(img, k)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kf := float64(k)
	pyr := newPyramid(g, 8, 8)

	// One pass over the pyramid serves the face proposals and the plate cascades.
	var runs []cascadeRun
	nFace := 0
	if fm != nil {
		runs = append(runs, fm.proposalRuns(newSkinGate(skin, g.w, g.h))...)
		nFace = len(runs)
	}
	if pm != nil {
		runs = append(runs, pm.runs()...)
	}
	hits := scanPyramid(ctx, pyr, runs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var dets []Detection
	add := func(concept string, box rectF, conf float64) {
		if conf < opt.Threshold {
			return
		}
		r := image.Rect(int(math.Floor(box.x*kf)), int(math.Floor(box.y*kf)),
			int(math.Ceil((box.x+box.w)*kf)), int(math.Ceil((box.y+box.h)*kf)))
		r = r.Add(img.Rect.Min).Intersect(img.Rect)
		if !r.Empty() {
			dets = append(dets, Detection{Concept: concept, Box: r, Confidence: conf})
		}
	}
	if fm != nil {
		cands := faceCandidates(hits[:nFace])
		verifyFaces(fm, pyr, img, kf, cands)
		for _, c := range nms(cands) {
			add(ConceptFace, c.box, c.conf)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if pm != nil {
		props := append(rowProposals(g), cascadeProposals(hits[nFace:])...)
		for _, c := range verifyPlates(img, pyr, kf, props, hits[nFace:]) {
			add(ConceptPlate, c.box, plateConfidence(c))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if want[ConceptFrame] {
		for _, c := range detectFrames(pyr) {
			add(ConceptFrame, c.box, frameConfidence(c))
		}
	}
	sort.SliceStable(dets, func(i, j int) bool { return dets[i].Confidence > dets[j].Confidence })
	return dets, nil
}

// nms scores face candidates and drops the weaker of two that frame the same face.
func nms(cands []faceCandidate) []faceCandidate {
	for i := range cands {
		cands[i].conf = faceConfidence(cands[i].ev)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].conf > cands[j].conf })
	var out []faceCandidate
	for _, c := range cands {
		dup := false
		for _, o := range out {
			if sameObject(c.box, o.box) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// concepts validates the requested categories.
func concepts(cats []string) (map[string]bool, error) {
	want := map[string]bool{}
	if len(cats) == 0 {
		cats = DefaultCategories
	}
	for _, c := range cats {
		n := strings.Join(strings.Fields(strings.ToLower(c)), " ")
		switch n {
		case ConceptFace, ConceptPlate, ConceptFrame:
			want[n] = true
		default:
			return nil, fmt.Errorf("privacy: unknown category %q (known: %s)", c, strings.Join(DefaultCategories, ", "))
		}
	}
	return want, nil
}
