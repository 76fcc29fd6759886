package hotfolder

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDecodeFullEntry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cs, err := Decode([]map[string]any{{
		"Name":      "Listings",
		"input":     filepath.Join(root, "in"),
		"output":    filepath.Join(root, "out"),
		"options":   map[string]any{"quality": 80, "perspective": "true", "sky_style": "clear", "categories": []any{"license plate"}},
		"preset":    "signature",
		"grouping":  "count:3",
		"naming":    "{date}_{index}_{name}",
		"originals": "leave",
		"errors":    filepath.Join(root, "failed"),
		"enabled":   "false",
		"sidecar":   false,
		"settle":    "500ms",
		"rescan":    10,
		"max_wait":  1.5,
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	switch {
	case c.Name != "Listings", c.Grouping != GroupCount || c.Count != 3, c.Originals != OriginalsLeave,
		c.Enabled, c.Sidecar, c.Settle != 500*time.Millisecond, c.Quiet != 500*time.Millisecond,
		c.Rescan != 10*time.Second, c.MaxWait != 1500*time.Millisecond,
		c.Done != filepath.Join(root, "in", DefaultDone), c.Errors != filepath.Join(root, "failed"):
		t.Fatalf("decoded: %+v", c)
	}
	o := c.Options
	if *o.Quality != 80 || !*o.Perspective || *o.SkyStyle != "clear" || o.Categories[0] != "license plate" ||
		!*o.Tonecraft || *o.TonecraftProfile != "signature" {
		t.Fatalf("options: %+v", o)
	}
	if c.format != "jpeg" {
		t.Fatalf("format %q", c.format)
	}
}

func TestDecodeDefaults(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cs, err := Decode([]map[string]any{{"input": filepath.Join(root, "drop"), "output": filepath.Join(root, "out")}})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if c.Name != "drop" || c.Grouping != GroupAuto || c.Naming != DefaultNaming || c.Originals != OriginalsMove ||
		!c.Enabled || !c.Sidecar || c.Settle != DefaultSettle || c.Rescan != DefaultRescan ||
		c.Errors != filepath.Join(root, "drop", DefaultErrors) {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestDecodeErrorsNameEntryAndKey(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	ok := map[string]any{"input": in, "output": out}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"input": filepath.Join(root, "other"), "output": out}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		entries []map[string]any
		want    string
	}{
		{[]map[string]any{{"output": out}}, "hotfolders[0].input: is required"},
		{[]map[string]any{ok, with("options", map[string]any{"quality": 300})}, "hotfolders[1].options.quality: must be between 1 and 100"},
		{[]map[string]any{with("options", map[string]any{"qualty": 90})}, "hotfolders[0].options.qualty: unknown order option"},
		{[]map[string]any{with("options", map[string]any{"sky": "maybe"})}, "hotfolders[0].options.sky: must be a boolean"},
		{[]map[string]any{with("options", map[string]any{"gen_edit": "magic_eraser"})}, "hotfolders[0].options.gen_edit: magic_eraser needs a mask"},
		{[]map[string]any{with("options", map[string]any{"staging_style": "keep"})}, "hotfolders[0].options."},
		{[]map[string]any{with("inptu", "x")}, "hotfolders[0].inptu: unknown key"},
		{[]map[string]any{with("grouping", "count:10")}, "hotfolders[0].grouping: count:N takes N from 1 to 9"},
		{[]map[string]any{with("grouping", "by-date")}, "hotfolders[0].grouping: must be auto, count:N or subfolder"},
		{[]map[string]any{with("originals", "keep")}, "hotfolders[0].originals: must be leave, move or delete"},
		{[]map[string]any{with("preset", "nope")}, "hotfolders[0].preset: unknown tonecraft preset \"nope\"; presets: signature"},
		{[]map[string]any{with("preset", "signature", "options", map[string]any{"tonecraft": false})}, "hotfolders[0].preset: selects a tonecraft look"},
		{[]map[string]any{with("naming", "{room}")}, "hotfolders[0].naming: \"{room}\" uses {room}"},
		{[]map[string]any{with("naming", "{name")}, "hotfolders[0].naming:"},
		{[]map[string]any{with("settle", "-1s")}, "hotfolders[0].settle: must be positive"},
		{[]map[string]any{with("settle", "soon")}, "hotfolders[0].settle: must be a duration"},
		{[]map[string]any{with("enabled", "perhaps")}, "hotfolders[0].enabled: must be true or false"},
		{[]map[string]any{with("output", filepath.Join(root, "other"))}, "hotfolders[0].output: is the input folder"},
		{[]map[string]any{ok, {"input": filepath.Join(root, "b", "in"), "output": out, "name": "in"}}, "hotfolders[1].name: \"in\" is also hotfolders[0]'s name"},
		{[]map[string]any{ok, {"input": filepath.Join(in, "sub"), "output": out}}, "hotfolders[1].input:"},
		{[]map[string]any{ok, {"input": filepath.Join(root, "x"), "output": filepath.Join(in, "results")}}, "hotfolders[1].output:"},
	} {
		_, err := Decode(tc.entries)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("entries %v:\n got %v\nwant %q", tc.entries, err, tc.want)
		}
	}
}

func TestTemplateAndNames(t *testing.T) {
	t.Parallel()
	f := nameFields{Name: "IMG_0001", Scene: "kitchen", Date: time.Date(2025, 3, 1, 12, 0, 0, 0, time.Local), Index: 7}
	got, err := expand("{date}-{index}-{scene}-{name}", f)
	if err != nil || got != "2025-03-01-0007-kitchen-IMG_0001" {
		t.Fatalf("expand: %q %v", got, err)
	}
	if s := outputStem("{scene}/../{name}", f); s != "kitchen_.._IMG_0001" {
		t.Fatalf("a template cannot leave the output folder: %q", s)
	}
	if s := outputStem("...", f); s != "scene-0007" {
		t.Fatalf("an empty name falls back: %q", s)
	}
	if s := safeName(strings.Repeat("é", 300), "x"); len(s) > maxStem {
		t.Fatalf("name of %d bytes", len(s))
	}
	if candidate("a", ".jpg", 1) != "a.jpg" || candidate("a", ".jpg", 3) != "a-3.jpg" {
		t.Fatal("candidate names")
	}
}
