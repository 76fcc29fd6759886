package ui

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// relLuminance is WCAG 2's relative luminance of an opaque colour.
func relLuminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// wcagContrast is WCAG 2's contrast ratio of two colours (1 to 21).
func wcagContrast(a, b color.Color) float64 {
	la, lb := relLuminance(a), relLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// Every colour the window draws text in (labels of every importance: secondary
// text such as notes, paths and captions is a low-importance label, drawn in the
// disabled colour; placeholders) reads at 4.5:1 or better (WCAG AA) on every
// background text sits on, in the light and the dark theme.
func TestTextContrastInBothThemes(t *testing.T) {
	texts := []fyne.ThemeColorName{
		theme.ColorNameForeground, theme.ColorNameDisabled, theme.ColorNamePlaceHolder,
		theme.ColorNamePrimary, theme.ColorNameError, theme.ColorNameWarning, theme.ColorNameSuccess,
	}
	backgrounds := []fyne.ThemeColorName{
		theme.ColorNameBackground, theme.ColorNameHeaderBackground,
		theme.ColorNameMenuBackground, theme.ColorNameOverlayBackground,
	}
	for _, choice := range []string{ThemeLight, ThemeDark} {
		th := newTheme(choice)
		for _, fg := range texts {
			for _, bg := range backgrounds {
				f, b := th.Color(fg, theme.VariantDark), th.Color(bg, theme.VariantDark)
				if c := wcagContrast(f, b); c < 4.5 {
					t.Errorf("%s theme: %s on %s is %.2f:1, want at least 4.5:1", choice, fg, bg, c)
				}
			}
		}
		// Placeholders sit in entries; button labels on the accent.
		for _, pair := range [][2]fyne.ThemeColorName{
			{theme.ColorNamePlaceHolder, theme.ColorNameInputBackground},
			{theme.ColorNameForeground, theme.ColorNameInputBackground},
			{theme.ColorNameForegroundOnPrimary, theme.ColorNamePrimary},
		} {
			f, b := th.Color(pair[0], theme.VariantLight), th.Color(pair[1], theme.VariantLight)
			if c := wcagContrast(f, b); c < 4.5 {
				t.Errorf("%s theme: %s on %s is %.2f:1, want at least 4.5:1", choice, pair[0], pair[1], c)
			}
		}
	}
}
