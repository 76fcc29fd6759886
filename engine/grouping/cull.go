package grouping

import (
	"fmt"
	"os"
	"sync"

	"github.com/porchlight/porchlight/engine/cull"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// SetAside is a frame of a scene that culling left out of the merge, and why in
// words for the photographer (one of the cull.Reason texts).
type SetAside struct {
	Path   string
	Reason string
	// Code is the reason as a stable identifier (cull.Code), for the window's icons
	// and for tests.
	Code cull.Code
}

// Cull reads small copies of a scene's frames and sets aside the ones not worth
// merging: a repeated bracket set's weaker run, blurred, black and test frames (see
// package cull). kept keeps the order of files; every frame is either kept or set
// aside, and at least one is always kept. A file that cannot be read is kept (it is
// the merge's to report) and does not take part in the judging of the others.
//
// It reads each frame reduced (JPEG at a DCT scale, others through their preview or
// a streamed reduction), so a 5-frame 12 MP scene takes a few hundred milliseconds.
func Cull(files []string) (kept []string, aside []SetAside) {
	frames := make([]cull.Frame, len(files))
	ok := make([]bool, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, imaging.Workers()))
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fr, err := ReadFrame(f)
			if err == nil {
				frames[i], ok[i] = fr, true
			}
		}()
	}
	wg.Wait()
	var judged []cull.Frame
	var idx []int
	for i := range files {
		if ok[i] {
			judged = append(judged, frames[i])
			idx = append(idx, i)
		}
	}
	verdict := make([]cull.Verdict, len(files))
	for i := range verdict {
		verdict[i].Keep = true
	}
	for k, v := range cull.Judge(judged) {
		verdict[idx[k]] = v
	}
	for i, f := range files {
		if verdict[i].Keep {
			kept = append(kept, f)
			continue
		}
		aside = append(aside, SetAside{Path: f, Reason: verdict[i].Reason, Code: verdict[i].Code})
	}
	return kept, aside
}

// ReadFrame reads a frame for cull.Judge: its pixels reduced to about
// cull.AnalysisEdge and its EXIF exposure.
func ReadFrame(path string) (cull.Frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return cull.Frame{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return cull.Frame{}, err
	}
	info, err := codec.Probe(f, st.Size())
	if err != nil {
		return cull.Frame{}, fmt.Errorf("not a readable photo: %w", err)
	}
	meta, _ := codec.ReadMeta(f, st.Size())
	var img *imaging.Image
	if info.Format == "jpeg" {
		// A DCT-scaled decode is the fastest read of a JPEG, and one whose scale
		// lands on the size asked for needs no resize afterwards.
		img, _, err = codec.Decode(f, st.Size(), codec.DecodeOptions{ScaleToMaxEdge: cullEdge(max(info.Width, info.Height))})
	} else {
		img, err = codec.Thumbnail(f, st.Size(), cull.AnalysisEdge)
	}
	if err != nil {
		return cull.Frame{}, fmt.Errorf("not a readable photo: %w", err)
	}
	return cull.Frame{Image: img, ExposureTime: meta.ExposureTime, FNumber: meta.FNumber, ISO: meta.ISO}, nil
}

// cullEdge is the edge to decode a JPEG of long edge n at: the largest DCT
// reduction (1/2, 1/4, 1/8) that still leaves three quarters of
// cull.AnalysisEdge, capped at cull.AnalysisEdge.
func cullEdge(n int) int {
	e := n
	for _, k := range []int{8, 4, 2} {
		if m := (n + k - 1) / k; m >= cull.AnalysisEdge*3/4 {
			e = m
			break
		}
	}
	return min(e, cull.AnalysisEdge)
}
