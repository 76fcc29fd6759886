package ui

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// A scripting and demo hook: with PORCHLIGHT_UI_AUTOLOAD set, the window drops the
// listed paths on itself when it opens, processes the scenes and, once they have
// settled, opens the first finished one in the before/after view. Progress is
// written to stderr as lines starting with "porchlight-ui:" so a script can follow:
//
//	porchlight-ui: scenes N          the paths were grouped into N scenes
//	porchlight-ui: ready             their previews are showing
//	porchlight-ui: submitted         the scenes went to the engine
//	porchlight-ui: done C F          every scene settled: C completed, F did not
//	porchlight-ui: compare NAME      the before/after view of scene NAME is showing
//
// With PORCHLIGHT_UI_AUTOLOAD_TOUR set to paths too, the hook goes on: it moves the
// sliders of the compared scene, drops the tour's paths (not processed) and shows
// the scene culling set photos aside from and the scene with the most brackets:
//
//	porchlight-ui: sliders NAME      the Adjust tab previews scene NAME with moved sliders
//	porchlight-ui: culled NAME       scene NAME shows the photos set aside from it
//	porchlight-ui: brackets NAME N   scene NAME of N brackets is showing
//	porchlight-ui: shoots N          the overview, the sidebar listing N shoots
//
// PORCHLIGHT_UI_AUTOLOAD            comma-separated files or folders
// PORCHLIGHT_UI_AUTOLOAD_OPTIONS    shoot options as name=value pairs separated by
//
//	";" (e.g. "tonecraft=true;perspective=true"), read by the catalog
//
// PORCHLIGHT_UI_AUTOLOAD_HOLD       seconds to wait before processing and before
//
//	opening the comparison (default 1), so each state can be seen
const (
	AutoloadEnv        = "PORCHLIGHT_UI_AUTOLOAD"
	AutoloadOptionsEnv = "PORCHLIGHT_UI_AUTOLOAD_OPTIONS"
	AutoloadHoldEnv    = "PORCHLIGHT_UI_AUTOLOAD_HOLD"
	AutoloadTourEnv    = "PORCHLIGHT_UI_AUTOLOAD_TOUR"
)

// autoloadSpec is the hook's parsed environment.
type autoloadSpec struct {
	paths   []string
	tour    []string // dropped after the comparison, to show culling and big scenes
	options map[string]string
	hold    time.Duration
}

func parseAutoload(getenv func(string) string) (autoloadSpec, error) {
	var s autoloadSpec
	for _, p := range strings.Split(getenv(AutoloadEnv), ",") {
		if p = strings.TrimSpace(p); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				return s, err
			}
			s.paths = append(s.paths, abs)
		}
	}
	for _, p := range strings.Split(getenv(AutoloadTourEnv), ",") {
		if p = strings.TrimSpace(p); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				return s, err
			}
			s.tour = append(s.tour, abs)
		}
	}
	s.hold = time.Second
	if h := strings.TrimSpace(getenv(AutoloadHoldEnv)); h != "" {
		f, err := strconv.ParseFloat(h, 64)
		if err != nil || f < 0 {
			return s, fmt.Errorf("%s: %q is not a number of seconds", AutoloadHoldEnv, h)
		}
		s.hold = time.Duration(f * float64(time.Second))
	}
	if o := strings.TrimSpace(getenv(AutoloadOptionsEnv)); o != "" {
		s.options = map[string]string{}
		for _, kv := range strings.Split(o, ";") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return s, fmt.Errorf("%s: %q is not name=value", AutoloadOptionsEnv, kv)
			}
			s.options[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if _, err := catalog.DecodeStrings(s.options); err != nil {
			return s, fmt.Errorf("%s: %w", AutoloadOptionsEnv, err)
		}
	}
	return s, nil
}

func autoloadSay(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "porchlight-ui: "+format+"\n", args...)
}

// startAutoload runs the hook when the environment asks for it.
func (w *Window) startAutoload() {
	spec, err := parseAutoload(os.Getenv)
	if err != nil {
		w.showError(err)
		return
	}
	if len(spec.paths) == 0 {
		return
	}
	if spec.options != nil {
		o, _ := catalog.DecodeStrings(spec.options)
		w.defaults = o
		w.shoot.SetOptions(o)
		w.shootForm.Set(core.Options{}, o, false)
	}
	w.addPaths(spec.paths, func(ids []int, err error) {
		if err != nil {
			autoloadSay("error %v", err)
			return
		}
		autoloadSay("scenes %d", len(ids))
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.awaitPreviews(ids, 30*time.Second)
			autoloadSay("ready")
			sleepCtx(w, spec.hold)
			w.do(func() {
				w.Process()
				autoloadSay("submitted")
			})
			w.awaitSettled(ids, spec.hold, spec.tour)
		}()
	})
}

// awaitPreviews asks for every scene's preview and waits until they are all loaded
// (or failed), at most timeout.
func (w *Window) awaitPreviews(ids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && w.ctx.Err() == nil {
		missing := 0
		for _, id := range ids {
			if s, ok := w.shoot.Get(id); ok {
				if img, failed := w.sceneThumb(s); img == nil && !failed {
					missing++
				}
			}
		}
		if missing == 0 {
			w.markDirty()
			sleepCtx(w, 300*time.Millisecond) // one more redraw with the last of them
			return
		}
		sleepCtx(w, 100*time.Millisecond)
	}
}

// awaitSettled waits for the scenes to settle, reports, then opens the first
// finished one in the comparison.
func (w *Window) awaitSettled(ids []int, hold time.Duration, tour []string) {
	for {
		if w.ctx.Err() != nil {
			return
		}
		done, completed, first := true, 0, 0
		for _, id := range ids {
			s, ok := w.shoot.Get(id)
			if !ok {
				continue
			}
			if !s.Terminal() || (s.Summary.Status == "completed" && s.Saved == "" && s.Problem == "") {
				done = false
				break
			}
			if s.Summary.Status == "completed" {
				completed++
				if first == 0 {
					first = id
				}
			}
		}
		if done {
			autoloadSay("done %d %d", completed, len(ids)-completed)
			if first == 0 {
				return
			}
			sleepCtx(w, hold)
			w.do(func() {
				w.detail.onReady = func(name string) {
					autoloadSay("compare %s", name)
					if len(tour) > 0 {
						w.busy.Add(1)
						go func() {
							defer w.busy.Done()
							w.tour(first, tour, hold)
						}()
					}
				}
				w.selectScene(first)
			})
			return
		}
		sleepCtx(w, 200*time.Millisecond)
	}
}

func sleepCtx(w *Window, d time.Duration) {
	select {
	case <-w.ctx.Done():
	case <-time.After(d):
	}
}

// tour shows what the window does beyond a batch (see AutoloadTourEnv).
func (w *Window) tour(compared int, paths []string, hold time.Duration) {
	sleepCtx(w, hold)
	// The sliders of the compared scene, previewed over its kept base.
	shown := make(chan struct{}, 1)
	w.do(func() {
		w.sideTabs.SelectIndex(adjustTab)
		w.refresh()
	})
	if !w.awaitCond(30*time.Second, func() bool { return w.adjust.pv != nil }) {
		autoloadSay("error the sliders found no preview")
		return
	}
	w.do(func() {
		prev := w.adjust.onPreview
		w.adjust.onPreview = func(img image.Image, full image.Point, took time.Duration) {
			prev(img, full, took)
			select {
			case shown <- struct{}{}:
			default:
			}
		}
		p := w.adjust.panel
		p.sliders["exposure"].SetValue(0.6)
		p.sliders["shadows"].SetValue(35)
		p.sliders["vibrance"].SetValue(30)
	})
	select {
	case <-shown:
	case <-time.After(30 * time.Second):
		autoloadSay("error no slider preview")
		return
	case <-w.ctx.Done():
		return
	}
	if s, ok := w.shoot.Get(compared); ok {
		autoloadSay("sliders %s", s.Name)
	}
	sleepCtx(w, hold)

	// The tour's photos: culling and a scene of many brackets, as drafts.
	added := make(chan []int, 1)
	w.do(func() {
		w.addPaths(paths, func(ids []int, err error) { added <- ids })
	})
	var ids []int
	select {
	case ids = <-added:
	case <-w.ctx.Done():
		return
	}
	w.awaitPreviews(ids, 30*time.Second)
	culled, biggest, most := 0, 0, 0
	for _, id := range ids {
		s, _ := w.shoot.Get(id)
		if len(s.SetAside) > 0 && culled == 0 {
			culled = id
		}
		if len(s.Files) > most {
			biggest, most = id, len(s.Files)
		}
	}
	show := func(id int, toEnd bool, say func(Scene)) {
		w.do(func() {
			w.sideTabs.SelectIndex(1)
			w.selectScene(id)
		})
		w.awaitCond(10*time.Second, func() bool { return w.selected == id })
		sleepCtx(w, time.Second) // the strip's thumbnails
		if toEnd {               // where the set-aside photos are
			w.do(func() { w.detail.stripScroll.ScrollToOffset(fyne.NewPos(w.detail.strip.MinSize().Width, 0)) })
			sleepCtx(w, 300*time.Millisecond)
		}
		if s, ok := w.shoot.Get(id); ok {
			say(s)
		}
		sleepCtx(w, hold)
	}
	if culled != 0 {
		show(culled, true, func(s Scene) { autoloadSay("culled %s", s.Name) })
	}
	if biggest != 0 {
		show(biggest, false, func(s Scene) { autoloadSay("brackets %s %d", s.Name, len(s.Files)) })
	}
	w.do(func() { w.selectScene(0) })
	w.awaitCond(10*time.Second, func() bool { return w.selected == 0 })
	sleepCtx(w, time.Second)
	shoots := 0
	w.awaitCond(time.Second, func() bool { shoots = len(w.side.entries); return true })
	autoloadSay("shoots %d", shoots)
}

// awaitCond polls cond, run on the UI goroutine (it reads widgets' state), until it
// holds or timeout passes.
func (w *Window) awaitCond(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && w.ctx.Err() == nil {
		got := make(chan bool, 1)
		w.do(func() { got <- cond() })
		select {
		case ok := <-got:
			if ok {
				return true
			}
		case <-w.ctx.Done():
			return false
		}
		sleepCtx(w, 100*time.Millisecond)
	}
	return false
}
