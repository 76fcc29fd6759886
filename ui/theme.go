package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Theme choices of the settings.
const (
	ThemeSystem = "system"
	ThemeLight  = "light"
	ThemeDark   = "dark"
)

// porchTheme is Fyne's default theme with a warm porch-light accent and neutral
// greys that keep photos the most colourful thing on screen. choice forces the light
// or dark variant, or follows the system.
type porchTheme struct {
	choice string
}

func newTheme(choice string) fyne.Theme { return &porchTheme{choice: choice} }

var (
	amber      = color.NRGBA{R: 0xF2, G: 0xA5, B: 0x3A, A: 0xFF}
	amberDeep  = color.NRGBA{R: 0xC9, G: 0x74, B: 0x12, A: 0xFF}
	amberText  = color.NRGBA{R: 0x8F, G: 0x54, B: 0x09, A: 0xFF}
	okGreen    = color.NRGBA{R: 0x4C, G: 0xB8, B: 0x7A, A: 0xFF}
	errRed     = color.NRGBA{R: 0xE5, G: 0x5B, B: 0x4F, A: 0xFF}
	idleGrey   = color.NRGBA{R: 0x8A, G: 0x8F, B: 0x98, A: 0xFF}
	runBlue    = color.NRGBA{R: 0x5B, G: 0x9B, B: 0xE6, A: 0xFF}
	darkShades = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameBackground:        color.NRGBA{R: 0x1B, G: 0x1C, B: 0x1F, A: 0xFF},
		theme.ColorNameHeaderBackground:  color.NRGBA{R: 0x23, G: 0x24, B: 0x28, A: 0xFF},
		theme.ColorNameMenuBackground:    color.NRGBA{R: 0x26, G: 0x27, B: 0x2B, A: 0xFF},
		theme.ColorNameOverlayBackground: color.NRGBA{R: 0x23, G: 0x24, B: 0x28, A: 0xFF},
		theme.ColorNameInputBackground:   color.NRGBA{R: 0x2A, G: 0x2C, B: 0x31, A: 0xFF},
		theme.ColorNameButton:            color.NRGBA{R: 0x30, G: 0x32, B: 0x37, A: 0xFF},
		theme.ColorNameSeparator:         color.NRGBA{R: 0x33, G: 0x35, B: 0x3A, A: 0xFF},
		theme.ColorNameForeground:        color.NRGBA{R: 0xE9, G: 0xE7, B: 0xE3, A: 0xFF},
		// Secondary text (notes, paths, captions: low-importance labels draw in the
		// disabled colour) and placeholders keep 4.5:1 on every background they sit on.
		theme.ColorNamePlaceHolder:         color.NRGBA{R: 0xA3, G: 0xA8, B: 0xB0, A: 0xFF},
		theme.ColorNameDisabled:            color.NRGBA{R: 0xA3, G: 0xA8, B: 0xB0, A: 0xFF},
		theme.ColorNameInputBorder:         color.NRGBA{R: 0x3A, G: 0x3C, B: 0x42, A: 0xFF},
		theme.ColorNameHover:               color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0x0F},
		theme.ColorNamePrimary:             amber,
		theme.ColorNameForegroundOnPrimary: color.NRGBA{R: 0x1B, G: 0x1C, B: 0x1F, A: 0xFF},
		theme.ColorNameFocus:               color.NRGBA{R: 0xF2, G: 0xA5, B: 0x3A, A: 0x7F},
		theme.ColorNameSelection:           color.NRGBA{R: 0xF2, G: 0xA5, B: 0x3A, A: 0x40},
		theme.ColorNameSuccess:             okGreen,
		theme.ColorNameError:               color.NRGBA{R: 0xF0, G: 0x7A, B: 0x6E, A: 0xFF},
		theme.ColorNameWarning:             amber,
	}
	lightShades = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameBackground:        color.NRGBA{R: 0xF4, G: 0xF2, B: 0xEE, A: 0xFF},
		theme.ColorNameHeaderBackground:  color.NRGBA{R: 0xEA, G: 0xE7, B: 0xE1, A: 0xFF},
		theme.ColorNameMenuBackground:    color.NRGBA{R: 0xFB, G: 0xFA, B: 0xF8, A: 0xFF},
		theme.ColorNameOverlayBackground: color.NRGBA{R: 0xFB, G: 0xFA, B: 0xF8, A: 0xFF},
		theme.ColorNameInputBackground:   color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xFF},
		theme.ColorNameButton:            color.NRGBA{R: 0xE4, G: 0xE0, B: 0xD9, A: 0xFF},
		theme.ColorNameSeparator:         color.NRGBA{R: 0xD8, G: 0xD4, B: 0xCC, A: 0xFF},
		theme.ColorNameForeground:        color.NRGBA{R: 0x22, G: 0x22, B: 0x24, A: 0xFF},
		theme.ColorNamePlaceHolder:       color.NRGBA{R: 0x59, G: 0x5D, B: 0x65, A: 0xFF},
		theme.ColorNameDisabled:          color.NRGBA{R: 0x59, G: 0x5D, B: 0x65, A: 0xFF},
		theme.ColorNameInputBorder:       color.NRGBA{R: 0xCF, G: 0xCA, B: 0xC1, A: 0xFF},
		// The porch-light amber darkened until it reads as text on the light
		// backgrounds, and white reads on it.
		theme.ColorNamePrimary:             amberText,
		theme.ColorNameForegroundOnPrimary: color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xFF},
		theme.ColorNameFocus:               color.NRGBA{R: 0xC9, G: 0x74, B: 0x12, A: 0x7F},
		theme.ColorNameSelection:           color.NRGBA{R: 0xC9, G: 0x74, B: 0x12, A: 0x33},
		theme.ColorNameSuccess:             color.NRGBA{R: 0x1F, G: 0x6B, B: 0x3F, A: 0xFF},
		theme.ColorNameError:               color.NRGBA{R: 0xB0, G: 0x28, B: 0x1E, A: 0xFF},
		theme.ColorNameWarning:             amberText,
	}
)

func (t *porchTheme) variant(v fyne.ThemeVariant) fyne.ThemeVariant {
	switch t.choice {
	case ThemeLight:
		return theme.VariantLight
	case ThemeDark:
		return theme.VariantDark
	}
	return v
}

func (t *porchTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	v = t.variant(v)
	shades := lightShades
	if v == theme.VariantDark {
		shades = darkShades
	}
	if c, ok := shades[n]; ok {
		return c
	}
	return theme.DefaultTheme().Color(n, v)
}

func (t *porchTheme) Font(s fyne.TextStyle) fyne.Resource { return theme.DefaultTheme().Font(s) }

func (t *porchTheme) Icon(n fyne.ThemeIconName) fyne.Resource { return theme.DefaultTheme().Icon(n) }

func (t *porchTheme) Size(n fyne.ThemeSizeName) float32 {
	switch n {
	case theme.SizeNameSeparatorThickness:
		return 1
	case theme.SizeNameInputRadius, theme.SizeNameSelectionRadius:
		return 6
	}
	return theme.DefaultTheme().Size(n)
}

// statusColor is the dot colour of a scene state.
func statusColor(s Scene) color.Color {
	switch {
	case s.Phase == PhaseRefused:
		return errRed
	case s.Phase == PhaseDraft:
		if s.Problem != "" {
			return amber
		}
		return idleGrey
	case s.Phase == PhasePreparing:
		return runBlue
	}
	switch s.Summary.Status {
	case "completed":
		return okGreen
	case "failed", "expired":
		return errRed
	case "cancelled":
		return idleGrey
	case "running":
		return amber
	}
	return runBlue
}
