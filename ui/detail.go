package ui

import (
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// previewEdge is the size photos are decoded at for the fitted view; 100 % decodes
// them whole.
const previewEdge = 2048

// detailView shows one scene: before and after, its brackets, what ran and where the
// result went.
type detailView struct {
	w       *Window
	id      int
	loaded  string // what the compare view holds: scene, output and resolution
	actual  bool   // 100 %
	compare *compareView
	scroll  *container.Scroll
	body    *fyne.Container

	title       *widget.Label
	status      *fullTextLabel
	mode        *widget.RadioGroup
	zoom        *widget.RadioGroup
	export      *widget.Button
	paint       *widget.Button
	reveal      *widget.Button
	cancel      *widget.Button
	retry       *widget.Button
	versions    *versionBar
	info        *widget.Label
	strip       *fyne.Container
	stripScroll *container.Scroll
	stripFor    string
	root        fyne.CanvasObject
	onReady     func(name string) // called once when a result is showing (autoload)
}

func newDetailView(w *Window) *detailView {
	d := &detailView{w: w}
	d.compare = newCompareView(func(f func()) { w.do(f) })
	d.scroll = container.NewScroll(d.compare)
	d.body = container.NewStack(d.compare)
	back := widget.NewButtonWithIcon("Overview", theme.NavigateBackIcon(), func() { w.selectScene(0) })
	back.Importance = widget.LowImportance
	d.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	d.title.Truncation = fyne.TextTruncateEllipsis
	d.status = newFullTextLabel("", "Scene state", func() fyne.Window { return w.win })
	d.status.Alignment = fyne.TextAlignTrailing
	d.status.Importance = widget.LowImportance
	d.mode = widget.NewRadioGroup([]string{"Split", "Before", "After"}, func(s string) {
		switch s {
		case "Before":
			d.compare.SetMode(modeBefore)
		case "After":
			d.compare.SetMode(modeAfter)
		default:
			d.compare.SetMode(modeSplit)
		}
	})
	d.mode.Horizontal = true
	d.mode.Required = true
	d.mode.SetSelected("Split")
	d.zoom = widget.NewRadioGroup([]string{"Fit", "100%"}, func(s string) { d.setActual(s == "100%") })
	d.zoom.Horizontal = true
	d.zoom.Required = true
	d.zoom.SetSelected("Fit")
	d.export = widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), d.exportDialog)
	d.reveal = widget.NewButtonWithIcon("Show in folder", theme.FolderIcon(), func() {
		if s, ok := w.shownScene(d.id); ok && s.Saved != "" {
			w.openFolder(filepath.Dir(s.Saved))
		}
	})
	d.paint = widget.NewButtonWithIcon("Paint mask…", theme.ColorPaletteIcon(), func() { openBrush(w, d.id) })
	d.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { w.cancelScene(d.id) })
	d.retry = widget.NewButtonWithIcon("Try again", theme.ViewRefreshIcon(), func() { w.retryScene(d.id) })
	d.info = widget.NewLabel("")
	d.info.Wrapping = fyne.TextWrapWord
	d.info.Importance = widget.LowImportance
	d.strip = container.NewHBox()

	head := container.NewBorder(nil, nil, back, container.NewHBox(d.cancel, d.retry, d.paint, d.reveal, d.export), d.title)
	d.versions = newVersionBar(w)
	tools := container.NewBorder(nil, nil, container.NewHBox(d.mode, widget.NewSeparator(), d.zoom, d.versions.Object()), nil, d.status)
	d.stripScroll = container.NewHScroll(d.strip)
	foot := container.NewVBox(widget.NewSeparator(), d.stripScroll, d.info)
	d.root = container.NewBorder(container.NewVBox(head, tools), foot, nil, nil, d.body)
	return d
}

// Object is the view's canvas object.
func (d *detailView) Object() fyne.CanvasObject { return d.root }

// show switches to scene id.
func (d *detailView) show(id int) {
	if d.id == id {
		return
	}
	d.id = id
	d.loaded = ""
	d.stripFor = ""
	d.compare.SetImages(nil, nil, image.Point{})
	d.mode.SetSelected("Split")
}

// setActual switches between fitting the window and 100 %.
func (d *detailView) setActual(on bool) {
	if d.actual == on {
		return
	}
	d.actual = on
	if on {
		d.zoom.SetSelected("100%")
		d.body.Objects = []fyne.CanvasObject{d.scroll}
		d.scroll.Content = d.compare
	} else {
		d.zoom.SetSelected("Fit")
		d.scroll.Content = canvas.NewRectangle(nil)
		d.body.Objects = []fyne.CanvasObject{d.compare}
	}
	d.compare.SetActualSize(on)
	d.body.Refresh()
	d.scroll.Refresh()
	d.loaded = "" // 100 % wants the whole photos
	d.update()
}

// toggleCompare flips between the result and the original (C or Space).
func (d *detailView) toggleCompare() {
	if d.id == 0 {
		return
	}
	if d.compare.Mode() == modeBefore {
		d.mode.SetSelected("After")
	} else {
		d.mode.SetSelected("Before")
	}
}

// update redraws the view from the scene's current state (UI goroutine).
func (d *detailView) update() {
	s, ok := d.w.shownScene(d.id)
	if !ok {
		return
	}
	d.versions.update(s)
	setText(d.title, s.Name)
	setText(&d.status.Label, d.w.sceneStatus(s))
	done := s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderCompleted
	setEnabled(d.export, done)
	setEnabled(d.reveal, s.Saved != "")
	setEnabled(d.paint, canPaint(s))
	if s.Active() {
		d.cancel.Show()
	} else {
		d.cancel.Hide()
	}
	if s.Terminal() && !done {
		d.retry.Show()
	} else {
		d.retry.Hide()
	}
	if done {
		d.mode.Enable()
	} else {
		d.mode.Disable()
	}
	setText(d.info, d.infoText(s))
	d.updateStrip(s)
	d.load(s)
}

func setEnabled(b *widget.Button, on bool) {
	switch {
	case on && b.Disabled():
		b.Enable()
	case !on && !b.Disabled():
		b.Disable()
	}
}

// infoText says what ran on the scene and where its result is.
func (d *detailView) infoText(s Scene) string {
	var parts []string
	if s.Warning != "" && s.Phase != PhaseRefused {
		parts = append(parts, "Warning: "+s.Warning)
	}
	if len(s.Summary.Recipes) > 0 {
		keys := make([]string, 0, len(s.Summary.Recipes))
		for k := range s.Summary.Recipes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var rs []string
		for _, k := range keys {
			rs = append(rs, k+" "+s.Summary.Recipes[k])
		}
		parts = append(parts, "Recipes: "+strings.Join(rs, " · "))
	}
	for _, n := range s.Summary.Notes {
		parts = append(parts, "Note: "+n)
	}
	if s.Summary.Status == core.OrderFailed && s.Summary.Error != "" {
		p := "Why it failed: " + s.Summary.Error
		if s.Summary.ErrorCode != "" {
			p += " (" + s.Summary.ErrorCode + ")"
		}
		parts = append(parts, p)
	}
	if s.Saved != "" {
		parts = append(parts, "Saved to "+s.Saved)
	}
	if s.Problem != "" && s.Phase != PhaseDraft {
		parts = append(parts, s.Problem)
	}
	if k := len(s.SetAside); k > 0 {
		var reasons []string
		for _, f := range s.SetAside {
			if !slices.Contains(reasons, f.Reason) {
				reasons = append(reasons, f.Reason)
			}
		}
		put := ""
		if s.Phase == PhaseDraft {
			put = "; Put back returns one to the scene"
		}
		parts = append(parts, fmt.Sprintf("Set aside: %d %s (%s), shown at the end of the strip%s.",
			k, plural(k, "photo", "photos"), strings.Join(reasons, ", "), put))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d %s. The brackets are merged in this order; split the scene before a bracket that belongs to another shot.",
			len(s.Files), plural(len(s.Files), "photo", "brackets"))
	}
	return strings.Join(parts, "\n")
}

// updateStrip shows the scene's brackets, with "split here" on drafts.
func (d *detailView) updateStrip(s Scene) {
	key := fmt.Sprintf("%d/%d/%s/%d", s.ID, s.Phase, strings.Join(s.Files, "|"), len(s.SetAside))
	if key == d.stripFor {
		for _, o := range d.strip.Objects {
			switch t := o.(type) {
			case *bracketTile:
				t.bindImage()
			case *setAsideTile:
				t.bindImage()
			}
		}
		return
	}
	d.stripFor = key
	d.strip.Objects = nil
	for i, f := range s.Files {
		d.strip.Add(newBracketTile(d.w, s.ID, i, f, s.Phase == PhaseDraft && i > 0))
	}
	for _, f := range s.SetAside {
		d.strip.Add(newSetAsideTile(d.w, s.ID, f, s.Phase == PhaseDraft))
	}
	// The strip's height may have changed (split buttons come and go).
	if r, ok := d.root.(*fyne.Container); ok {
		r.Refresh()
	}
}

// load fills the compare view: thumbnails at once, then the photos decoded at
// preview size (or whole at 100 %) in the background.
func (d *detailView) load(s Scene) {
	out := ""
	if s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderCompleted {
		out = s.Summary.OutputAssetID
	}
	key := fmt.Sprintf("%d|%s|%t", s.ID, out, d.actual)
	if key == d.loaded {
		return
	}
	d.loaded = key
	ref := s.Reference()
	before := d.w.thumbs.Peek("file:" + ref)
	var after image.Image
	if out != "" {
		after = d.w.thumbs.Peek("asset:" + out)
	}
	if before != nil {
		d.compare.SetImages(before, after, image.Point{})
	}
	edge := previewEdge
	if d.actual {
		edge = 0
	}
	id := s.ID
	d.w.busy.Add(1)
	go func() {
		defer d.w.busy.Done()
		b, _ := decodeFile(ref, edge)
		var a image.Image
		var full image.Point
		if out != "" {
			var err error
			a, full, err = decodeAsset(d.w.deps.Assets, out, edge)
			if err != nil {
				d.w.do(func() { d.w.setStatus("Cannot show the result: " + err.Error()) })
			}
		}
		d.w.do(func() {
			if d.id != id || d.loaded != key {
				return // the user moved on
			}
			d.compare.SetImages(b, a, full)
			if a != nil && d.onReady != nil {
				ready := d.onReady
				d.onReady = nil
				ready(s.Name)
			}
		})
	}()
}

// decodeFile reads a photo for display; edge 0 keeps its size.
func decodeFile(path string, edge int) (image.Image, error) {
	img, _, err := codec.DecodeFile(path, codec.DecodeOptions{ScaleToMaxEdge: edge, MaxPixels: -1})
	if err != nil {
		return nil, err
	}
	return img.ToNRGBA(), nil
}

// decodeAsset reads a stored photo for display and reports its full size.
func decodeAsset(a Assets, id string, edge int) (image.Image, image.Point, error) {
	f, rec, err := a.Open(id)
	if err != nil {
		return nil, image.Point{}, err
	}
	defer f.Close()
	img, _, err := codec.Decode(f, rec.Size, codec.DecodeOptions{ScaleToMaxEdge: edge, MaxPixels: -1})
	if err != nil {
		return nil, image.Point{}, err
	}
	return img.ToNRGBA(), image.Pt(rec.Width, rec.Height), nil
}

// bracketTile is one bracket in the detail's strip.
type bracketTile struct {
	widget.BaseWidget
	w     *Window
	path  string
	img   *canvas.Image
	split *widget.Button
	name  *widget.Label
}

func newBracketTile(w *Window, sceneID, index int, path string, canSplit bool) *bracketTile {
	t := &bracketTile{w: w, path: path}
	t.img = canvas.NewImageFromImage(nil)
	t.img.FillMode = canvas.ImageFillContain
	t.img.SetMinSize(fyne.NewSize(96, 64))
	t.name = widget.NewLabel(filepath.Base(path))
	t.name.SizeName = theme.SizeNameCaptionText
	t.name.Truncation = fyne.TextTruncateEllipsis
	t.split = widget.NewButtonWithIcon("Split here", theme.ContentCutIcon(), func() {
		if _, err := w.shoot.Split(sceneID, index); err != nil {
			w.setStatus(err.Error())
			return
		}
		w.setStatus("Split " + filepath.Base(path) + " and the brackets after it into a new scene.")
		w.refresh()
	})
	t.split.Importance = widget.LowImportance
	if !canSplit {
		t.split.Hide()
	}
	t.ExtendBaseWidget(t)
	t.bindImage()
	return t
}

func (t *bracketTile) bindImage() {
	img, _ := t.w.thumbs.Get("file:"+t.path, func() (image.Image, error) { return fileThumb(t.path) })
	if img != nil && t.img.Image != img {
		t.img.Image = img
		t.img.Refresh()
	}
}

func (t *bracketTile) CreateRenderer() fyne.WidgetRenderer {
	box := container.NewVBox(t.img, container.NewGridWrap(fyne.NewSize(112, t.name.MinSize().Height), t.name), t.split)
	return widget.NewSimpleRenderer(box)
}

// exportDialog asks for a format and size and writes a repackaged copy of the
// result where the user chooses. No editing runs again.
func (d *detailView) exportDialog() {
	s, ok := d.w.shownScene(d.id)
	if !ok || s.Summary.OutputAssetID == "" {
		return
	}
	cfg := d.w.cfg
	formats := []string{"JPEG", "PNG", "WebP"}
	values := map[string]string{"JPEG": "jpeg", "PNG": "png", "WebP": "webp"}
	format := widget.NewSelect(formats, nil)
	cur := cfg.String(KeyExportFormat, "jpeg")
	for l, v := range values {
		if v == cur {
			format.SetSelected(l)
		}
	}
	if format.Selected == "" {
		format.SetSelected("JPEG")
	}
	quality := widget.NewSlider(1, 100)
	quality.Step = 1
	quality.SetValue(float64(cfg.Int(KeyExportQual, assets.DefaultExportQuality)))
	qLabel := widget.NewLabel(strconv.Itoa(int(quality.Value)))
	quality.OnChanged = func(v float64) { qLabel.SetText(strconv.Itoa(int(v))) }
	edge := widget.NewEntry()
	edge.SetPlaceHolder("Original size")
	if e := cfg.Int(KeyExportEdge, 0); e > 0 {
		edge.SetText(strconv.Itoa(e))
	}
	edge.Validator = func(t string) error {
		if strings.TrimSpace(t) == "" {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return fmt.Errorf("a number of pixels")
		}
		_, err = assets.NormalizeExport(core.ExportOptions{Format: "jpeg", MaxEdge: n})
		return err
	}
	items := []*widget.FormItem{
		widget.NewFormItem("Format", format),
		widget.NewFormItem("Quality", container.NewBorder(nil, nil, nil, qLabel, quality)),
		widget.NewFormItem("Longest edge", edge),
	}
	dlg := dialog.NewForm("Export "+s.Name, "Choose file…", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(edge.Text))
		opt := core.ExportOptions{Format: values[format.Selected], Quality: int(quality.Value), MaxEdge: n}
		if _, err := assets.NormalizeExport(opt); err != nil {
			d.w.showError(err)
			return
		}
		cfg.Set(KeyExportFormat, opt.Format)
		cfg.Set(KeyExportQual, opt.Quality)
		cfg.Set(KeyExportEdge, opt.MaxEdge)
		save := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
			if err != nil || wc == nil {
				if err != nil {
					d.w.showError(err)
				}
				return
			}
			path := wc.URI().Path()
			wc.Close()
			d.runExport(s, opt, path)
		}, d.w.win)
		save.SetFileName(s.Name + catalog.FormatExt(opt.Format))
		if start := exportStart(cfg); start != nil {
			save.SetLocation(start)
		}
		save.Resize(fyne.NewSize(900, 600))
		save.Show()
	}, d.w.win)
	dlg.Resize(fyne.NewSize(460, 300))
	dlg.Show()
}

// exportStart is the folder the export file chooser opens in: where the last
// export went, else the output folder, when it still exists.
func exportStart(cfg *Config) fyne.ListableURI {
	for _, dir := range []string{cfg.String(KeyExportDir, ""), cfg.String(KeyOutputDir, "")} {
		if dir == "" {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
			return l
		}
	}
	return nil
}

// runExport repackages the scene's result into path in the background.
func (d *detailView) runExport(s Scene, opt core.ExportOptions, path string) {
	w := d.w
	w.setActivity("Exporting " + filepath.Base(path) + "…")
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		err := exportTo(w.deps.Assets, s.Summary.OutputAssetID, opt, path)
		w.do(func() {
			w.setActivity("")
			if err != nil {
				w.showError(fmt.Errorf("export: %w", err))
				return
			}
			// The next export opens here; kept in the config file across starts.
			w.cfg.Set(KeyExportDir, filepath.Dir(path))
			if w.cfg.File() != "" {
				w.cfg.Save()
			}
			w.setStatus("Exported " + path)
		})
	}()
}

// exportTo writes a repackaged copy of asset id to path: a temporary file beside it,
// synced, then renamed over it.
func exportTo(a Assets, id string, opt core.ExportOptions, path string) error {
	f, rec, err := a.Open(id)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeFileAtomic(path, 0o644, func(w io.Writer) error {
		_, _, err := assets.Repackage(f, rec.Size, opt, false, w)
		return err
	})
}
