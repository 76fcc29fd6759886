package ui

import (
	"fmt"
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// KeyPresets holds the studio's own looks (catalog.UserPreset as config entries);
// app.LoadConfig installs them, so the API and hot folders take their keys too.
const KeyPresets = "presets"

// presetKey turns a preset's name into its key: lower case, words joined by '-'.
func presetKey(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// savePreset makes a look of the develop settings in o under name, installs it
// (replacing a preset of the same key) and writes it to the config file. It returns
// the new preset's key, for the caller to select.
func savePreset(cfg *Config, name string, o core.Options) (string, error) {
	key := presetKey(name)
	if key == "" {
		return "", fmt.Errorf("a preset needs a name with letters or digits")
	}
	if _, builtin := catalog.TonecraftLook(key); builtin && !isUserPreset(key) {
		return "", fmt.Errorf("%q is the name of a built-in look; choose another name", name)
	}
	p := catalog.UserPresetFromOptions(key, strings.TrimSpace(name), o)
	list := catalog.UserPresets()
	replaced := false
	for i := range list {
		if list[i].Key == key {
			list[i], replaced = p, true
		}
	}
	if !replaced {
		list = append(list, p)
	}
	old := catalog.UserPresets()
	if err := catalog.SetUserPresets(list); err != nil {
		return "", err
	}
	entries := make([]any, len(list))
	for i, p := range list {
		entries[i] = p.Map()
	}
	cfg.Set(KeyPresets, entries)
	if err := cfg.Save(); err != nil {
		_ = catalog.SetUserPresets(old) // keep what is installed and what is saved the same
		return "", err
	}
	return key, nil
}

func isUserPreset(key string) bool {
	for _, p := range catalog.UserPresets() {
		if p.Key == key {
			return true
		}
	}
	return false
}

// savePresetDialog asks for a name and saves the develop settings of o as a look of
// the photographer's own; done (may be nil) gets its key.
func (w *Window) savePresetDialog(o core.Options, done func(key string)) {
	name := widget.NewEntry()
	name.SetPlaceHolder("e.g. Bright kitchen")
	note := widget.NewLabel("Saves the look, the sliders and the corrections of this scene as a look of your own, usable in every scene, in hot folders and through the API (tonecraft_profile).")
	note.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(note, widget.NewForm(widget.NewFormItem("Name", name)))
	d := dialog.NewCustomConfirm("Save as preset", "Save", "Cancel", body,
		func(ok bool) {
			if !ok {
				return
			}
			key, err := savePreset(w.cfg, name.Text, o)
			if err != nil {
				w.showError(err)
				return
			}
			w.setStatus(fmt.Sprintf("Saved the preset %q (key %s).", strings.TrimSpace(name.Text), key))
			if done != nil {
				done(key)
			}
		}, w.win)
	d.Resize(fyne.NewSize(440, 240))
	d.Show()
}
