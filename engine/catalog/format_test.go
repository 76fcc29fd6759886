package catalog

import "testing"

func TestFormatExtCoversEveryFormat(t *testing.T) {
	want := map[string]string{"jpeg": ".jpg", "png": ".png", "webp": ".webp"}
	p, ok := Param{}, false
	for _, q := range Params() {
		if q.Name == "format" {
			p, ok = q, true
		}
	}
	if !ok {
		t.Fatal("no format option in the table")
	}
	for _, f := range p.Enum {
		if got, w := FormatExt(f), want[f]; w == "" || got != w {
			t.Errorf("FormatExt(%q) = %q, want %q", f, got, w)
		}
	}
}
