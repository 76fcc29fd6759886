package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/core"
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
	// OrderID, BatchID, Summary and Saved are those of the newest version while the
	// scene is submitted, empty while it is a draft.
	OrderID string
	BatchID string
	Summary core.OrderSummary
	Saved   string // where the finished photo was written
	RunID   int    // the submission it belongs to
	// Versions are every processing of the scene, oldest first: processing it again
	// adds one and keeps the earlier results until they are deleted.
	Versions []Version
	// SetAside are the photos culling took out of the scene, with why (cull.go).
	SetAside []core.SetAsideFrame
}

// Version is one processing of a scene.
type Version struct {
	OrderID string
	BatchID string
	Options core.Options // what it was submitted with: the shoot's options under the scene's
	At      time.Time    // when it was submitted
	Summary core.OrderSummary
	Saved   string // where its photo was written
	Problem string // why it was not written
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
// background work. Reads return copies. It has a persistent id and name, and is
// stored as a core.Shoot (Record, LoadShoot); a read-only shoot (one built from a
// hot folder's orders) refuses every edit.
type Shoot struct {
	mu       sync.Mutex
	id       string
	name     string
	created  time.Time
	readOnly bool
	options  core.Options // the shoot's options, as last set by the window
	batchIDs []string
	scenes   []*Scene
	byID     map[int]*Scene
	byOrder  map[string]*Scene // every version's order
	files    map[string]*FileState
	nextID   int
	version  uint64 // bumped on every change, so the UI knows when to redraw
}

// newShootName names a shoot until it is renamed or its first photos name it.
const newShootName = "New shoot"

// NewShoot returns an empty shoot with a new id.
func NewShoot() *Shoot {
	return &Shoot{
		id: uuid.NewString(), name: newShootName, created: time.Now().UTC(),
		byID: map[int]*Scene{}, byOrder: map[string]*Scene{}, files: map[string]*FileState{}, nextID: 1,
	}
}

// ID is the shoot's persistent id.
func (sh *Shoot) ID() string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.id
}

// Name is the shoot's name.
func (sh *Shoot) Name() string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.name
}

// SetName renames the shoot.
func (sh *Shoot) SetName(name string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.name = name
	sh.changed()
}

// ReadOnly reports whether the shoot refuses edits.
func (sh *Shoot) ReadOnly() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.readOnly
}

// Created is when the shoot was made.
func (sh *Shoot) Created() time.Time {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.created
}

// Options are the shoot's options as last set.
func (sh *Shoot) Options() core.Options {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return cloneOptions(sh.options)
}

// SetOptions records the shoot's options.
func (sh *Shoot) SetOptions(o core.Options) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.options = cloneOptions(o)
	sh.changed()
}

// AddBatch records a batch the shoot's scenes were submitted in.
func (sh *Shoot) AddBatch(id string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if id != "" && !slices.Contains(sh.batchIDs, id) {
		sh.batchIDs = append(sh.batchIDs, id)
		sh.changed()
	}
}

// Replace makes sh hold what o holds (o is not used afterwards) and returns a shoot
// holding what sh held. The window keeps one *Shoot that background work reads, and
// switches shoots through it.
func (sh *Shoot) Replace(o *Shoot) *Shoot {
	o.mu.Lock()
	defer o.mu.Unlock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	old := &Shoot{
		id: sh.id, name: sh.name, created: sh.created, readOnly: sh.readOnly, options: sh.options, batchIDs: sh.batchIDs,
		scenes: sh.scenes, byID: sh.byID, byOrder: sh.byOrder, files: sh.files, nextID: sh.nextID, version: sh.version,
	}
	v := max(sh.version, o.version) + 1
	sh.id, sh.name, sh.created, sh.readOnly, sh.options, sh.batchIDs = o.id, o.name, o.created, o.readOnly, o.options, o.batchIDs
	sh.scenes, sh.byID, sh.byOrder, sh.files, sh.nextID = o.scenes, o.byID, o.byOrder, o.files, o.nextID
	sh.version = v
	return old
}

// Unsettled reports whether a version of the shoot is still being processed, or
// finished with its photo not yet written.
func (sh *Shoot) Unsettled() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, s := range sh.scenes {
		for _, v := range s.Versions {
			if !v.Summary.Status.Terminal() || (v.Summary.Status == core.OrderCompleted && v.Saved == "" && v.Problem == "") {
				return true
			}
		}
	}
	return false
}

// HasOrder reports whether a version of the shoot is order id.
func (sh *Shoot) HasOrder(id string) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	_, ok := sh.byOrder[id]
	return ok
}

// Record returns the shoot as it is stored, owned by owner.
func (sh *Shoot) Record(owner string) core.Shoot {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec := core.Shoot{
		ID: sh.id, Owner: owner, Name: sh.name, Options: cloneOptions(sh.options),
		BatchIDs: slices.Clone(sh.batchIDs), NextSceneID: sh.nextID,
		CreatedAt: sh.created, UpdatedAt: time.Now().UTC(),
		Scenes: make([]core.ShootScene, 0, len(sh.scenes)),
	}
	seenDir := map[string]bool{}
	for _, s := range sh.scenes {
		rs := core.ShootScene{
			ID: s.ID, Name: s.Name, Files: slices.Clone(s.Files), Overrides: cloneOptions(s.Overrides),
			Phase: phaseName(s.Phase), Problem: s.Problem, Warning: s.Warning,
			SetAside: slices.Clone(s.SetAside),
		}
		if s.Phase == PhasePreparing {
			// Not submitted yet: after a restart it is a draft again.
			rs.Phase = core.ScenePhaseDraft
		}
		for _, v := range s.Versions {
			rs.Versions = append(rs.Versions, core.ShootVersion{
				OrderID: v.OrderID, BatchID: v.BatchID, Options: cloneOptions(v.Options),
				Status: v.Summary.Status, OutputAssetID: v.Summary.OutputAssetID,
				Saved: v.Saved, Problem: v.Problem, At: v.At,
			})
		}
		rec.Scenes = append(rec.Scenes, rs)
		for _, f := range s.Files {
			if d := filepath.Dir(f); !seenDir[d] {
				seenDir[d] = true
				rec.Folders = append(rec.Folders, d)
			}
			if st, ok := sh.files[f]; ok && st.AssetID != "" && st.Status == core.AssetReady {
				if rec.Assets == nil {
					rec.Assets = map[string]string{}
				}
				rec.Assets[f] = st.AssetID
			}
		}
	}
	return rec
}

// LoadShoot rebuilds a stored shoot. Scenes that were being prepared are drafts
// again; versions carry the state last seen of their orders until the engine's
// answers are laid over them (Attach). Imported photos keep their asset ids, with
// an unknown status the caller checks.
func LoadShoot(rec core.Shoot) *Shoot {
	sh := NewShoot()
	sh.id, sh.name, sh.created = rec.ID, rec.Name, rec.CreatedAt
	sh.options = cloneOptions(rec.Options)
	sh.batchIDs = slices.Clone(rec.BatchIDs)
	for _, rs := range rec.Scenes {
		s := &Scene{
			ID: rs.ID, Name: rs.Name, Files: slices.Clone(rs.Files), Overrides: cloneOptions(rs.Overrides),
			Phase: parsePhase(rs.Phase), Problem: rs.Problem, Warning: rs.Warning,
			SetAside: slices.Clone(rs.SetAside),
		}
		for _, v := range rs.Versions {
			s.Versions = append(s.Versions, Version{
				OrderID: v.OrderID, BatchID: v.BatchID, Options: cloneOptions(v.Options), At: v.At,
				Summary: core.OrderSummary{OrderUUID: v.OrderID, BatchID: v.BatchID, Status: v.Status, OutputAssetID: v.OutputAssetID},
				Saved:   v.Saved, Problem: v.Problem,
			})
			if v.OrderID != "" {
				sh.byOrder[v.OrderID] = s
			}
		}
		if s.Phase == PhaseSubmitted && len(s.Versions) == 0 {
			s.Phase = PhaseDraft
		}
		s.mirror()
		sh.scenes = append(sh.scenes, s)
		sh.byID[s.ID] = s
		sh.nextID = max(sh.nextID, s.ID+1)
		for _, f := range s.Files {
			sh.files[f] = &FileState{AssetID: rec.Assets[f]}
		}
	}
	sh.nextID = max(sh.nextID, rec.NextSceneID)
	return sh
}

func phaseName(p Phase) string {
	switch p {
	case PhasePreparing:
		return core.ScenePhasePreparing
	case PhaseSubmitted:
		return core.ScenePhaseSubmitted
	case PhaseRefused:
		return core.ScenePhaseRefused
	}
	return core.ScenePhaseDraft
}

func parsePhase(p string) Phase {
	switch p {
	case core.ScenePhaseSubmitted:
		return PhaseSubmitted
	case core.ScenePhaseRefused:
		return PhaseRefused
	}
	return PhaseDraft // preparing too: its submission did not finish
}

// mirror sets the scene's current result from its newest version while it is
// submitted, and clears it otherwise.
func (s *Scene) mirror() {
	if s.Phase != PhaseSubmitted || len(s.Versions) == 0 {
		s.OrderID, s.BatchID, s.Summary, s.Saved = "", "", core.OrderSummary{}, ""
		return
	}
	v := s.Versions[len(s.Versions)-1]
	s.OrderID, s.BatchID, s.Summary, s.Saved = v.OrderID, v.BatchID, v.Summary, v.Saved
}

// versionOf returns the index of the version of order id, -1 when none.
func (s *Scene) versionOf(orderID string) int {
	for i, v := range s.Versions {
		if v.OrderID == orderID {
			return i
		}
	}
	return -1
}

// AtVersion returns the scene as version i shows it: that version's order, state
// and saved photo, as if it were the newest.
func (s Scene) AtVersion(i int) Scene {
	if i < 0 || i >= len(s.Versions) {
		return s
	}
	v := s.Versions[i]
	s.Phase = PhaseSubmitted
	s.OrderID, s.BatchID, s.Summary, s.Saved, s.Problem = v.OrderID, v.BatchID, v.Summary, v.Saved, v.Problem
	return s
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
	c.Versions = slices.Clone(s.Versions)
	c.SetAside = slices.Clone(s.SetAside)
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
	if sh.readOnly {
		return nil
	}
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
	if sh.name == newShootName && len(ids) > 0 {
		// A new shoot is named after the folder of its first photos.
		if f := sh.byID[ids[0]].Files[0]; filepath.Dir(f) != "." {
			sh.name = filepath.Base(filepath.Dir(f))
		}
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
	if sh.readOnly {
		return nil, -1, errReadOnly
	}
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
	if len(s.Versions) > 0 {
		return 0, fmt.Errorf("%s was processed before; its brackets stay as they were", s.Name)
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

// MergeNext joins the scene after id into id (its brackets appended), as
// MergeScenes does.
func (sh *Shoot) MergeNext(id int) error {
	sh.mu.Lock()
	i := sh.indexLocked(id)
	next := 0
	if i >= 0 && i+1 < len(sh.scenes) {
		next = sh.scenes[i+1].ID
	}
	name := ""
	if i >= 0 {
		name = sh.scenes[i].Name
	}
	sh.mu.Unlock()
	if i >= 0 && next == 0 {
		return fmt.Errorf("%s is the last scene; there is nothing to merge it with", name)
	}
	_, err := sh.MergeScenes([]int{id, next})
	return err
}

// Move shifts scene id by delta places (negative: up), within the list.
func (sh *Shoot) Move(id, delta int) error {
	i := sh.Index(id)
	if i < 0 {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	return sh.MoveTo(id, i+delta)
}

func (sh *Shoot) forgetOrdersLocked(s *Scene) {
	for _, v := range s.Versions {
		delete(sh.byOrder, v.OrderID)
	}
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
			sh.forgetOrdersLocked(s)
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
	if sh.readOnly {
		return errReadOnly
	}
	if !s.Terminal() || s.Summary.Status == core.OrderCompleted {
		return fmt.Errorf("%s has not failed; there is nothing to retry", s.Name)
	}
	if n := len(s.Versions); s.Phase == PhaseSubmitted && n > 0 {
		// The failed attempt has no result to keep.
		delete(sh.byOrder, s.Versions[n-1].OrderID)
		s.Versions = slices.Delete(s.Versions, n-1, n)
	}
	s.Phase, s.Problem, s.RunID = PhaseDraft, "", 0
	s.mirror()
	sh.changed()
	return nil
}

// Reedit makes a processed scene (finished or not) a draft again, to be processed
// with other options; its results so far stay as its versions, and an order still
// running goes on as its version.
func (sh *Shoot) Reedit(id int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.readOnly {
		return errReadOnly
	}
	s, ok := sh.byID[id]
	if !ok {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	if s.Phase != PhaseSubmitted && s.Phase != PhaseRefused {
		return fmt.Errorf("%s has not been processed yet", s.Name)
	}
	s.Phase, s.Problem, s.RunID = PhaseDraft, "", 0
	s.mirror()
	sh.changed()
	return nil
}

// DeleteVersion drops version i of scene id; a version still under way must be
// cancelled first. Deleting the newest version of a submitted scene shows the one
// before it, or makes the scene a draft when none is left. The saved photo stays
// where it was written.
func (sh *Shoot) DeleteVersion(id, i int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.readOnly {
		return errReadOnly
	}
	s, ok := sh.byID[id]
	if !ok {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	if i < 0 || i >= len(s.Versions) {
		return fmt.Errorf("%s has no version %d", s.Name, i+1)
	}
	if !s.Versions[i].Summary.Status.Terminal() {
		return fmt.Errorf("version %d of %s is still being processed; cancel it first", i+1, s.Name)
	}
	delete(sh.byOrder, s.Versions[i].OrderID)
	s.Versions = slices.Delete(s.Versions, i, i+1)
	if s.Phase == PhaseSubmitted && len(s.Versions) == 0 {
		s.Phase = PhaseDraft
	}
	s.mirror()
	if s.Phase == PhaseSubmitted {
		s.Problem = s.Versions[len(s.Versions)-1].Problem
	}
	sh.changed()
	return nil
}

var errReadOnly = fmt.Errorf("this shoot comes from a hot folder and cannot be changed here")

// Submitted records the order of scene id as its newest version.
func (sh *Shoot) Submitted(id int, sum core.OrderSummary) { sh.SubmittedWith(id, sum, core.Options{}) }

// SubmittedWith records the order of scene id, submitted with opts, as its newest
// version.
func (sh *Shoot) SubmittedWith(id int, sum core.OrderSummary, opts core.Options) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byID[id]
	if !ok {
		return
	}
	at := sum.CreatedAt
	if at.IsZero() {
		at = time.Now().UTC()
	}
	s.Versions = append(s.Versions, Version{OrderID: sum.OrderUUID, BatchID: sum.BatchID, Options: cloneOptions(opts), At: at, Summary: sum})
	s.Phase, s.Problem = PhaseSubmitted, ""
	s.mirror()
	sh.byOrder[sum.OrderUUID] = s
	if sum.BatchID != "" && !slices.Contains(sh.batchIDs, sum.BatchID) {
		sh.batchIDs = append(sh.batchIDs, sum.BatchID)
	}
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
	i := s.versionOf(sum.OrderUUID)
	v := &s.Versions[i]
	if v.Summary.Status.Terminal() {
		return s.copy().AtVersion(i), true, false // settled states never change again
	}
	if sum.UpdatedAt.Before(v.Summary.UpdatedAt) && !sum.Status.Terminal() {
		return s.copy().AtVersion(i), true, false
	}
	v.Summary = sum
	s.mirror()
	sh.changed()
	return s.copy().AtVersion(i), true, sum.Status.Terminal()
}

// Attach lays the engine's answer for an order over its version after a restart:
// the stored state was only the last one seen. It returns the scene as that
// version shows it and whether the order settled while the window was closed.
func (sh *Shoot) Attach(sum core.OrderSummary) (Scene, bool, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byOrder[sum.OrderUUID]
	if !ok {
		return Scene{}, false, false
	}
	i := s.versionOf(sum.OrderUUID)
	v := &s.Versions[i]
	settledNow := !v.Summary.Status.Terminal() && sum.Status.Terminal()
	v.Summary = sum
	s.mirror()
	sh.changed()
	return s.copy().AtVersion(i), true, settledNow
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

// SetSaved records where the finished photo of scene id's newest version went, or
// why it could not be written.
func (sh *Shoot) SetSaved(id int, path, problem string) {
	sh.mu.Lock()
	s, ok := sh.byID[id]
	orderID := ""
	if ok && len(s.Versions) > 0 {
		orderID = s.Versions[len(s.Versions)-1].OrderID
	}
	sh.mu.Unlock()
	sh.SetVersionSaved(id, orderID, path, problem)
}

// SetVersionSaved records where the photo of scene id's version of orderID went,
// or why it could not be written.
func (sh *Shoot) SetVersionSaved(id int, orderID, path, problem string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.byID[id]
	if !ok {
		return
	}
	i := s.versionOf(orderID)
	if i < 0 {
		return
	}
	s.Versions[i].Saved, s.Versions[i].Problem = path, problem
	if i == len(s.Versions)-1 && s.Phase == PhaseSubmitted {
		s.Problem = problem
	}
	s.mirror()
	sh.changed()
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
