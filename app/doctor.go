package app

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gen2brain/heic"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/adapters"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
	"github.com/porchlight/porchlight/engine/imaging/privacy"
	"github.com/porchlight/porchlight/engine/store"
)

// doctorSampleHEIC is a 64×48 synthetic gradient encoded as HEIC (524 bytes): HEIC
// cannot be encoded here, so the check decodes this one.
//
//go:embed doctor_sample.heic
var doctorSampleHEIC []byte

// checkStatus is the verdict of one check.
type checkStatus int

const (
	checkOK   checkStatus = iota
	checkNote             // worth knowing, nothing to fix
	checkWarn             // Porchlight works, but something should be fixed (Fix says how)
	checkFail             // Porchlight will not work fully until it is fixed
)

func (s checkStatus) String() string {
	switch s {
	case checkOK:
		return "ok"
	case checkNote:
		return "note"
	case checkWarn:
		return "warn"
	}
	return "FAIL"
}

// checkResult is one line of the doctor's report.
type checkResult struct {
	Name   string
	Status checkStatus
	Detail string // what was found
	Fix    string // what to do about it, when Status is checkFail
}

// doctorOptions bound the network checks.
type doctorOptions struct {
	timeout time.Duration // one backend or /healthz request
}

func newDoctorCommand(g *globalFlags) *cobra.Command {
	var opt doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the installation and say what to fix",
		Long: "doctor checks the decoders (JPEG, WebP, camera RAW, HEIC), the privacy models, the\n" +
			"configuration, the data dir and database, the API's listen address, the model\n" +
			"backends and the hot folders. It exits 0 when everything works and 1 otherwise.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext()
			defer stop()
			results := runDoctor(ctx, cmd, g, opt)
			if failed := printDoctor(cmd.OutOrStdout(), results); failed > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().String("listen", "", "API listen address to check (PORCHLIGHT_LISTEN, default 127.0.0.1:8787)")
	cmd.Flags().DurationVar(&opt.timeout, "timeout", 3*time.Second, "how long to wait for each backend and for a running server")
	return cmd
}

// runDoctor runs every check. The checks that need the configuration are skipped
// when it does not load.
func runDoctor(ctx context.Context, cmd *cobra.Command, g *globalFlags, opt doctorOptions) []checkResult {
	if opt.timeout <= 0 {
		opt.timeout = 3 * time.Second
	}
	var out []checkResult
	out = append(out, checkJPEG(), checkWebP(), checkRaw(), checkHEIC(), checkPrivacyModels())

	cfg, err := load(cmd, g)
	if err != nil {
		return append(out, checkResult{Name: "config", Status: checkFail, Detail: err.Error(),
			Fix: "correct the file (the message names the key), or point --config at another one; " +
				"the other checks need a configuration that loads"})
	}
	cfgLine := checkResult{Name: "config", Status: checkOK, Detail: "read " + cfg.File}
	if cfg.File == "" {
		cfgLine.Detail = "no config file; using the defaults"
		if f := DefaultConfigFile(); f != "" {
			cfgLine.Detail += " (" + f + " would be read)"
		}
	}
	out = append(out, cfgLine)
	if r, ok := checkConfigAccess(cfg.File); ok {
		out = append(out, r)
	}

	client := &http.Client{Timeout: opt.timeout}
	server := probeServer(ctx, client, cfg.Listen)
	out = append(out, checkDataDir(cfg.DataDir), checkDatabase(cfg.DataDir), checkListen(cfg.Listen, server))
	out = append(out, checkBackends(ctx, client, cfg)...)
	out = append(out, checkBackendNames(ctx, cfg, opt.timeout)...)
	out = append(out, checkHotfolders(cfg)...)
	return out
}

// doctorWidth is the width the report wraps to on a terminal: $COLUMNS when set,
// else 100. Written to a file or a pipe (0) it does not wrap, so each check stays
// one line for grep.
func doctorWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}

// wrapWords breaks s into lines of at most width characters at spaces; a word
// longer than width (a path, a URL) gets a line of its own.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// printDoctor writes the report and returns how many checks failed. Warnings
// show their fix but do not count as failures. The name column is as wide as the
// longest name (a backend's or hot folder's name is the user's), and details and
// fixes wrap in their column within doctorWidth.
func printDoctor(w io.Writer, results []checkResult) int {
	return printDoctorWidth(w, results, doctorWidth(w))
}

// printDoctorWidth is printDoctor wrapping to width (0: no wrapping).
func printDoctorWidth(w io.Writer, results []checkResult, width int) int {
	nameW := 16
	for _, r := range results {
		nameW = max(nameW, len(r.Name))
	}
	indent := strings.Repeat(" ", 4+2+nameW+1)
	textW := 1 << 30
	if width > 0 {
		textW = max(width-len(indent), 30)
	}
	failed, warned := 0, 0
	for _, r := range results {
		lines := wrapWords(r.Detail, textW)
		fmt.Fprintf(w, "%-4s  %-*s %s\n", r.Status, nameW, r.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%s%s\n", indent, l)
		}
		if r.Status == checkFail || r.Status == checkWarn {
			if r.Status == checkFail {
				failed++
			} else {
				warned++
			}
			if r.Fix != "" {
				for _, l := range wrapWords("fix: "+r.Fix, textW) {
					fmt.Fprintf(w, "%s%s\n", indent, l)
				}
			}
		}
	}
	switch {
	case failed == 0 && warned > 0:
		fmt.Fprintf(w, "\nEverything Porchlight needs is in place, but see the %s above.\n", plural(warned, "warning"))
	case failed == 0:
		fmt.Fprintln(w, "\nEverything Porchlight needs is in place.")
	case failed == 1:
		fmt.Fprintln(w, "\n1 problem found; see the fix above.")
	default:
		fmt.Fprintf(w, "\n%d problems found; see the fixes above.\n", failed)
	}
	return failed
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// checkConfigAccess looks at who may read the config file when it holds secrets
// (admin_key, a backend's api_key): anyone who can read it can act as that admin
// key. It reports false when there is no file or nothing secret in it.
func checkConfigAccess(file string) (checkResult, bool) {
	r := checkResult{Name: "config access"}
	if file == "" {
		return r, false
	}
	st, err := os.Stat(file)
	if err != nil {
		return r, false
	}
	secrets := configSecrets(file)
	if len(secrets) == 0 {
		return r, false
	}
	held := strings.Join(secrets, ", ")
	perm := st.Mode().Perm()
	var who []string
	if perm&0o070 != 0 {
		who = append(who, "its group")
	}
	if perm&0o007 != 0 {
		who = append(who, "all users")
	}
	if len(who) == 0 {
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s holds %s and only its owner can read it", file, held)
		return r, true
	}
	r.Status = checkWarn
	r.Detail = fmt.Sprintf("%s holds %s and %s can read it (mode %04o)", file, held, strings.Join(who, " and "), perm)
	r.Fix = "chmod 600 " + shellQuote(file)
	return r, true
}

// configSecrets names the secrets the config file itself holds (not the
// environment's): admin_key and each backend's api_key.
func configSecrets(file string) []string {
	v := viper.New()
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return nil
	}
	var out []string
	if v.GetString("admin_key") != "" {
		out = append(out, "admin_key")
	}
	names := make([]string, 0)
	for name := range v.GetStringMap("backends") {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v.GetString("backends."+name+".api_key") != "" {
			out = append(out, "backends."+name+".api_key")
		}
	}
	return out
}

// shellQuote quotes a path for a command to copy and paste.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doctorSample is a small colour gradient: a real photo would say no more about
// whether a library is loaded and decodes.
func doctorSample() *imaging.Image {
	img := imaging.New(48, 32, 3)
	for y := 0; y < 32; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < 48; x++ {
			row[x*3+0] = float32(x) / 47
			row[x*3+1] = float32(y) / 31
			row[x*3+2] = 0.25
		}
	}
	return img
}

// roundTrip encodes the sample in format and decodes it again, checking that the
// pixels come back close to what went in.
func roundTrip(format string) error {
	src := doctorSample()
	var buf bytes.Buffer
	if err := codec.Encode(&buf, src, codec.EncodeOptions{Format: format, Quality: 95}); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	got, _, err := codec.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), codec.DecodeOptions{})
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if got.W() != src.W() || got.H() != src.H() {
		return fmt.Errorf("decoded %dx%d, encoded %dx%d", got.W(), got.H(), src.W(), src.H())
	}
	if d := meanAbsDiff(src, got); d > 0.03 {
		return fmt.Errorf("decoded pixels differ from the encoded ones by %.3f on average", d)
	}
	return nil
}

// meanAbsDiff compares the first three channels of two images of one size.
func meanAbsDiff(a, b *imaging.Image) float64 {
	var sum float64
	n := 0
	for y := 0; y < a.H(); y++ {
		ra, rb := a.Pix[y*a.Stride:], b.Pix[y*b.Stride:]
		for x := 0; x < a.W(); x++ {
			for c := 0; c < 3; c++ {
				sum += math.Abs(float64(ra[x*a.C+c] - rb[x*b.C+c]))
				n++
			}
		}
	}
	return sum / float64(n)
}

func checkJPEG() checkResult {
	if err := roundTrip("jpeg"); err != nil {
		return checkResult{Name: "jpeg", Status: checkFail, Detail: "libjpeg-turbo: " + err.Error(),
			Fix: "install libturbojpeg0 (sudo apt-get install libturbojpeg0), or reinstall the porchlight package"}
	}
	return checkResult{Name: "jpeg", Status: checkOK, Detail: "libjpeg-turbo encodes and decodes"}
}

func checkWebP() checkResult {
	if err := roundTrip("webp"); err != nil {
		return checkResult{Name: "webp", Status: checkFail, Detail: "libwebp: " + err.Error(),
			Fix: "install libwebp7 (sudo apt-get install libwebp7), or reinstall the porchlight package"}
	}
	return checkResult{Name: "webp", Status: checkOK, Detail: "libwebp encodes and decodes"}
}

// checkRaw asks LibRaw, in its worker process, to open a file that is not a camera
// RAW: an answer from LibRaw proves the worker starts and the library loads.
func checkRaw() checkResult {
	fail := func(detail string) checkResult {
		return checkResult{Name: "camera raw", Status: checkFail, Detail: detail,
			Fix: "install libraw20 (sudo apt-get install libraw20), and make sure this program may start itself again (the LibRaw worker is this executable)"}
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("cannot find this executable to start the LibRaw worker: " + err.Error())
	}
	if st, err := os.Stat(exe); err != nil || st.Mode()&0o111 == 0 {
		return fail(fmt.Sprintf("the LibRaw worker %s cannot be started", exe))
	}
	_, err = raw.Probe([]byte("porchlight doctor: this is not a camera raw file, LibRaw must say so"))
	var le *raw.Error
	switch {
	case errors.As(err, &le) && le.Unsupported():
		return checkResult{Name: "camera raw", Status: checkOK, Detail: "the LibRaw worker starts and answers"}
	case errors.Is(err, raw.ErrCrashed):
		return fail("the LibRaw worker died before answering")
	case err == nil:
		return fail("LibRaw accepted a file that is not a camera raw")
	}
	return fail("the LibRaw worker failed: " + err.Error())
}

func checkHEIC() checkResult {
	lib := "libheif from the system"
	if heic.Dynamic() != nil {
		lib = "built-in libheif (WebAssembly)"
	}
	img, _, err := codec.Decode(bytes.NewReader(doctorSampleHEIC), int64(len(doctorSampleHEIC)), codec.DecodeOptions{})
	if err == nil && (img.W() != 64 || img.H() != 48) {
		err = fmt.Errorf("decoded %dx%d, want 64x48", img.W(), img.H())
	}
	if err != nil {
		return checkResult{Name: "heic", Status: checkFail, Detail: lib + ": " + err.Error(),
			Fix: "reinstall porchlight; if a system libheif.so is installed, make sure it works (or remove libheif-dev so the built-in decoder is used)"}
	}
	return checkResult{Name: "heic", Status: checkOK, Detail: lib + " decodes"}
}

// checkPrivacyModels finds and parses every cascade the privacy blur loads.
func checkPrivacyModels() checkResult {
	dirs := map[string]bool{}
	var missing, broken []string
	for _, rel := range privacy.ModelFiles() {
		p, err := privacy.FindModel(rel)
		if err != nil {
			missing = append(missing, filepath.Base(rel))
			continue
		}
		if _, err := privacy.LoadCascade(p); err != nil {
			broken = append(broken, fmt.Sprintf("%s (%v)", p, err))
			continue
		}
		// Report the models folder: the file's folder, or its parent for the
		// haarcascades/ and lbpcascades/ layout.
		d := filepath.Dir(p)
		if b := filepath.Base(d); b == "haarcascades" || b == "lbpcascades" {
			d = filepath.Dir(d)
		}
		dirs[d] = true
	}
	fix := "install the opencv-data package (sudo apt-get install opencv-data) or reinstall porchlight, " +
		"or set " + privacy.ModelsEnv + " to a folder holding the OpenCV cascades"
	switch {
	case len(missing) > 0:
		return checkResult{Name: "privacy models", Status: checkFail,
			Detail: fmt.Sprintf("%s not found in %s", strings.Join(missing, ", "), strings.Join(privacy.ModelDirs(), ", ")), Fix: fix}
	case len(broken) > 0:
		return checkResult{Name: "privacy models", Status: checkFail, Detail: "unreadable: " + strings.Join(broken, "; "), Fix: fix}
	}
	return checkResult{Name: "privacy models", Status: checkOK,
		Detail: fmt.Sprintf("%d cascades in %s", len(privacy.ModelFiles()), strings.Join(sortedKeys(dirs), ", "))}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkDataDir checks that the data dir is a folder Porchlight can write, or that
// it can be created.
func checkDataDir(dir string) checkResult {
	r := checkResult{Name: "data dir"}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := nearestExisting(dir)
		if err := writable(parent); err != nil {
			r.Status, r.Detail = checkFail, fmt.Sprintf("%s does not exist and cannot be created in %s: %v", dir, parent, err)
			r.Fix = "create it and give your user write access, or choose another with data_dir or PORCHLIGHT_DATA_DIR"
			return r
		}
		r.Status, r.Detail = checkOK, dir+" does not exist yet; the first start creates it"
		return r
	case err != nil:
		r.Status, r.Detail = checkFail, err.Error()
		r.Fix = "choose another data dir with data_dir or PORCHLIGHT_DATA_DIR"
		return r
	case !st.IsDir():
		r.Status, r.Detail = checkFail, dir+" is not a folder"
		r.Fix = "move the file away, or choose another data dir with data_dir or PORCHLIGHT_DATA_DIR"
		return r
	}
	if err := writable(dir); err != nil {
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s is not writable: %v", dir, err)
		r.Fix = "give your user write access (chown or chmod), or choose another data dir with data_dir or PORCHLIGHT_DATA_DIR"
		return r
	}
	r.Status, r.Detail = checkOK, dir+" is writable"
	return r
}

// nearestExisting returns dir or its closest ancestor that exists.
func nearestExisting(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}

// writable creates, syncs and removes a file in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".porchlight-doctor-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString("ok"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runningServer is what answers /healthz on the configured listen address.
type runningServer struct {
	url string // http://host:port, "" when no Porchlight answers
	err error  // why not, when url is ""
}

// probeServer asks the configured listen address for /healthz.
func probeServer(ctx context.Context, client *http.Client, listen string) runningServer {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return runningServer{err: err}
	}
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port)
	if port == "0" {
		return runningServer{err: errors.New("port 0 is chosen at start")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return runningServer{err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		return runningServer{err: err}
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return runningServer{err: fmt.Errorf("GET /healthz answered HTTP %d", resp.StatusCode)}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body); err != nil || body.Data.Status != "ok" {
		return runningServer{err: errors.New("GET /healthz did not answer like Porchlight")}
	}
	return runningServer{url: base}
}

// checkDatabase opens the database read-only. A server holds it exclusively, so a
// lock is expected while one runs.
func checkDatabase(dataDir string) checkResult {
	r := checkResult{Name: "database"}
	path := filepath.Join(dataDir, store.FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		r.Status, r.Detail = checkOK, path+" does not exist yet; the first start creates it"
		return r
	} else if err != nil {
		r.Status, r.Detail = checkFail, err.Error()
		r.Fix = "fix the data dir first"
		return r
	}
	version, err := store.InspectSchema(dataDir, 500*time.Millisecond)
	if errors.Is(err, store.ErrLocked) {
		// The holder is named by its own serving file, not by whatever answers at
		// the configured address: that may be another Porchlight on another data dir.
		holder := findHolder(dataDir, path)
		if holder.Own {
			r.Status, r.Detail = checkOK, fmt.Sprintf("%s is in use by %s", path, holder)
			return r
		}
		r.Status = checkNote
		r.Detail = fmt.Sprintf("%s is locked by %s: a running Porchlight holds it; stop it before `porchlight keys` or `porchlight process` on this data dir", path, holder)
		return r
	}
	if errors.Is(err, store.ErrUnreadable) {
		r.Status, r.Detail = checkFail, fmt.Sprintf("cannot read %s: %v", path, err)
		r.Fix = "if the file is damaged, move it away or restore a backup"
		return r
	}
	if err != nil {
		r.Status, r.Detail = checkFail, fmt.Sprintf("cannot open %s: %v", path, err)
		r.Fix = "if the file is damaged, move it away (Porchlight starts with an empty database) or restore a backup"
		return r
	}
	switch latest := store.Latest(); {
	case version > latest:
		r.Status = checkFail
		r.Detail = fmt.Sprintf("%s has schema %d, written by a newer Porchlight (this one knows %d)", path, version, latest)
		r.Fix = "install the newer Porchlight again, or use another data dir"
	case version < latest:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s opens (schema %d; the next start brings it to %d)", path, version, latest)
	default:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s opens (schema %d)", path, version)
	}
	return r
}

// checkListen checks that the API's address is free, or held by a Porchlight.
func checkListen(listen string, server runningServer) checkResult {
	r := checkResult{Name: "listen"}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		r.Status, r.Detail = checkFail, fmt.Sprintf("%q is not host:port: %v", listen, err)
		r.Fix = "set listen (or PORCHLIGHT_LISTEN) to an address such as 127.0.0.1:8787"
		return r
	}
	ln, err := net.Listen("tcp", listen)
	if err == nil {
		ln.Close()
		r.Status, r.Detail = checkOK, listen+" is free"
		return r
	}
	if server.url != "" {
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s is held by a running Porchlight (%s/healthz answers)", listen, server.url)
		return r
	}
	r.Status, r.Detail = checkFail, fmt.Sprintf("cannot listen on %s: %v", listen, err)
	if server.err != nil {
		r.Detail += fmt.Sprintf("; no Porchlight answers there (%v)", server.err)
	}
	r.Fix = "stop the program using it, or choose another address with listen, PORCHLIGHT_LISTEN or --listen"
	return r
}

// backendProbe is the cheap read each protocol answers when its server is up.
func backendProbe(spec backends.Spec) string {
	switch spec.Type {
	case "comfyui":
		return "/system_stats"
	case "iopaint":
		return "/api/v1/server-config"
	case "a1111":
		return "/sdapi/v1/progress"
	case "openai":
		if strings.HasSuffix(spec.URL.Path, "/v1") {
			return "/models"
		}
		return "/v1/models"
	case "remote":
		return "/healthz"
	}
	return "/"
}

// checkBackends validates each configured backend and asks it a cheap question.
func checkBackends(ctx context.Context, client *http.Client, cfg *Config) []checkResult {
	if len(cfg.Backends) == 0 {
		detail := "none configured; " + withoutBackendNote(func(string) bool { return false })
		if len(cfg.Features) > 0 {
			return []checkResult{{Name: "backends", Status: checkFail,
				Detail: "features names backends but none is defined under backends",
				Fix:    backends.ConfigureHint(backends.FeatureIndoorStaging)}}
		}
		return []checkResult{{Name: "backends", Status: checkNote, Detail: detail}}
	}
	var out []checkResult
	names := make([]string, 0, len(cfg.Backends))
	for n := range cfg.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	defined := map[string]bool{}
	for _, n := range names {
		name := strings.ToLower(n)
		defined[name] = true
		label := "backend " + name
		spec, err := backends.ParseSpec(name, cfg.Backends[n])
		if err != nil {
			out = append(out, checkResult{Name: label, Status: checkFail, Detail: err.Error(),
				Fix: "correct backends." + name + " in the config file"})
			continue
		}
		out = append(out, probeBackend(ctx, client, label, spec))
	}

	features := make([]string, 0, len(cfg.Features))
	for f := range cfg.Features {
		features = append(features, f)
	}
	sort.Strings(features)
	var served []string
	for _, f := range features {
		key := strings.ToLower(strings.TrimSpace(f))
		if key == "declutter_local" {
			key = backends.FeatureDeclutter
		}
		name := strings.ToLower(strings.TrimSpace(cfg.Features[f]))
		switch {
		case !backends.KnownFeature(key):
			out = append(out, checkResult{Name: "features", Status: checkFail,
				Detail: fmt.Sprintf("features.%s: not a feature that runs on a model backend", f),
				Fix:    "use one of " + strings.Join(backends.Features, ", ")})
		case !defined[name]:
			out = append(out, checkResult{Name: "features", Status: checkFail,
				Detail: fmt.Sprintf("features.%s names backend %q, which is not defined under backends", f, cfg.Features[f]),
				Fix:    "define it under backends or name one of " + strings.Join(sortedKeys(defined), ", ")})
		default:
			served = append(served, key+" -> "+name)
		}
	}
	// Building the registry runs each adapter's own checks (ComfyUI's workflow
	// files, the keys each type knows), exactly as a start would.
	if _, err := adapters.NewRegistry(cfg.Backends, cfg.Features); err != nil {
		out = append(out, checkResult{Name: "backend config", Status: checkFail, Detail: err.Error(),
			Fix: "correct the backends or features section of the config file"})
	}
	if len(served) == 0 {
		out = append(out, checkResult{Name: "features", Status: checkNote,
			Detail: "no feature is mapped to a backend (features: {indoor_staging: NAME, ...}); " + withoutBackendNote(func(string) bool { return false })})
	} else {
		out = append(out, checkResult{Name: "features", Status: checkOK, Detail: strings.Join(served, ", ")})
	}
	return out
}

// probeBackend sends one GET. Any HTTP answer proves the server is reachable; the
// protocol's own read answering 2xx proves it is the right kind of server.
func probeBackend(ctx context.Context, client *http.Client, label string, spec backends.Spec) checkResult {
	target := spec.URL.String() + backendProbe(spec)
	r := checkResult{Name: label}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		r.Status, r.Detail = checkFail, err.Error()
		return r
	}
	if spec.APIKey != "" {
		switch spec.Type {
		case "remote":
			req.Header.Set("X-API-Key", spec.APIKey)
		case "a1111": // the web UI's --api-auth is HTTP basic "user:password"
			user, pass, _ := strings.Cut(spec.APIKey, ":")
			req.SetBasicAuth(user, pass)
		default:
			req.Header.Set("Authorization", "Bearer "+spec.APIKey)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			err = fmt.Errorf("no answer within %s", client.Timeout)
		}
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s (%s) is unreachable: %v", spec.URL, spec.Type, err)
		r.Fix = fmt.Sprintf("start the %s server, or correct backends.%s.url", spec.Type, spec.Name)
		return r
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s (%s) answers", spec.URL, spec.Type)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s (%s) refused the credentials: HTTP %d", spec.URL, spec.Type, resp.StatusCode)
		r.Fix = fmt.Sprintf("set backends.%s.api_key (or api_key_env) to a valid key", spec.Name)
	default:
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s answers HTTP %d to GET %s: is it a %s server?",
			spec.URL, resp.StatusCode, backendProbe(spec), spec.Type)
		r.Fix = fmt.Sprintf("check backends.%s.url and backends.%s.type", spec.Name, spec.Name)
	}
	return r
}

// checkHotfolders validates the hot-folder entries and looks for their folders.
func checkHotfolders(cfg *Config) []checkResult {
	if len(cfg.Hotfolders) == 0 {
		return []checkResult{{Name: "hot folders", Status: checkNote, Detail: "none configured"}}
	}
	folders, err := hotfolder.Decode(cfg.Hotfolders)
	if err != nil {
		return []checkResult{{Name: "hot folders", Status: checkFail, Detail: err.Error(),
			Fix: "correct the hotfolders entry in the config file"}}
	}
	var out []checkResult
	for _, f := range folders {
		label := "hot folder " + f.Name
		if !f.Enabled {
			out = append(out, checkResult{Name: label, Status: checkNote, Detail: "disabled"})
			continue
		}
		real, err := hotfolder.ResolveInput(f.Input)
		var le *hotfolder.LinkError
		if errors.As(err, &le) {
			out = append(out, checkResult{Name: label, Status: checkFail,
				Detail: "input folder " + le.Error(),
				Fix:    fmt.Sprintf("create it (mkdir -p %q), or point the link %s at the input folder", le.Target, le.Link)})
			continue
		}
		if err != nil {
			out = append(out, checkResult{Name: label, Status: checkFail,
				Detail: fmt.Sprintf("input folder %s does not exist", f.Input),
				Fix:    fmt.Sprintf("create it (mkdir -p %q) or correct its input", f.Input)})
			continue
		}
		if st, err := os.Stat(f.Output); err == nil {
			if !st.IsDir() {
				out = append(out, checkResult{Name: label, Status: checkFail,
					Detail: fmt.Sprintf("output %s is not a folder", f.Output), Fix: "correct its output"})
				continue
			}
			if err := writable(f.Output); err != nil {
				out = append(out, checkResult{Name: label, Status: checkFail,
					Detail: fmt.Sprintf("output folder %s is not writable: %v", f.Output, err),
					Fix:    "give your user write access to it, or correct its output"})
				continue
			}
		} else if err := writable(nearestExisting(f.Output)); err != nil {
			out = append(out, checkResult{Name: label, Status: checkFail,
				Detail: fmt.Sprintf("output folder %s cannot be created: %v", f.Output, err),
				Fix:    "create it with write access for your user, or correct its output"})
			continue
		}
		watches := f.Input
		if real != f.Input {
			watches += " (a link to " + real + ")"
		}
		out = append(out, checkResult{Name: label, Status: checkOK, Detail: fmt.Sprintf("watches %s, delivers to %s", watches, f.Output)})
	}
	return out
}
