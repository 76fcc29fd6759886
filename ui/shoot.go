package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/grouping"
)

// Phase is where a scene stands in the window.
type Phase int

const (
	PhaseDraft     Phase = iota // grouped; can be split, merged, reordered, edited
	PhasePreparing              // waiting for its photos to be imported, then submitted
	PhaseSubmitted              // an order exists; Summary tells its state
	PhaseRefused                // could not be submitted; Problem says why
)

// FileState is the import of one photo into the asset store.
type FileState struct {
	AssetID string
	Status  core.AssetStatus // "" until the upload started
	Reason  string           // why ingest failed
}

// Scene is one scene of the shoot: the brackets of one photo to make.
type Scene struct {
	ID        int // stable within the session
	Name      string
	Files     []string // bracket paths, in capture order
	Overrides core.Options
	Phase     Phase
	Problem   string // why it was refused, or a delivery problem
	Warning   string // brackets it lost that could not be read (engine/grouping judged the rest)
	OrderID   string
	BatchID   string
	Summary   core.OrderSummary
	Saved     string // where the finished photo was written
	RunID     int    // the submission it belongs to
}

// Terminal reports whether the scene is settled (nothing more will happen to it).
func (s Scene) Terminal() bool {
	return s.Phase == PhaseRefused || (s.Phase == PhaseSubmitted && s.Summary.Status.Terminal())
}

// Active reports whether work on the scene is under way.
func (s Scene) Active() bool {
	return s.Phase == PhasePreparing || (s.Phase == PhaseSubmitted && !s.Summary.Status.Terminal())
}

// Reference is the bracket shown as "before": the middle of the capture order, the
// median exposure of a bracket sequence (of two middles, the later one: sequences
// usually run from dark to bright, and the brighter is nearer a normal exposure).
func (s Scene) Reference() string {
	if len(s.Files) == 0 {
		return ""
	}
	return s.Files[len(s.Files)/2]
}

// Shoot is the list of scenes the window holds, safe for use from the UI and from
// background work. Reads return copies.
type Shoot struct {
	mu      sync.Mutex
	scenes  []*Scene
	byID    map[int]*Scene
	byOrder map[string]*Scene
	files   map[string]*FileState
	nextID  int
	version uint64 // bumped on every change, so the UI knows when to redraw
}

// NewShoot returns an empty shoot.
func NewShoot() *Shoot {
	return &Shoot{byID: map[int]*Scene{}, byOrder: map[string]*Scene{}, files: map[string]*FileState{}, nextID: 1}
}

func (sh *Shoot) changed() { sh.version++ }

// Touch marks the shoot changed, for changes kept outside it that its views show
// (the shoot's options).
func (sh *Shoot) Touch() {
	sh.mu.Lock()
	sh.changed()
	sh.mu.Unlock()
}

// Version changes whenever anything in the shoot changed.
func (sh *Shoot) Version() uint64 {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.version
}

// Len is the number of scenes.
func (sh *Shoot) Len() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return len(sh.scenes)
}

// At returns a copy of the scene at index i; ok is false when out of range.
func (sh *Shoot) At(i int) (Scene, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i < 0 || i >= len(sh.scenes) {
		return Scene{}, false
	}
	return sh.scenes[i].copy(), true
}

// Get returns a copy of scene id.
func (sh *Shoot) Get(id int) (Scene, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byID[id]
	if !ok {
		return Scene{}, false
	}
	return s.copy(), true
}

// Index returns the position of scene id, -1 when absent.
func (sh *Shoot) Index(id int) int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.indexLocked(id)
}

func (sh *Shoot) indexLocked(id int) int {
	for i, s := range sh.scenes {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// Scenes returns copies of every scene, in order.
func (sh *Shoot) Scenes() []Scene {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := make([]Scene, len(sh.scenes))
	for i, s := range sh.scenes {
		out[i] = s.copy()
	}
	return out
}

func (s *Scene) copy() Scene {
	c := *s
	c.Files = slices.Clone(s.Files)
	c.Overrides = cloneOptions(s.Overrides)
	return c
}

// File returns the import state of a photo.
func (sh *Shoot) File(path string) FileState {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if f, ok := sh.files[path]; ok {
		return *f
	}
	return FileState{}
}

// SetFile records the import state of a photo.
func (sh *Shoot) SetFile(path string, st FileState) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.files[path] = &st
	sh.changed()
}

// Add appends the scenes that grouping found, naming them, and returns their ids.
// A folder that holds one scene names it; scenes of a folder with several are named
// after their first photo. Files already in the shoot are left out, so dropping the
// same folder twice adds nothing.
func (sh *Shoot) Add(groups []grouping.Scene) []int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	perDir := map[string]int{}
	for _, g := range groups {
		if len(g.Files) > 0 {
			perDir[filepath.Dir(g.Files[0])]++
		}
	}
	known := map[string]bool{}
	for _, s := range sh.scenes {
		for _, f := range s.Files {
			known[f] = true
		}
	}
	var ids []int
	for _, g := range groups {
		var files []string
		for _, f := range g.Files {
			if !known[f] {
				known[f] = true
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			continue
		}
		name := stem(files[0])
		if dir := filepath.Dir(files[0]); perDir[dir] == 1 && len(files) == len(g.Files) {
			name = filepath.Base(dir)
		}
		s := sh.newSceneLocked(sh.uniqueNameLocked(name), files)
		s.Warning = g.Warning
		if g.Problem != "" {
			// What is left cannot make the photo (a dark one, say): not processed. Tried
			// again by hand, it is made, with the problem kept as its warning.
			s.Phase, s.Problem, s.Warning = PhaseRefused, g.Problem, g.Problem
		}
		sh.scenes = append(sh.scenes, s)
		ids = append(ids, s.ID)
	}
	sh.changed()
	return ids
}

func (sh *Shoot) newSceneLocked(name string, files []string) *Scene {
	s := &Scene{ID: sh.nextID, Name: name, Files: files}
	sh.nextID++
	sh.byID[s.ID] = s
	for _, f := range files {
		if _, ok := sh.files[f]; !ok {
			sh.files[f] = &FileState{}
		}
	}
	return s
}

func (sh *Shoot) uniqueNameLocked(name string) string {
	taken := func(n string) bool {
		for _, s := range sh.scenes {
			if s.Name == n {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s (%d)", name, i); !taken(n) {
			return n
		}
	}
}

func stem(p string) string {
	b := filepath.Base(p)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// draftLocked returns scene id when it can still be edited.
func (sh *Shoot) draftLocked(id int) (*Scene, int, error) {
	i := sh.indexLocked(id)
	if i < 0 {
		return nil, -1, fmt.Errorf("scene %d is not in the shoot", id)
	}
	s := sh.scenes[i]
	if s.Phase != PhaseDraft {
		return nil, -1, fmt.Errorf("%s was already submitted and can no longer be changed", s.Name)
	}
	return s, i, nil
}

// Split cuts scene id before its bracket at: the brackets from there on become a new
// scene right after it, which is returned.
func (sh *Shoot) Split(id, at int) (int, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, i, err := sh.draftLocked(id)
	if err != nil {
		return 0, err
	}
	if at <= 0 || at >= len(s.Files) {
		return 0, fmt.Errorf("%s cannot be split before bracket %d of %d", s.Name, at+1, len(s.Files))
	}
	rest := slices.Clone(s.Files[at:])
	s.Files = slices.Clone(s.Files[:at])
	n := sh.newSceneLocked(sh.uniqueNameLocked(stem(rest[0])), rest)
	n.Overrides = cloneOptions(s.Overrides)
	sh.scenes = slices.Insert(sh.scenes, i+1, n)
	sh.changed()
	return n.ID, nil
}

// MergeNext joins the scene after id into id (its brackets appended). Both must be
// drafts and together hold at most engine.MaxBrackets brackets.
func (sh *Shoot) MergeNext(id int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, i, err := sh.draftLocked(id)
	if err != nil {
		return err
	}
	if i+1 >= len(sh.scenes) {
		return fmt.Errorf("%s is the last scene; there is nothing to merge it with", s.Name)
	}
	next := sh.scenes[i+1]
	if next.Phase != PhaseDraft {
		return fmt.Errorf("%s was already submitted and can no longer be changed", next.Name)
	}
	if n := len(s.Files) + len(next.Files); n > engine.MaxBrackets {
		return fmt.Errorf("a scene takes at most %d brackets; %s and %s together have %d", engine.MaxBrackets, s.Name, next.Name, n)
	}
	s.Files = append(s.Files, next.Files...)
	if s.Warning == "" {
		s.Warning = next.Warning
	}
	sh.scenes = slices.Delete(sh.scenes, i+1, i+2)
	delete(sh.byID, next.ID)
	sh.changed()
	return nil
}

// Move shifts scene id by delta places (negative: up), within the list.
func (sh *Shoot) Move(id, delta int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.indexLocked(id)
	if i < 0 {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	j := min(max(i+delta, 0), len(sh.scenes)-1)
	if i == j {
		return nil
	}
	s := sh.scenes[i]
	sh.scenes = slices.Delete(sh.scenes, i, i+1)
	sh.scenes = slices.Insert(sh.scenes, j, s)
	sh.changed()
	return nil
}

// Remove drops scene id from the shoot; work under way is not touched (the caller
// cancels it first).
func (sh *Shoot) Remove(id int) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.indexLocked(id)
	if i < 0 {
		return
	}
	s := sh.scenes[i]
	sh.scenes = slices.Delete(sh.scenes, i, i+1)
	delete(sh.byID, id)
	if s.OrderID != "" {
		delete(sh.byOrder, s.OrderID)
	}
	sh.changed()
}

// ClearSettled removes every settled scene and returns how many went.
func (sh *Shoot) ClearSettled() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	keep := sh.scenes[:0]
	n := 0
	for _, s := range sh.scenes {
		if s.Terminal() {
			delete(sh.byID, s.ID)
			delete(sh.byOrder, s.OrderID)
			n++
			continue
		}
		keep = append(keep, s)
	}
	clear(sh.scenes[len(keep):])
	sh.scenes = keep
	if n > 0 {
		sh.changed()
	}
	return n
}

// SetOverrides replaces the per-scene options of a draft scene.
func (sh *Shoot) SetOverrides(id int, o core.Options) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, _, err := sh.draftLocked(id)
	if err != nil {
		return err
	}
	s.Overrides = cloneOptions(o)
	sh.changed()
	return nil
}

// Drafts returns the scenes that can be submitted, in order.
func (sh *Shoot) Drafts() []Scene {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []Scene
	for _, s := range sh.scenes {
		if s.Phase == PhaseDraft {
			out = append(out, s.copy())
		}
	}
	return out
}

// Prepare moves draft scenes into PhasePreparing under one run id.
func (sh *Shoot) Prepare(ids []int, run int) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, id := range ids {
		if s, ok := sh.byID[id]; ok && s.Phase == PhaseDraft {
			s.Phase, s.RunID, s.Problem = PhasePreparing, run, ""
		}
	}
	sh.changed()
}

// Refuse marks scene id as not submitted, with the reason.
func (sh *Shoot) Refuse(id int, problem string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s, ok := sh.byID[id]; ok && s.Phase != PhaseSubmitted {
		s.Phase, s.Problem = PhaseRefused, problem
		sh.changed()
	}
}

// Reopen puts a refused or preparing scene back into draft so it can be fixed and
// submitted again.
func (sh *Shoot) Reopen(id int, problem string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s, ok := sh.byID[id]; ok && s.Phase != PhaseSubmitted {
		s.Phase, s.Problem, s.RunID = PhaseDraft, problem, 0
		sh.changed()
	}
}

// Retry puts a scene that failed, was cancelled, expired or was refused back into
// draft, so it can be processed again (its photos stay imported).
func (sh *Shoot) Retry(id int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byID[id]
	if !ok {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	if !s.Terminal() || s.Summary.Status == core.OrderCompleted {
		return fmt.Errorf("%s has not failed; there is nothing to retry", s.Name)
	}
	delete(sh.byOrder, s.OrderID)
	s.Phase, s.OrderID, s.BatchID, s.Summary, s.Saved, s.Problem, s.RunID = PhaseDraft, "", "", core.OrderSummary{}, "", "", 0
	sh.changed()
	return nil
}

// Submitted records the order of scene id.
func (sh *Shoot) Submitted(id int, sum core.OrderSummary) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byID[id]
	if !ok {
		return
	}
	s.Phase, s.OrderID, s.BatchID, s.Problem = PhaseSubmitted, sum.OrderUUID, sum.BatchID, ""
	s.Summary = sum
	sh.byOrder[sum.OrderUUID] = s
	sh.changed()
}

// Update applies an order summary to the scene of that order. Summaries older than
// the one held are ignored (events and polls can cross). It returns the scene and
// whether it just became terminal.
func (sh *Shoot) Update(sum core.OrderSummary) (Scene, bool, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byOrder[sum.OrderUUID]
	if !ok {
		return Scene{}, false, false
	}
	if s.Summary.Status.Terminal() {
		return s.copy(), true, false // settled states never change again
	}
	if sum.UpdatedAt.Before(s.Summary.UpdatedAt) && !sum.Status.Terminal() {
		return s.copy(), true, false
	}
	s.Summary = sum
	sh.changed()
	return s.copy(), true, sum.Status.Terminal()
}

// SceneOfOrder returns the scene of an order.
func (sh *Shoot) SceneOfOrder(orderID string) (Scene, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byOrder[orderID]
	if !ok {
		return Scene{}, false
	}
	return s.copy(), true
}

// SetSaved records where the finished photo of scene id went, or why it could not be
// written.
func (sh *Shoot) SetSaved(id int, path, problem string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s, ok := sh.byID[id]; ok {
		s.Saved, s.Problem = path, problem
		sh.changed()
	}
}

// Counts summarises the shoot for the status bar.
type Counts struct {
	Total, Draft, Active, Completed, Failed int
	Queued                                  int     // active scenes not yet running (part of Active)
	ETASeconds                              int     // the longest ETA of running scenes
	Progress                                float64 // 0..1 over submitted scenes
}

// Counts returns the current counts.
func (sh *Shoot) Counts() Counts {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var c Counts
	var sum float64
	var n int
	for _, s := range sh.scenes {
		c.Total++
		switch {
		case s.Phase == PhaseDraft:
			c.Draft++
		case s.Phase == PhaseRefused:
			c.Failed++
		case s.Phase == PhasePreparing:
			c.Active++
			c.Queued++
			n++
		default:
			n++
			switch s.Summary.Status {
			case core.OrderCompleted:
				c.Completed++
				sum += 1
			case core.OrderFailed, core.OrderCancelled, core.OrderExpired:
				c.Failed++
				sum += 1
			default:
				c.Active++
				if s.Summary.Status == core.OrderPending {
					c.Queued++
				}
				sum += s.Summary.ProgressPercent / 100
				if s.Summary.ETASeconds != nil && *s.Summary.ETASeconds > c.ETASeconds {
					c.ETASeconds = *s.Summary.ETASeconds
				}
			}
		}
	}
	if n > 0 {
		c.Progress = sum / float64(n)
	}
	return c
}
