package catalog

import "strings"

// conceptAliases maps normalised spellings to the canonical privacy concepts. The
// privacy step detects exactly these three concepts; anything else is refused rather
// than silently ignored, because a client asking to blur "street signs" must learn
// that nothing will blur them.
var conceptAliases = map[string]string{
	"human face":       "human face",
	"human faces":      "human face",
	"face":             "human face",
	"faces":            "human face",
	"license plate":    "license plate",
	"license plates":   "license plate",
	"licence plate":    "license plate",
	"licence plates":   "license plate",
	"number plate":     "license plate",
	"number plates":    "license plate",
	"photo or frame":   "photo or frame",
	"photos or frames": "photo or frame",
	"photo frame":      "photo or frame",
	"photo frames":     "photo or frame",
	"picture frame":    "photo or frame",
	"picture frames":   "photo or frame",
}

// Concept returns the canonical name of a privacy concept. Matching ignores case,
// surrounding and repeated white space, and treats '_' and '-' as spaces, so
// "License_Plate" and " human  FACE " are accepted; plural forms and the British
// "licence" are accepted too.
func Concept(s string) (string, bool) {
	s = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return ' '
		}
		return r
	}, strings.ToLower(s))
	c, ok := conceptAliases[strings.Join(strings.Fields(s), " ")]
	return c, ok
}
