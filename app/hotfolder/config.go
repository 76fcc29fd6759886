package hotfolder

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Grouping modes.
const (
	GroupAuto      = "auto"      // engine/grouping: folder, capture time, exposure, look
	GroupCount     = "count"     // N consecutive files in name order
	GroupSubfolder = "subfolder" // each subfolder of the input is one scene
)

// What happens to the input files of a scene that completed.
const (
	OriginalsLeave  = "leave"  // stay where they are; the journal remembers them
	OriginalsMove   = "move"   // go to the done folder
	OriginalsDelete = "delete" // are removed
)

// Defaults of Config.
const (
	DefaultNaming  = "{name}"
	DefaultSettle  = 2 * time.Second
	DefaultRescan  = 30 * time.Second
	DefaultMaxWait = 2 * time.Minute
	DefaultDone    = "_done"
	DefaultErrors  = "_errors"
)

// Config is one hot folder.
type Config struct {
	// Name identifies the folder in the status and the journal (default: the input
	// folder's base name); names are unique.
	Name   string
	Input  string // watched folder (absolute)
	Output string // where results go (absolute)
	// Options are the order options of every scene, as in the API. A Preset sets
	// tonecraft and tonecraft_profile on top of them.
	Options core.Options
	Preset  string
	// Grouping is GroupAuto, GroupCount (with Count files per scene) or GroupSubfolder.
	Grouping string
	Count    int
	// Naming is the output name template: {name} (first input's stem), {scene}
	// (the subfolder with subfolder grouping, else the first input's stem), {date}
	// (YYYY-MM-DD the scene was formed, local time) and {index} (the scene's
	// number in this folder, 4 digits). The extension follows the format.
	Naming    string
	Originals string
	Done      string // folder for the originals of completed scenes with Originals move
	Errors    string // folder for the inputs of failed scenes and their error reports
	Enabled   bool
	Sidecar   bool // a JSON file beside each output describing the scene
	// Settle is how long a file's size and mtime must stay unchanged before it is
	// taken; Quiet is how long the folder must see no change before scenes are
	// formed (default Settle); MaxWait bounds how long a folder that never goes quiet
	// holds settled files back; Rescan is the period of the full rescan that backs up
	// file-system notifications (and of the check for a vanished folder's return when
	// shorter than Settle).
	Settle  time.Duration
	Quiet   time.Duration
	MaxWait time.Duration
	Rescan  time.Duration

	format string // resolved delivery format, for the output extension
}

// keys are the accepted entry keys, for the unknown-key error.
var entryKeys = []string{"name", "input", "output", "options", "preset", "grouping", "naming",
	"originals", "done", "errors", "enabled", "sidecar", "settle", "quiet", "max_wait", "rescan"}

// Decode reads the `hotfolders` entries of the configuration (as viper hands them
// over) into checked configs. Errors name the entry and key
// ("hotfolders[1].options.quality: must be between 1 and 100, got 300").
func Decode(entries []map[string]any) ([]Config, error) {
	out := make([]Config, 0, len(entries))
	for i, e := range entries {
		c, err := decodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("hotfolders[%d].%w", i, err)
		}
		out = append(out, c)
	}
	if err := checkSet(out); err != nil {
		return nil, err
	}
	return out, nil
}

// fieldError is an error about one key of an entry; Decode prefixes the entry.
type fieldError struct {
	field  string
	reason string
}

func (e *fieldError) Error() string { return e.field + ": " + e.reason }

func bad(field, format string, args ...any) error {
	return &fieldError{field: field, reason: fmt.Sprintf(format, args...)}
}

func decodeEntry(m map[string]any) (Config, error) {
	c := Config{Enabled: true, Sidecar: true, Naming: DefaultNaming, Grouping: GroupAuto, Originals: OriginalsMove}
	lower := make(map[string]any, len(m))
	for k, v := range m {
		lower[strings.ToLower(k)] = v
	}
	names := make([]string, 0, len(lower))
	for k := range lower {
		names = append(names, k)
	}
	slices.Sort(names)
	var err error
	for _, k := range names {
		v := lower[k]
		switch k {
		case "name":
			c.Name, err = str(k, v)
		case "input":
			c.Input, err = path(k, v)
		case "output":
			c.Output, err = path(k, v)
		case "done":
			c.Done, err = path(k, v)
		case "errors":
			c.Errors, err = path(k, v)
		case "options":
			c.Options, err = decodeOptions(v)
		case "preset":
			c.Preset, err = str(k, v)
		case "grouping":
			var g string
			if g, err = str(k, v); err == nil {
				c.Grouping, c.Count, err = parseGrouping(g)
			}
		case "naming":
			c.Naming, err = str(k, v)
		case "originals":
			c.Originals, err = str(k, v)
			if err == nil && !slices.Contains([]string{OriginalsLeave, OriginalsMove, OriginalsDelete}, c.Originals) {
				err = bad(k, "must be leave, move or delete, got %q", c.Originals)
			}
		case "enabled":
			c.Enabled, err = boolean(k, v)
		case "sidecar":
			c.Sidecar, err = boolean(k, v)
		case "settle":
			c.Settle, err = duration(k, v)
		case "quiet":
			c.Quiet, err = duration(k, v)
		case "max_wait":
			c.MaxWait, err = duration(k, v)
		case "rescan":
			c.Rescan, err = duration(k, v)
		default:
			err = bad(k, "unknown key; known keys: %s", strings.Join(entryKeys, ", "))
		}
		if err != nil {
			return Config{}, err
		}
	}
	if err := c.check(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// check fills the defaults and validates one entry; Decode and New call it.
func (c *Config) check() error {
	if c.Input == "" {
		return bad("input", "is required: the folder to watch")
	}
	if c.Output == "" {
		return bad("output", "is required: the folder results are written to")
	}
	for _, p := range []struct {
		field string
		v     *string
	}{{"input", &c.Input}, {"output", &c.Output}, {"done", &c.Done}, {"errors", &c.Errors}} {
		if *p.v == "" {
			continue
		}
		abs, err := absPath(*p.v)
		if err != nil {
			return bad(p.field, "%v", err)
		}
		*p.v = abs
	}
	if c.Input == c.Output {
		return bad("output", "is the input folder; results must go to another folder")
	}
	if within(c.Input, c.Output) {
		return bad("input", "is inside the output folder %s; the input must not be below the output", c.Output)
	}
	if c.Done == "" {
		c.Done = filepath.Join(c.Input, DefaultDone)
	}
	if c.Errors == "" {
		c.Errors = filepath.Join(c.Input, DefaultErrors)
	}
	if c.Done == c.Input {
		return bad("done", "is the input folder")
	}
	if c.Errors == c.Input {
		return bad("errors", "is the input folder")
	}
	if c.Name == "" {
		c.Name = filepath.Base(c.Input)
	}
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" || strings.ContainsAny(c.Name, "\x00/\\") {
		return bad("name", "must be non-empty text without slashes")
	}
	switch c.Grouping {
	case "":
		c.Grouping = GroupAuto
	case GroupAuto, GroupSubfolder:
	case GroupCount:
		if c.Count < 1 || c.Count > engine.MaxBrackets {
			return bad("grouping", "count:N takes N from 1 to %d", engine.MaxBrackets)
		}
	default:
		return bad("grouping", "must be auto, count:N or subfolder, got %q", c.Grouping)
	}
	if c.Originals == "" {
		c.Originals = OriginalsMove
	}
	if c.Naming == "" {
		c.Naming = DefaultNaming
	}
	if err := checkTemplate(c.Naming); err != nil {
		return bad("naming", "%v", err)
	}
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.Quiet <= 0 {
		c.Quiet = c.Settle
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MaxWait < c.Quiet {
		c.MaxWait = c.Quiet
	}
	if c.Rescan <= 0 {
		c.Rescan = DefaultRescan
	}
	c.Options = catalog.CorrectionsOn(c.Options) // hot folders deliver listing photos
	if err := c.applyPreset(); err != nil {
		return err
	}
	return c.checkOptions()
}

// applyPreset turns `preset` into tonecraft options. It names a tonecraft profile
// (GET /v1/presets?feature=tonecraft): the look that a studio most often wants on
// every photo of a folder. Staging presets go in options.staging_preset.
func (c *Config) applyPreset() error {
	if c.Preset == "" {
		return nil
	}
	if _, ok := catalog.LookupPreset(catalog.PresetsTonecraft, c.Preset); !ok {
		return bad("preset", "unknown tonecraft preset %q; presets: %s", c.Preset,
			strings.Join(catalog.PresetKeys(catalog.PresetsTonecraft), ", "))
	}
	if t := c.Options.Tonecraft; t != nil && !*t {
		return bad("preset", "selects a tonecraft look, but options.tonecraft is false")
	}
	if p := c.Options.TonecraftProfile; p != nil && *p != c.Preset {
		return bad("preset", "is %q but options.tonecraft_profile is %q; set one of them", c.Preset, *p)
	}
	on, profile := true, c.Preset
	c.Options.Tonecraft, c.Options.TonecraftProfile = &on, &profile
	return nil
}

// checkOptions validates the order options as an order would be: every value, the
// cross-field rules and the preset keys. Options that need a per-photo input (the
// magic eraser's mask) cannot come from a folder.
func (c *Config) checkOptions() error {
	if err := catalog.Validate(c.Options); err != nil {
		return core.WithPrefix("options", err)
	}
	if c.Options.Mask != nil {
		return bad("options.mask", "cannot be set for a hot folder: a mask belongs to one photo")
	}
	if g := c.Options.GenEdit; g != nil && *g == catalog.GenMagicEraser {
		return bad("options.gen_edit", "magic_eraser needs a mask drawn for each photo; it cannot run from a hot folder")
	}
	r, err := catalog.Resolve(c.Options, false)
	if err != nil {
		return core.WithPrefix("options", err)
	}
	c.format = r.Format
	return nil
}

// checkSet checks what involves several entries: unique names and inputs that are
// neither shared nor nested, outputs outside every other input.
func checkSet(cs []Config) error {
	for i := range cs {
		for j := range i {
			a, b := cs[j], cs[i]
			switch {
			case a.Name == b.Name:
				return fmt.Errorf("hotfolders[%d].name: %q is also hotfolders[%d]'s name; set a distinct name", i, b.Name, j)
			case a.Input == b.Input:
				return fmt.Errorf("hotfolders[%d].input: %s is also watched by hotfolders[%d]", i, b.Input, j)
			case within(a.Input, b.Input) || within(b.Input, a.Input):
				return fmt.Errorf("hotfolders[%d].input: %s and hotfolders[%d].input %s are nested", i, b.Input, j, a.Input)
			}
		}
		for j := range cs {
			if j != i && (cs[i].Output == cs[j].Input || within(cs[j].Input, cs[i].Output)) {
				return fmt.Errorf("hotfolders[%d].output: %s is inside hotfolders[%d]'s input; results would be imported again", i, cs[i].Output, j)
			}
		}
	}
	return nil
}

// within reports whether p lies strictly below dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func parseGrouping(g string) (string, int, error) {
	g = strings.ToLower(strings.TrimSpace(g))
	if n, ok := strings.CutPrefix(g, "count:"); ok {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v < 1 || v > engine.MaxBrackets {
			return "", 0, bad("grouping", "count:N takes N from 1 to %d, got %q", engine.MaxBrackets, n)
		}
		return GroupCount, v, nil
	}
	switch g {
	case GroupAuto, GroupSubfolder:
		return g, 0, nil
	}
	return "", 0, bad("grouping", "must be auto, count:N or subfolder, got %q", g)
}

// decodeOptions reads the options map as the API reads a request body: every key
// must be an order option; text values (as environment variables give them) are
// read as flags are.
func decodeOptions(v any) (core.Options, error) {
	if v == nil {
		return core.Options{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		if mi, isMI := v.(map[any]any); isMI {
			m = make(map[string]any, len(mi))
			for k, x := range mi {
				m[fmt.Sprint(k)] = x
			}
		} else {
			return core.Options{}, bad("options", "must be a map of order options, got %T", v)
		}
	}
	fields := map[string]json.RawMessage{}
	texts := map[string]string{}
	for k, x := range m {
		k = strings.ToLower(k)
		if _, ok := catalog.LookupParam(k); !ok {
			return core.Options{}, bad("options."+k, "unknown order option")
		}
		if s, isText := x.(string); isText {
			if p, _ := catalog.LookupParam(k); p.Type != catalog.TypeString && p.Type != catalog.TypeEnum && p.Type != catalog.TypeUUID {
				texts[k] = s
				continue
			}
		}
		raw, err := json.Marshal(x)
		if err != nil {
			return core.Options{}, bad("options."+k, "is not a plain value: %v", err)
		}
		fields[k] = raw
	}
	fromJSON, err := catalog.DecodeOptions(fields)
	if err != nil {
		return core.Options{}, core.WithPrefix("options", err)
	}
	fromText, err := catalog.DecodeStrings(texts)
	if err != nil {
		return core.Options{}, core.WithPrefix("options", err)
	}
	return catalog.Merge(fromJSON, fromText), nil
}

func str(field string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x), nil
	case nil:
		return "", nil
	}
	return "", bad(field, "must be text, got %v", v)
}

func path(field string, v any) (string, error) {
	s, err := str(field, v)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", bad(field, "is empty")
	}
	return s, nil
}

func absPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %w", err)
		}
		p = filepath.Join(home, p[1:])
	}
	return filepath.Abs(p)
}

func boolean(field string, v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err == nil {
			return b, nil
		}
	}
	return false, bad(field, "must be true or false, got %v", v)
}

// duration reads "2s", "1m30s" or a number of seconds.
func duration(field string, v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
			f, ferr := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if ferr != nil {
				return 0, bad(field, "must be a duration such as 2s or 500ms, got %q", x)
			}
			d = seconds(f)
		}
	case int:
		d = seconds(float64(x))
	case int64:
		d = seconds(float64(x))
	case float64:
		d = seconds(x)
	case time.Duration:
		d = x
	default:
		return 0, bad(field, "must be a duration such as 2s or 500ms, got %v", v)
	}
	if d <= 0 {
		return 0, bad(field, "must be positive, got %v", v)
	}
	return d, nil
}

func seconds(f float64) time.Duration {
	if math.IsNaN(f) || f > 1e9 {
		return -1
	}
	return time.Duration(f * float64(time.Second))
}
