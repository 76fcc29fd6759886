package hotfolder

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// placeholders are the names a naming template may use.
var placeholders = []string{"name", "scene", "date", "index"}

// maxStem bounds an output name without its extension and suffix, so that the
// suffix, the extension and ".json" still fit the usual 255-byte limit.
const maxStem = 200

// checkTemplate refuses unknown placeholders and unbalanced braces.
func checkTemplate(t string) error {
	_, err := expand(t, nameFields{Name: "x", Scene: "x", Index: 1})
	return err
}

// nameFields are the values a naming template is filled with.
type nameFields struct {
	Name  string    // first input's stem
	Scene string    // the scene's label
	Date  time.Time // when the scene was formed
	Index int       // the scene's number in its folder
}

// expand fills template t.
func expand(t string, f nameFields) (string, error) {
	var b strings.Builder
	for i := 0; i < len(t); {
		switch t[i] {
		case '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q has a { without its }", t)
			}
			key := t[i+1 : i+end]
			switch key {
			case "name":
				b.WriteString(f.Name)
			case "scene":
				b.WriteString(f.Scene)
			case "date":
				b.WriteString(f.Date.Local().Format("2006-01-02"))
			case "index":
				b.WriteString(fmt.Sprintf("%04d", f.Index))
			default:
				return "", fmt.Errorf("%q uses {%s}; the placeholders are {%s}", t, key, strings.Join(placeholders, "}, {"))
			}
			i += end + 1
		case '}':
			return "", fmt.Errorf("%q has a } without its {", t)
		default:
			b.WriteByte(t[i])
			i++
		}
	}
	return b.String(), nil
}

// outputStem is the output name without extension for a scene: the template filled
// and made safe as one file name.
func outputStem(template string, f nameFields) string {
	s, err := expand(template, f)
	if err != nil { // checked at start; a template cannot break later
		s = f.Name
	}
	return safeName(s, fmt.Sprintf("scene-%04d", f.Index))
}

// safeName turns s into one file name: path separators and control characters
// become '_', leading dots and surrounding spaces go (no hidden results), and the
// length is bounded. An empty result becomes fallback.
func safeName(s, fallback string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == 0:
			return '_'
		case unicode.IsControl(r):
			return '_'
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_' // refused by Windows shares
		}
		return r
	}, s)
	s = strings.TrimLeft(strings.TrimSpace(s), ".")
	s = strings.TrimSpace(s)
	for len(s) > maxStem {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" {
		return fallback
	}
	return s
}

// candidate is the n-th name tried for stem+ext: "stem.ext", then "stem-2.ext",
// "stem-3.ext" and so on.
func candidate(stem, ext string, n int) string {
	if n <= 1 {
		return stem + ext
	}
	return stem + "-" + strconv.Itoa(n) + ext
}

// stemOf is a file name without its directory and extension.
func stemOf(p string) string {
	b := filepath.Base(p)
	return strings.TrimSuffix(b, filepath.Ext(b))
}
