package hotfolder

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/uuid"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/grouping"
)

// codeBracketsMissing fails a scene that lost brackets and cannot do without them.
const codeBracketsMissing = "brackets_missing"

// sceneGroup is the files of one scene and, when it lost brackets, the verdict of
// engine/grouping on what is left.
type sceneGroup struct {
	files            []string
	warning, problem string
}

// group makes the scenes of one domain's waiting files (rels in natural name order):
//
//   - auto: engine/grouping's rules (capture time, exposure, look; RAW+JPEG twins),
//     the same scenes the window makes of a dropped folder;
//   - count:N: N consecutive files in name order; a drop that is not a multiple of N
//     ends with a shorter scene;
//   - subfolder: every subfolder is one scene; loose files are one scene each. A
//     subfolder with more photos than a scene takes fails with that reason.
//
// In every mode a JPEG beside a RAW file of the same name is the RAW's twin: the RAW
// is the input and the JPEG is moved along with it.
//
// holes are the domain's files that failed on their own. They keep their place (in
// name order for count and subfolder, by engine/grouping's rules for auto), and a
// scene that lost one is made from the rest only when that still spans the
// exposures: with a warning then, else it fails naming what it lost.
func (f *folder) group(domain string, rels []string, holes map[string]*journal.Hole, now time.Time) []*journal.Scene {
	twins := twinOf(rels)
	var inputs []string
	for _, r := range rels {
		if _, isTwin := twins[r]; !isTwin {
			inputs = append(inputs, r)
		}
	}
	// A bad JPEG twin of a RAW here is no lost bracket: the RAW is the frame.
	holes = maps.Clone(holes)
	for rel := range twinOf(append(slices.Collect(maps.Keys(holes)), rels...)) {
		delete(holes, rel)
	}
	var groups []sceneGroup
	switch {
	case f.cfg.Grouping == GroupSubfolder && domain != "":
		groups = []sceneGroup{f.judged(inputs, slices.Collect(maps.Keys(holes)), holes)}
	case f.cfg.Grouping == GroupSubfolder:
		for _, r := range inputs {
			groups = append(groups, sceneGroup{files: []string{r}})
		}
	case f.cfg.Grouping == GroupCount:
		all := append(slices.Clone(inputs), slices.Collect(maps.Keys(holes))...)
		slices.SortFunc(all, compareNatural)
		for i := 0; i < len(all); i += f.cfg.Count {
			var files, lost []string
			for _, r := range all[i:min(i+f.cfg.Count, len(all))] {
				if holes[r] != nil {
					lost = append(lost, r)
				} else {
					files = append(files, r)
				}
			}
			groups = append(groups, f.judged(files, lost, holes))
		}
	default:
		groups = f.autoGroups(inputs, holes)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	ref := func(rel string) journal.FileRef {
		e := f.files[rel]
		return journal.FileRef{Rel: rel, Size: e.Size, MtimeNs: e.MtimeNs, FileID: e.FileID, SHA256: e.SHA256}
	}
	var out []*journal.Scene
	drop := uuid.NewString() // the scenes of this drop, submitted as one batch
	placedTwin := map[string]bool{}
	for _, sg := range groups {
		g := sg.files
		if len(g) == 0 {
			continue
		}
		s := &journal.Scene{
			ID: uuid.NewString(), Owner: f.svc.owner, Options: f.cfg.Options, Format: f.cfg.format,
			Naming: f.cfg.Naming, Formed: now, Stage: journal.StageGrouped, Label: stemOf(g[0]), Warning: sg.warning,
			Drop: drop,
		}
		if f.cfg.Grouping == GroupSubfolder && domain != "" {
			s.Label = domain
		}
		for _, r := range g {
			s.Files = append(s.Files, ref(r))
		}
		for twin, raw := range twins {
			if slices.Contains(g, raw) {
				s.Extras = append(s.Extras, ref(twin))
				placedTwin[twin] = true
			}
		}
		slices.SortFunc(s.Extras, func(a, b journal.FileRef) int { return compareNatural(a.Rel, b.Rel) })
		switch {
		case len(s.Files) > engine.MaxBrackets:
			s.Stage, s.Outcome, s.ErrorCode = journal.StageFinished, journal.OutcomeFailed, "too_many_inputs"
			s.Error = fmt.Sprintf("the subfolder %s has %d photos; a scene takes 1 to %d brackets", domain, len(s.Files), engine.MaxBrackets)
			s.Finished = now
		case sg.problem != "":
			s.Stage, s.Outcome, s.ErrorCode, s.Error, s.Finished = journal.StageFinished, journal.OutcomeFailed, codeBracketsMissing, sg.problem, now
		}
		out = append(out, s)
	}
	// A twin whose RAW is in no scene (it cannot be) would otherwise wait forever.
	for twin := range twins {
		if !placedTwin[twin] {
			out = append(out, &journal.Scene{
				ID: uuid.NewString(), Owner: f.svc.owner, Options: f.cfg.Options, Format: f.cfg.format,
				Naming: f.cfg.Naming, Formed: now, Stage: journal.StageGrouped, Label: stemOf(twin),
				Files: []journal.FileRef{ref(twin)}, Drop: drop,
			})
		}
	}
	return out
}

// badScene is the failed scene of a bad file on its own, and the hole it leaves.
func (f *folder) badScene(rel string, now time.Time) (*journal.Scene, *journal.Hole) {
	f.mu.Lock()
	e := f.files[rel]
	f.mu.Unlock()
	s := &journal.Scene{
		ID: uuid.NewString(), Owner: f.svc.owner, Options: f.cfg.Options, Format: f.cfg.format,
		Naming: f.cfg.Naming, Formed: now, Label: stemOf(rel),
		Files: []journal.FileRef{{Rel: rel, Size: e.Size, MtimeNs: e.MtimeNs, FileID: e.FileID, SHA256: e.SHA256}},
		Stage: journal.StageFinished, Outcome: journal.OutcomeFailed, ErrorCode: badCode(e.Bad),
		Error: fmt.Sprintf("%s: %s", rel, e.Bad), Finished: now,
	}
	// Its EXIF, when readable (a truncated copy keeps it), places it among its scene's brackets.
	l := grouping.LostPhoto(f.abs(rel), e.Bad)
	h := &journal.Hole{Reason: e.Bad, Camera: l.Camera, Taken: l.Taken, Duration: l.Duration, Seen: now}
	if !math.IsNaN(l.EV) {
		h.EV = &l.EV
	}
	return s, h
}

func (f *folder) abs(rel string) string { return filepath.Join(f.inputDir(), filepath.FromSlash(rel)) }

// lost is a hole as engine/grouping knows lost photos.
func (f *folder) lost(rel string, h *journal.Hole) grouping.Lost {
	l := grouping.Lost{Path: f.abs(rel), Reason: h.Reason, Camera: h.Camera, Taken: h.Taken, Duration: h.Duration, EV: math.NaN()}
	if h.EV != nil {
		l.EV = *h.EV
	}
	return l
}

// judged is a count or subfolder scene of files that lost the holes in lost: the
// files are read for their exposures and the scene judged by engine/grouping. A
// file that cannot be read counts as lost too (its import fails the scene anyway).
func (f *folder) judged(files, lost []string, holes map[string]*journal.Hole) sceneGroup {
	g := sceneGroup{files: files}
	if len(lost) == 0 || len(files) == 0 {
		return g
	}
	var kept []grouping.Photo
	var ls []grouping.Lost
	for _, r := range lost {
		ls = append(ls, f.lost(r, holes[r]))
	}
	for _, r := range files {
		p, err := grouping.Analyze(f.abs(r))
		if err != nil {
			ls = append(ls, grouping.LostPhoto(f.abs(r), err.Error()))
			continue
		}
		kept = append(kept, p)
	}
	g.warning, g.problem = grouping.Judge(kept, ls)
	return g
}

// autoGroups applies engine/grouping to the files. A file that cannot be analysed
// becomes a scene of its own, so that ingest reports why and it lands in the errors
// folder rather than being dropped; for the scenes beside it, it is a lost bracket,
// as the holes are.
func (f *folder) autoGroups(rels []string, holes map[string]*journal.Hole) []sceneGroup {
	byPath := map[string]string{}
	var photos []grouping.Photo
	var lost []grouping.Lost
	var groups []sceneGroup
	for _, r := range rels {
		p := f.abs(r)
		byPath[p] = r
		ph, err := grouping.Analyze(p)
		if err != nil {
			groups = append(groups, sceneGroup{files: []string{r}})
			lost = append(lost, grouping.LostPhoto(p, err.Error()))
			continue
		}
		photos = append(photos, ph)
	}
	for r, h := range holes {
		lost = append(lost, f.lost(r, h))
	}
	scenes, skipped := grouping.GroupAll(photos, lost, grouping.Options{})
	for _, sc := range scenes {
		g := sceneGroup{warning: sc.Warning, problem: sc.Problem}
		for _, p := range sc.Files {
			g.files = append(g.files, byPath[p])
		}
		groups = append(groups, g)
	}
	for _, sk := range skipped { // twins were removed before; anything else stands alone
		if r, ok := byPath[sk.Path]; ok {
			groups = append(groups, sceneGroup{files: []string{r}})
		}
	}
	slices.SortStableFunc(groups, func(a, b sceneGroup) int { return compareNatural(a.files[0], b.files[0]) })
	return groups
}

func compareNatural(a, b string) int {
	switch {
	case naturalLess(a, b):
		return -1
	case naturalLess(b, a):
		return 1
	}
	return 0
}
