package catalog

import (
	"strings"
	"testing"
)

// The type word in a refusal takes its article: "an integer", "a number".
func TestTypeRefusalsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ name, raw, want string }{
		{"quality", `"high"`, "quality: must be an integer"},
		{"quality", `1e400`, "quality: must be an integer"},
		{"threshold", `"low"`, "threshold: must be a number"},
	} {
		_, err := decode1(c.name, c.raw)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.name, c.raw, err, c.want)
		}
	}
	if _, err := DecodeStrings(map[string]string{"quality": "high"}); err == nil || !strings.Contains(err.Error(), "must be an integer") {
		t.Errorf("quality=high from text: %v", err)
	}
}
