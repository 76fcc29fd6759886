package pipeline

import (
	"testing"

	"github.com/porchlight/porchlight/engine/catalog"
)

// Every built-in tonecraft preset maps onto a valid tone look, and the switches come
// from the resolved options, not the preset.
func TestToneLookFromEveryPreset(t *testing.T) {
	presets, err := catalog.Presets("tonecraft")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		l, ok := catalog.TonecraftLook(p.Key)
		if !ok {
			t.Fatalf("%s: no look", p.Key)
		}
		tl := ToneLook(l, false, true)
		if err := tl.Validate(); err != nil {
			t.Errorf("%s: %v", p.Key, err)
		}
		if tl.AutoLevels || !tl.Sharpen {
			t.Errorf("%s: switches not taken from the resolved options", p.Key)
		}
		if len(tl.Curve) != len(l.Curve) {
			t.Errorf("%s: curve lost", p.Key)
		}
	}
}
