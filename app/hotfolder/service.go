// Package hotfolder is Porchlight's watched-folder importer: a studio drops photos
// into an input folder and finds the finished results in an output folder, with
// nothing lost and nothing imported twice.
//
// A file is taken once it is whole: its size and mtime stayed the same for the
// settle time, its name is not a partial or hidden one, it can be opened, no other
// program holds a lock on it or (on Linux) has it open for writing, and a JPEG or PNG
// has its end marker. Notifications (fsnotify) and a periodic rescan both trigger
// scans; scenes are formed only once the folder has been quiet for a while, so a
// burst of files becomes scenes, not one order per file. Each scene becomes one
// order; the scenes formed together from one drop (a subfolder, or the loose
// files, in one scan) are submitted together as one batch once all of their inputs
// are ingested, so the engine brings the rooms of the shoot to one white balance
// and exposure (shoot consistency; a drop of one scene is a single order). One bad
// file still fails only its scene, which the batch goes without (see drop.go).
//
// The input folder may be a symbolic link; it is resolved again at every scan (see
// ResolveInput). Links inside it are never followed nor taken, and a file is read,
// moved or deleted only while it is the very file the scan listed (see open.go).
//
// Every step is journaled in the database (see journal.go and app/hotfolder/store)
// before and after it acts, and every action can be repeated: after a crash the
// journal says where each scene stood, orders are submitted with an
// Idempotency-Key derived from the scene and its content hashes, outputs are
// linked into place under names journaled beforehand.
//
// Orders belong to an internal owner (keys.Service.InternalOwner), a key record
// named "hotfolders" with no secret, created once and found by its recorded uuid,
// so the window lists their results with everyone else's and no API key can reach
// them.
//
// Configuration (the `hotfolders` key; see Config for every field and default):
//
//	hotfolders:
//	  - name: listings            # default: the input folder's name
//	    input: ~/Porchlight/in
//	    output: ~/Porchlight/out
//	    options: {perspective: true, quality: 90}   # order options, as in the API
//	    preset: signature         # a tonecraft look: tonecraft on with this profile
//	    grouping: auto            # auto | count:N | subfolder
//	    naming: "{date}_{name}"   # {name} {scene} {date} {index}; default {name}
//	    originals: move           # leave | move (default) | delete
//	    done: ~/Porchlight/in/_done      # default input/_done
//	    errors: ~/Porchlight/in/_errors  # default input/_errors
//	    sidecar: true             # <output>.json beside each result
//	    settle: 2s                # size and mtime unchanged this long
//	    quiet: 2s                 # no change in the folder this long before grouping
//	    max_wait: 2m              # a folder that never goes quiet is grouped anyway
//	    rescan: 30s
//	    enabled: true
//
// Results appear under the naming template with the format's extension; a name in
// use gets -2, -3... and nothing is ever overwritten. A failed scene's inputs go to
// the errors folder (keeping their subfolders) with <scene>.error.txt and
// <scene>.error.json saying why. A file that is not a photo, or one cut short, fails
// on its own at once; the scene it belonged to is judged without it by
// engine/grouping (made with a warning, or failed naming what it lost).
package hotfolder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

// OwnerKeyName is the name of the internal owner of hot-folder orders.
const OwnerKeyName = keys.OwnerHotfolders

// Engine is what the hot folders need of the order engine (*engine.Engine).
type Engine interface {
	Submit(ctx context.Context, owner string, inputs []string, opts core.Options, idempotencyKey string) (core.OrderSummary, error)
	// SubmitBatch submits the scenes of one drop together (shoot consistency).
	SubmitBatch(ctx context.Context, owner string, b engine.BatchRequest, idempotencyKey string) (core.BatchAggregate, error)
	Order(ctx context.Context, owner, id string) (core.OrderSummary, error)
	Events() *events.Bus
}

// Assets is what the hot folders need of the asset store (*assets.Service).
type Assets interface {
	Add(owner, filename, contentType string, body io.Reader) (core.Asset, error)
	Get(owner, id string) (core.Asset, error)
	Open(id string) (assets.File, core.Asset, error)
	Delete(owner, id string) error
}

// Keys is what the hot folders need of the key service (*keys.Service).
type Keys interface {
	InternalOwner(role string) (string, error)
}

// Deps are the services a hot-folder Service uses.
type Deps struct {
	DB     *store.DB
	Engine Engine
	Assets Assets
	Keys   Keys
	Logger *slog.Logger
	// Workers is the number of scenes uploaded, submitted or written at once
	// (default 3).
	Workers int
}

// States of a folder in its status.
const (
	StateWatching = "watching"
	StatePaused   = "paused"   // paused from the window, or the input folder is unreachable
	StateError    = "error"    // running, but the last action failed (LastError says why)
	StateDisabled = "disabled" // enabled: false in the configuration
)

// FolderStatus is one hot folder as the window shows it. Pending counts files
// waiting to become part of a scene; Processing counts scenes between forming and
// delivery; Done and Failed count scenes since the folder was first configured.
type FolderStatus struct {
	Name       string     `json:"name"`
	Input      string     `json:"input"`
	Output     string     `json:"output"`
	State      string     `json:"state"`
	Reason     string     `json:"reason,omitempty"` // why paused: "paused from the window" or the unreachable folder
	Pending    int        `json:"pending"`
	Processing int        `json:"processing"`
	Done       int        `json:"done"`
	Failed     int        `json:"failed"`
	LastError  string     `json:"lastError,omitempty"`
	Recent     []Activity `json:"recent"`
}

// Activity is one thing that happened in a folder, newest first in Recent.
type Activity struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"` // formed (one per drop), completed, failed, paused, resumed, error
	Scene   string    `json:"scene,omitempty"`
	Index   int       `json:"index,omitempty"`
	Files   int       `json:"files,omitempty"`
	OrderID string    `json:"orderId,omitempty"`
	Output  string    `json:"output,omitempty"` // the result (completed) or error report (failed)
	Message string    `json:"message,omitempty"`
}

// recentMax is how many activities a folder keeps.
const recentMax = 50

// retention is how long done scenes stay in the journal (their counts stay).
const retention = 30 * 24 * time.Hour

// Service runs the hot folders.
type Service struct {
	deps    Deps
	log     *slog.Logger
	owner   string
	journal *journal.Journal
	queue   *workQueue
	follow  *follower

	// mu guards folders and byName, which Apply changes while Serve runs, and
	// the running scan loops.
	mu      sync.Mutex
	folders []*folder
	byName  map[string]*folder
	loops   map[*folder]*loop // scan loops running, by folder
	runCtx  context.Context   // Serve's context while it runs; nil before and after
	runWG   *sync.WaitGroup

	serving sync.Mutex
}

// loop is one folder's running scan loop.
type loop struct {
	stop context.CancelFunc
	done chan struct{}
}

// New checks the folders, makes sure the owner key exists and reads the journal.
// Folders whose input is missing are not an error: they start paused and resume
// when the folder appears.
func New(cfgs []Config, deps Deps) (*Service, error) {
	if deps.DB == nil || deps.Engine == nil || deps.Assets == nil || deps.Keys == nil {
		return nil, errors.New("hotfolder: New needs the database, the engine, the asset store and the key service")
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Workers <= 0 {
		deps.Workers = 3
	}
	for i := range cfgs {
		if err := cfgs[i].check(); err != nil {
			return nil, fmt.Errorf("hotfolders[%d].%w", i, err)
		}
	}
	if err := checkSet(cfgs); err != nil {
		return nil, err
	}
	owner, err := ownerKey(deps.Keys)
	if err != nil {
		return nil, err
	}
	jr, err := journal.Open(deps.DB)
	if err != nil {
		return nil, err
	}
	s := &Service{
		deps: deps, log: deps.Logger.With("component", "hotfolder"), owner: owner, journal: jr,
		queue: newWorkQueue(), byName: map[string]*folder{}, loops: map[*folder]*loop{},
	}
	s.follow = newFollower(s)
	for _, c := range cfgs {
		f, err := newFolder(s, c)
		if err != nil {
			return nil, err
		}
		s.folders = append(s.folders, f)
		s.byName[c.Name] = f
	}
	return s, nil
}

// ownerKey returns the uuid of the hot folders' internal owner, creating it the
// first time. It is recorded by uuid, so a key named "hotfolders" never replaces it.
func ownerKey(k Keys) (string, error) {
	id, err := k.InternalOwner(OwnerKeyName)
	if err != nil {
		return "", fmt.Errorf("hotfolder: owner key: %w", err)
	}
	return id, nil
}

// Owner is the key uuid that owns hot-folder orders and assets.
func (s *Service) Owner() string { return s.owner }

// Serve watches the enabled folders and moves their scenes along until ctx ends.
// Scenes that were in flight when the last run stopped continue where they were.
func (s *Service) Serve(ctx context.Context) error {
	if !s.serving.TryLock() {
		return errors.New("hotfolder: Serve is already running")
	}
	defer s.serving.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.follow.run(ctx) }()
	for range s.deps.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); s.work(ctx) }()
	}
	s.mu.Lock()
	s.runCtx, s.runWG = ctx, &wg
	for _, f := range s.folders {
		f.resume() // scenes in flight go on even in a paused or disabled folder
		s.startLocked(f)
	}
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	s.runCtx, s.runWG = nil, nil
	s.mu.Unlock()
	wg.Wait()
	s.mu.Lock()
	clear(s.loops)
	s.mu.Unlock()
	return nil
}

// startLocked starts f's scan loop when f is enabled and Serve runs.
func (s *Service) startLocked(f *folder) {
	if !f.cfg.Enabled || s.runCtx == nil {
		return
	}
	ctx, stop := context.WithCancel(s.runCtx)
	l := &loop{stop: stop, done: make(chan struct{})}
	s.loops[f] = l
	s.runWG.Add(1)
	go func() {
		defer s.runWG.Done()
		defer close(l.done)
		f.run(ctx)
	}()
}

// ErrBusy is Apply's answer for folders it left as they were because scenes are
// in flight in them: they change at the next start, or when Apply is called again
// after those scenes are done.
var ErrBusy = errors.New("scenes in flight")

// Apply changes the running service to the folders cfgs, as a restart would, but
// at once: a new folder starts taking files, a removed one stops, an edited one
// starts again with its new settings (its journal, counts and pause carry over).
// A folder with scenes in flight is not removed or edited meanwhile; the error
// (wrapping ErrBusy) names those folders, and the others are applied.
func (s *Service) Apply(cfgs []Config) error {
	for i := range cfgs {
		if err := cfgs[i].check(); err != nil {
			return fmt.Errorf("hotfolders[%d].%w", i, err)
		}
	}
	if err := checkSet(cfgs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]Config{}
	for _, c := range cfgs {
		want[c.Name] = c
	}
	var busy []string
	var keep []*folder
	for _, f := range s.folders {
		c, stays := want[f.cfg.Name]
		if stays && reflect.DeepEqual(c, f.cfg) {
			keep = append(keep, f)
			continue
		}
		f.mu.Lock()
		inFlight := len(f.active) > 0
		f.mu.Unlock()
		if inFlight || s.queue.has(f) {
			busy = append(busy, f.cfg.Name)
			keep = append(keep, f)
			want[f.cfg.Name] = f.cfg // as it is, for now
			continue
		}
		if l := s.loops[f]; l != nil {
			l.stop()
			<-l.done
			delete(s.loops, f)
		}
		delete(s.byName, f.cfg.Name)
	}
	s.folders = nil
	for _, c := range cfgs {
		if f, ok := s.byName[c.Name]; ok && slices.Contains(keep, f) {
			s.folders = append(s.folders, f)
			continue
		}
		f, err := newFolder(s, c)
		if err != nil {
			return err
		}
		s.folders = append(s.folders, f)
		s.byName[c.Name] = f
		if s.runCtx != nil {
			f.resume()
		}
		s.startLocked(f)
	}
	// Busy folders the new set removed stay until they are done.
	for _, f := range keep {
		if !slices.Contains(s.folders, f) {
			s.folders = append(s.folders, f)
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("hot folders %s: %w; their changes apply once those are done", strings.Join(busy, ", "), ErrBusy)
	}
	return nil
}

func (s *Service) work(ctx context.Context) {
	for {
		it, ok := s.queue.pop(ctx)
		if !ok {
			return
		}
		it.f.advance(ctx, it)
		s.queue.done(it)
	}
}

// Status returns every configured folder's status, in configuration order.
func (s *Service) Status() []FolderStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FolderStatus, len(s.folders))
	for i, f := range s.folders {
		out[i] = f.status()
	}
	return out
}

// Pause stops a folder from taking new files; scenes already taken are finished
// and delivered. The pause is remembered across restarts.
func (s *Service) Pause(name string) error { return s.setPaused(name, true) }

// Resume lets a paused folder take files again.
func (s *Service) Resume(name string) error { return s.setPaused(name, false) }

func (s *Service) setPaused(name string, paused bool) error {
	s.mu.Lock()
	f, ok := s.byName[name]
	s.mu.Unlock()
	if !ok {
		return core.NotFound("no hot folder is named %q", name)
	}
	if !f.cfg.Enabled {
		return core.Conflict("hot folder %q is disabled in the configuration", name)
	}
	return f.setUserPaused(paused)
}
