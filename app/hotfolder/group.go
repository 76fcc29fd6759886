package hotfolder

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/grouping"
)

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
func (f *folder) group(domain string, rels []string, now time.Time) []*sceneRecord {
	twins := twinOf(rels)
	var inputs []string
	for _, r := range rels {
		if _, isTwin := twins[r]; !isTwin {
			inputs = append(inputs, r)
		}
	}
	var groups [][]string
	switch {
	case f.cfg.Grouping == GroupSubfolder && domain != "":
		groups = [][]string{inputs}
	case f.cfg.Grouping == GroupSubfolder:
		for _, r := range inputs {
			groups = append(groups, []string{r})
		}
	case f.cfg.Grouping == GroupCount:
		for i := 0; i < len(inputs); i += f.cfg.Count {
			groups = append(groups, inputs[i:min(i+f.cfg.Count, len(inputs))])
		}
	default:
		groups = f.autoGroups(inputs)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	ref := func(rel string) fileRef {
		e := f.files[rel]
		return fileRef{Rel: rel, Size: e.Size, MtimeNs: e.MtimeNs, SHA256: e.SHA256}
	}
	var out []*sceneRecord
	placedTwin := map[string]bool{}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		s := &sceneRecord{
			ID: uuid.NewString(), Owner: f.svc.owner, Options: f.cfg.Options, Format: f.cfg.format,
			Naming: f.cfg.Naming, Formed: now, Stage: stageGrouped, Label: stemOf(g[0]),
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
		slices.SortFunc(s.Extras, func(a, b fileRef) int { return compareNatural(a.Rel, b.Rel) })
		if len(s.Files) > catalog.MaxInputs {
			s.Stage, s.Outcome, s.ErrorCode = stageFinished, outcomeFailed, "too_many_inputs"
			s.Error = fmt.Sprintf("the subfolder %s has %d photos; a scene takes 1 to %d brackets", domain, len(s.Files), catalog.MaxInputs)
			s.Finished = now
		}
		out = append(out, s)
	}
	// A twin whose RAW is in no scene (it cannot be) would otherwise wait forever.
	for twin := range twins {
		if !placedTwin[twin] {
			out = append(out, &sceneRecord{
				ID: uuid.NewString(), Owner: f.svc.owner, Options: f.cfg.Options, Format: f.cfg.format,
				Naming: f.cfg.Naming, Formed: now, Stage: stageGrouped, Label: stemOf(twin),
				Files: []fileRef{ref(twin)},
			})
		}
	}
	return out
}

// autoGroups applies engine/grouping to the files. A file that cannot be analysed
// becomes a scene of its own, so that ingest reports why and it lands in the errors
// folder rather than being dropped.
func (f *folder) autoGroups(rels []string) [][]string {
	byPath := map[string]string{}
	var photos []grouping.Photo
	var groups [][]string
	for _, r := range rels {
		p := filepath.Join(f.cfg.Input, filepath.FromSlash(r))
		byPath[p] = r
		ph, err := grouping.Analyze(p)
		if err != nil {
			groups = append(groups, []string{r})
			continue
		}
		photos = append(photos, ph)
	}
	scenes, skipped := grouping.GroupPhotos(photos, grouping.Options{})
	for _, sc := range scenes {
		var g []string
		for _, p := range sc.Files {
			g = append(g, byPath[p])
		}
		groups = append(groups, g)
	}
	for _, sk := range skipped { // twins were removed before; anything else stands alone
		if r, ok := byPath[sk.Path]; ok {
			groups = append(groups, []string{r})
		}
	}
	slices.SortStableFunc(groups, func(a, b []string) int { return compareNatural(a[0], b[0]) })
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
