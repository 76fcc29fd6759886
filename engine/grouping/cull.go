package grouping

import (
	"fmt"
	"os"
	"path/filepath"
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
	scenes, aside := CullScenes([]Scene{{Files: files}})
	if len(scenes) > 0 {
		kept = scenes[0].Files
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

// CullScenes culls every scene of a grouping as Cull does one, and also finds a
// bracket set shot twice that grouping split in two (with EXIF, a repeated
// exposure starts a new scene): two neighbouring scenes of one folder are judged
// together, and when frames of one repeat frames of the other, the weaker run's
// repeated frames are set aside. A scene left without frames is dropped; the
// others keep their Lost, Warning and Problem. Each file is read once.
func CullScenes(scenes []Scene) ([]Scene, []SetAside) {
	var files []string
	for _, s := range scenes {
		files = append(files, s.Files...)
	}
	frames := readFrames(files)
	judge := func(fs []string) []cull.Verdict {
		var judged []cull.Frame
		var idx []int
		for i, f := range fs {
			if fr, ok := frames[f]; ok {
				judged = append(judged, fr)
				idx = append(idx, i)
			}
		}
		out := make([]cull.Verdict, len(fs))
		for i := range out {
			out[i] = cull.Verdict{Keep: true, Twin: -1}
		}
		for k, v := range cull.Judge(judged) {
			if v.Twin >= 0 {
				v.Twin = idx[v.Twin]
			}
			out[idx[k]] = v
		}
		return out
	}
	var out []Scene
	var aside []SetAside
	apply := func(s Scene, vs []cull.Verdict) {
		kept := s.Files[:0:0]
		for i, f := range s.Files {
			if vs[i].Keep {
				kept = append(kept, f)
				continue
			}
			aside = append(aside, SetAside{Path: f, Reason: vs[i].Reason, Code: vs[i].Code})
		}
		if len(kept) > 0 {
			s.Files = kept
			out = append(out, s)
		}
	}
	for i := 0; i < len(scenes); i++ {
		s := scenes[i]
		if i+1 < len(scenes) && len(s.Files) >= 2 && len(scenes[i+1].Files) >= 2 &&
			filepath.Dir(s.Files[0]) == filepath.Dir(scenes[i+1].Files[0]) {
			n := len(s.Files)
			both := append(append([]string(nil), s.Files...), scenes[i+1].Files...)
			vs := judge(both)
			across := false
			for k, v := range vs {
				if v.Code == cull.CodeRepeat && (k < n) != (v.Twin < n) {
					across = true
				}
			}
			if across {
				apply(s, vs[:n])
				apply(scenes[i+1], vs[n:])
				i++
				continue
			}
		}
		apply(s, judge(s.Files))
	}
	return out, aside
}

// readFrames reads the files for cull, a few at a time; files that cannot be read
// are missing from the map.
func readFrames(files []string) map[string]cull.Frame {
	out := make(map[string]cull.Frame, len(files))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, imaging.Workers()))
	for _, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if fr, err := ReadFrame(f); err == nil {
				mu.Lock()
				out[f] = fr
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}
