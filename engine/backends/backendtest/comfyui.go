package backendtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// ComfyCheckpoints, ComfySamplers and ComfySchedulers are the fake ComfyUI's
// models/checkpoints files and KSampler's sampler and scheduler lists.
var (
	ComfyCheckpoints = []string{"realisticVision_v51.safetensors", "sd_xl_base_1.0.safetensors", "juggernautXL_v9.safetensors"}
	ComfySamplers    = []string{"euler", "euler_ancestral", "heun", "dpm_2", "dpm_2_ancestral", "lms", "dpm_fast", "dpm_adaptive",
		"dpmpp_2s_ancestral", "dpmpp_sde", "dpmpp_2m", "dpmpp_2m_sde", "dpmpp_3m_sde", "ddpm", "lcm", "ddim", "uni_pc", "uni_pc_bh2"}
	ComfySchedulers = []string{"normal", "karras", "exponential", "sgm_uniform", "simple", "ddim_uniform", "beta"}
)

// comfyInput is one input of a node type: its kind (STRING, INT, FLOAT, COMBO,
// IMAGE_UPLOAD or a link type such as MODEL), the options of a combo and the bounds
// of a number.
type comfyInput struct {
	kind     string
	options  func() []string
	min, max float64
}

// comfyClass is a node type the fake knows: its inputs and output types.
type comfyClass struct {
	inputs  map[string]comfyInput
	outputs []string
}

func link(t string) comfyInput                   { return comfyInput{kind: t} }
func num(kind string, lo, hi float64) comfyInput { return comfyInput{kind: kind, min: lo, max: hi} }
func combo(o func() []string) comfyInput         { return comfyInput{kind: "COMBO", options: o} }
func fixed(o ...string) func() []string          { return func() []string { return o } }

var comfyClasses = map[string]comfyClass{
	"CheckpointLoaderSimple": {map[string]comfyInput{"ckpt_name": combo(fixed(ComfyCheckpoints...))}, []string{"MODEL", "CLIP", "VAE"}},
	"LoadImage":              {map[string]comfyInput{"image": {kind: "IMAGE_UPLOAD"}}, []string{"IMAGE", "MASK"}},
	"LoadImageMask":          {map[string]comfyInput{"image": {kind: "IMAGE_UPLOAD"}, "channel": combo(fixed("alpha", "red", "green", "blue"))}, []string{"MASK"}},
	"VAEEncode":              {map[string]comfyInput{"pixels": link("IMAGE"), "vae": link("VAE")}, []string{"LATENT"}},
	"CLIPTextEncode":         {map[string]comfyInput{"text": {kind: "STRING"}, "clip": link("CLIP")}, []string{"CONDITIONING"}},
	"SetLatentNoiseMask":     {map[string]comfyInput{"samples": link("LATENT"), "mask": link("MASK")}, []string{"LATENT"}},
	"KSampler": {map[string]comfyInput{"seed": num("INT", 0, 0xffffffffffffffff), "steps": num("INT", 1, 10000),
		"cfg": num("FLOAT", 0, 100), "sampler_name": combo(fixed(ComfySamplers...)), "scheduler": combo(fixed(ComfySchedulers...)),
		"denoise": num("FLOAT", 0, 1), "model": link("MODEL"), "positive": link("CONDITIONING"),
		"negative": link("CONDITIONING"), "latent_image": link("LATENT")}, []string{"LATENT"}},
	"VAEDecode":    {map[string]comfyInput{"samples": link("LATENT"), "vae": link("VAE")}, []string{"IMAGE"}},
	"SaveImage":    {map[string]comfyInput{"images": link("IMAGE"), "filename_prefix": {kind: "STRING"}}, nil},
	"PreviewImage": {map[string]comfyInput{"images": link("IMAGE")}, nil},
}

// ComfyUI is a fake ComfyUI server: uploads, the prompt queue with one worker,
// history, view, queue deletes, interrupts, /object_info and the WebSocket. It
// validates a workflow as validate_prompt does (node types, combo values such as
// checkpoints and samplers, number bounds, links) with ComfyUI's error shapes.
//
// By default it is a server of 2024: POST /prompt chooses the prompt id itself and
// /interrupt stops whatever runs. Modern makes it a newer one that takes the
// client's prompt_id and interrupts only the prompt a {"prompt_id"} body names;
// NoStatus an older one whose history has no status and whose runs end with an
// "executing" message for no node, sent before the history is written.
type ComfyUI struct {
	*state
	Server *httptest.Server
	URL    string

	mu       sync.Mutex
	modern   bool
	noStatus bool
	uploads  map[string][]byte // "input/name" -> bytes
	outputs  map[string][]byte // "output/name" -> bytes
	history  map[string]any
	pending  []*comfyJob
	running  *comfyJob
	sockets  map[string]*sioConn // client id -> socket
	number   int
	wake     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

type comfyJob struct {
	id, client  string
	number      int
	job         int // index in the record
	nodes       map[string]comfyNode
	interrupted chan struct{}
	once        sync.Once
}

type comfyNode struct {
	Class  string         `json:"class_type"`
	Inputs map[string]any `json:"inputs"`
}

// Modern makes the fake a newer ComfyUI (client prompt ids, targeted interrupts).
func (f *ComfyUI) Modern() {
	f.mu.Lock()
	f.modern = true
	f.mu.Unlock()
}

// NoStatus makes the fake an older ComfyUI whose history entries have no status.
func (f *ComfyUI) NoStatus() {
	f.mu.Lock()
	f.noStatus = true
	f.mu.Unlock()
}

// NewComfyUI starts a fake ComfyUI server on 127.0.0.1; the test's cleanup stops it.
func NewComfyUI(t testing.TB) *ComfyUI {
	f := &ComfyUI{state: newState(), uploads: map[string][]byte{}, outputs: map[string][]byte{},
		history: map[string]any{}, sockets: map[string]*sioConn{}, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /upload/image", f.upload)
	mux.HandleFunc("POST /prompt", f.prompt)
	mux.HandleFunc("GET /history/{id}", f.historyOf)
	mux.HandleFunc("GET /view", f.view)
	mux.HandleFunc("GET /queue", f.queueInfo)
	mux.HandleFunc("POST /queue", f.queueEdit)
	mux.HandleFunc("POST /interrupt", f.interrupt)
	mux.HandleFunc("GET /ws", f.ws)
	mux.HandleFunc("GET /object_info/{class}", f.objectInfo)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL
	go f.worker()
	t.Cleanup(f.Close)
	return f
}

// Close stops the worker, the sockets and the server.
func (f *ComfyUI) Close() {
	f.stopOnce.Do(func() { close(f.stopped) })
	f.mu.Lock()
	for _, s := range f.sockets {
		s.c.Close()
	}
	if f.running != nil {
		f.running.interrupt()
	}
	f.mu.Unlock()
	f.Server.Close()
}

func comfyError(w http.ResponseWriter, status int, typ, msg string, nodeErrors map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if nodeErrors == nil {
		nodeErrors = map[string]any{}
	}
	json.NewEncoder(w).Encode(map[string]any{
		"error":       map[string]any{"type": typ, "message": msg, "details": "", "extra_info": map[string]any{}},
		"node_errors": nodeErrors,
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// upload is POST /upload/image: multipart with the file in "image" and optional
// overwrite, type and subfolder.
func (f *ComfyUI) upload(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		http.Error(w, "expected multipart/form-data", http.StatusBadRequest)
		return
	}
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for k := range r.MultipartForm.Value {
		if k != "overwrite" && k != "type" && k != "subfolder" {
			http.Error(w, "unknown form field "+k, http.StatusBadRequest)
			return
		}
	}
	for k := range r.MultipartForm.File {
		if k != "image" {
			http.Error(w, "unknown file field "+k, http.StatusBadRequest)
			return
		}
	}
	files := r.MultipartForm.File["image"]
	if len(files) != 1 || files[0].Filename == "" {
		http.Error(w, "no image", http.StatusBadRequest)
		return
	}
	typ := r.FormValue("type")
	if typ == "" {
		typ = "input"
	}
	if typ != "input" && typ != "temp" && typ != "output" {
		http.Error(w, "bad type", http.StatusBadRequest)
		return
	}
	fh, _ := files[0].Open()
	b, _ := io.ReadAll(fh)
	fh.Close()
	if _, err := decodeImage(b); err != nil {
		http.Error(w, "not an image: "+err.Error(), http.StatusBadRequest)
		return
	}
	name := files[0].Filename
	f.mu.Lock()
	if r.FormValue("overwrite") != "true" && r.FormValue("overwrite") != "1" {
		for i := 1; f.uploads[typ+"/"+name] != nil && !bytes.Equal(f.uploads[typ+"/"+name], b); i++ {
			name = fmt.Sprintf("%s (%d).png", strings.TrimSuffix(files[0].Filename, ".png"), i)
		}
	}
	f.uploads[typ+"/"+name] = b
	f.mu.Unlock()
	writeJSON(w, map[string]string{"name": name, "subfolder": r.FormValue("subfolder"), "type": typ})
}

// prompt is POST /prompt: validates the workflow against the node table and queues it.
func (f *ComfyUI) prompt(w http.ResponseWriter, r *http.Request) {
	if f.attempt() {
		http.Error(w, "server busy", http.StatusServiceUnavailable)
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError) // aiohttp's answer to a bad request.json()
		return
	}
	raw, ok := body["prompt"]
	if !ok {
		comfyError(w, http.StatusBadRequest, "no_prompt", "No prompt provided", nil)
		return
	}
	var nodes map[string]comfyNode
	if err := json.Unmarshal(raw, &nodes); err != nil {
		comfyError(w, http.StatusBadRequest, "invalid_prompt", "Cannot execute because a node is missing the class_type property.", nil)
		return
	}
	var client, wantID string
	json.Unmarshal(body["client_id"], &client)
	json.Unmarshal(body["prompt_id"], &wantID)
	if nodeErrs := f.validate(nodes); len(nodeErrs) > 0 {
		comfyError(w, http.StatusBadRequest, "prompt_outputs_failed_validation", "Prompt outputs failed validation", nodeErrs)
		return
	}
	sc := f.get()
	f.mu.Lock()
	f.number++
	job := &comfyJob{id: fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", hash3(f.number, 1, 0, 0)&0xffffffff, f.number&0xffff, f.number&0xfff, 7, f.number),
		client: client, number: f.number, nodes: nodes, interrupted: make(chan struct{})}
	if f.modern && wantID != "" {
		job.id = wantID
	}
	f.mu.Unlock()
	job.job = f.record(f.describe(nodes), OutcomeWaiting)
	f.mu.Lock()
	f.pending = append(f.pending, job)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	if sc.DropAnswer {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	writeJSON(w, map[string]any{"prompt_id": job.id, "number": job.number, "node_errors": map[string]any{}})
}

// describe reads what the workflow asks of its (first) KSampler.
func (f *ComfyUI) describe(nodes map[string]comfyNode) Job {
	var job Job
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	sampler := ""
	for _, id := range ids {
		n := nodes[id]
		switch n.Class {
		case "KSampler":
			if sampler == "" {
				sampler = id
			}
		case "CheckpointLoaderSimple":
			job.Model, _ = n.Inputs["ckpt_name"].(string)
		case "LoadImageMask":
			job.Masked = true // refined when it runs
		}
	}
	ks := nodes[sampler].Inputs
	text := func(link any) string {
		l, _ := link.([]any)
		if len(l) == 2 {
			if id, ok := l[0].(string); ok {
				s, _ := nodes[id].Inputs["text"].(string)
				return s
			}
		}
		return ""
	}
	n := func(v any) float64 { x, _ := v.(float64); return x }
	job.Prompt, job.Negative = text(ks["positive"]), text(ks["negative"])
	job.Seed, job.Steps = int64(n(ks["seed"])), int(n(ks["steps"]))
	job.Strength, job.Guidance = n(ks["denoise"]), n(ks["cfg"])
	job.Sampler, _ = ks["sampler_name"].(string)
	job.Scheduler, _ = ks["scheduler"].(string)
	for k := range ks {
		job.Fields = append(job.Fields, k)
	}
	sort.Strings(job.Fields)
	return job
}

// validate checks every node against the table, as ComfyUI's validate_prompt does.
func (f *ComfyUI) validate(nodes map[string]comfyNode) map[string]any {
	errs := map[string]any{}
	fail := func(id, class, typ, msg, details string) {
		e, _ := errs[id].(map[string]any)
		if e == nil {
			e = map[string]any{"errors": []any{}, "dependent_outputs": []any{}, "class_type": class}
			errs[id] = e
		}
		e["errors"] = append(e["errors"].([]any), map[string]any{"type": typ, "message": msg, "details": details, "extra_info": map[string]any{}})
	}
	outputs := 0
	for id, n := range nodes {
		cl, ok := comfyClasses[n.Class]
		if !ok {
			fail(id, n.Class, "invalid_prompt", fmt.Sprintf("Cannot execute because node %s does not exist.", n.Class), "Node ID '#"+id+"'")
			continue
		}
		if cl.outputs == nil {
			outputs++
		}
		for name, in := range cl.inputs {
			v, ok := n.Inputs[name]
			if !ok {
				fail(id, n.Class, "required_input_missing", "Required input is missing", name)
				continue
			}
			if typ, msg, details := f.checkInput(nodes, name, in, v); typ != "" {
				fail(id, n.Class, typ, msg, details)
			}
		}
	}
	if outputs == 0 {
		errs["prompt"] = "Prompt has no outputs"
	}
	return errs
}

// checkInput returns the error type, message and details of a value ComfyUI refuses.
func (f *ComfyUI) checkInput(nodes map[string]comfyNode, name string, in comfyInput, v any) (string, string, string) {
	isLink := !slices.Contains([]string{"STRING", "INT", "FLOAT", "COMBO", "IMAGE_UPLOAD"}, in.kind)
	if l, ok := v.([]any); ok || isLink {
		if len(l) != 2 {
			return "bad_linked_input", "Bad linked input, must be a length-2 list of [node_id, slot_index]", name
		}
		src, ok1 := l[0].(string)
		idx, ok2 := l[1].(float64)
		n, ok3 := nodes[src]
		if !ok1 || !ok2 || !ok3 {
			return "bad_linked_input", "Bad linked input, must be a length-2 list of [node_id, slot_index]", name
		}
		outs := comfyClasses[n.Class].outputs
		if int(idx) < 0 || int(idx) >= len(outs) || outs[int(idx)] != in.kind {
			got := "?"
			if int(idx) >= 0 && int(idx) < len(outs) {
				got = outs[int(idx)]
			}
			return "return_type_mismatch", "Return type mismatch between linked nodes", fmt.Sprintf("%s, received_type(%s) mismatch input_type(%s)", name, got, in.kind)
		}
		return "", "", ""
	}
	switch in.kind {
	case "STRING":
		if _, ok := v.(string); !ok {
			return "invalid_input_type", fmt.Sprintf("Failed to convert an input value to a STRING value: %s, %v", name, v), name
		}
	case "IMAGE_UPLOAD":
		s, _ := v.(string)
		f.mu.Lock()
		_, ok := f.uploads["input/"+s]
		f.mu.Unlock()
		if !ok {
			return "custom_validation_failed", "Custom validation failed for node", fmt.Sprintf("image - Invalid image file: %v", v)
		}
	case "INT", "FLOAT":
		x, ok := v.(float64)
		if !ok || (in.kind == "INT" && x != float64(int64(x))) {
			return "invalid_input_type", fmt.Sprintf("Failed to convert an input value to a %s value: %s, %v", in.kind, name, v), name
		}
		if x < in.min {
			return "value_smaller_than_min", fmt.Sprintf("Value %v smaller than min of %v", v, in.min), name
		}
		if x > in.max {
			return "value_bigger_than_max", fmt.Sprintf("Value %v bigger than max of %v", v, in.max), name
		}
	case "COMBO":
		s, _ := v.(string)
		opts := in.options()
		if !slices.Contains(opts, s) {
			q := make([]string, len(opts))
			for i, o := range opts {
				q[i] = "'" + o + "'"
			}
			return "value_not_in_list", "Value not in list", fmt.Sprintf("%s: '%v' not in [%s]", name, v, strings.Join(q, ", "))
		}
	}
	return "", "", ""
}

// objectInfo is GET /object_info/{class}: a node type's inputs, combos as lists.
func (f *ComfyUI) objectInfo(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("class")
	cl, ok := comfyClasses[name]
	if !ok {
		writeJSON(w, map[string]any{})
		return
	}
	req := map[string]any{}
	for n, in := range cl.inputs {
		switch {
		case in.options != nil:
			req[n] = []any{in.options(), map[string]any{}}
		case in.kind == "IMAGE_UPLOAD":
			f.mu.Lock()
			var files []string
			for k := range f.uploads {
				if after, ok := strings.CutPrefix(k, "input/"); ok {
					files = append(files, after)
				}
			}
			f.mu.Unlock()
			sort.Strings(files)
			req[n] = []any{files, map[string]any{"image_upload": true}}
		case in.kind == "INT" || in.kind == "FLOAT":
			req[n] = []any{in.kind, map[string]any{"min": in.min, "max": in.max}}
		default:
			req[n] = []any{in.kind}
		}
	}
	writeJSON(w, map[string]any{name: map[string]any{"input": map[string]any{"required": req}, "output": cl.outputs,
		"name": name, "display_name": name, "category": "sampling", "output_node": cl.outputs == nil}})
}

func (f *ComfyUI) historyOf(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]any{}
	if h, ok := f.history[id]; ok {
		out[id] = h
	}
	writeJSON(w, out)
}

func (f *ComfyUI) view(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "filename" && k != "subfolder" && k != "type" && k != "preview" && k != "channel" {
			http.Error(w, "unknown parameter "+k, http.StatusBadRequest)
			return
		}
	}
	typ := q.Get("type")
	if typ == "" {
		typ = "output"
	}
	f.mu.Lock()
	b, ok := f.outputs[typ+"/"+q.Get("filename")]
	f.mu.Unlock()
	if !ok || q.Get("subfolder") != "" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b)
}

func queueItem(j *comfyJob) []any {
	return []any{j.number, j.id, map[string]any{}, map[string]any{"client_id": j.client}, []string{}}
}

func (f *ComfyUI) queueInfo(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	running, pending := []any{}, []any{}
	if f.running != nil {
		running = append(running, queueItem(f.running))
	}
	for _, j := range f.pending {
		pending = append(pending, queueItem(j))
	}
	writeJSON(w, map[string]any{"queue_running": running, "queue_pending": pending})
}

// queueEdit is POST /queue {"delete": [ids]} or {"clear": true}.
func (f *ComfyUI) queueEdit(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var del []string
	clear := false
	for k, v := range body {
		switch k {
		case "delete":
			if err := json.Unmarshal(v, &del); err != nil {
				http.Error(w, "delete must be a list of prompt ids", http.StatusBadRequest)
				return
			}
		case "clear":
			json.Unmarshal(v, &clear)
		default:
			http.Error(w, "unknown field "+k, http.StatusBadRequest)
			return
		}
	}
	f.mu.Lock()
	kept := f.pending[:0]
	for _, j := range f.pending {
		drop := clear
		for _, d := range del {
			drop = drop || d == j.id
		}
		if drop {
			f.end(j.job, OutcomeDeleted)
			continue
		}
		kept = append(kept, j)
	}
	f.pending = kept
	f.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (j *comfyJob) interrupt() { j.once.Do(func() { close(j.interrupted) }) }

// interrupt is POST /interrupt. A modern server reads an optional {"prompt_id"} and
// interrupts only that prompt while it runs; an older one ignores the body and stops
// whatever runs.
func (f *ComfyUI) interrupt(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	want := ""
	if f.modern {
		var body map[string]any
		if json.Unmarshal(b, &body) == nil {
			want, _ = body["prompt_id"].(string)
		}
	}
	if j := f.running; j != nil && (want == "" || want == j.id) {
		j.interrupt()
	}
	w.WriteHeader(http.StatusOK)
}

func (f *ComfyUI) ws(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	sid := r.URL.Query().Get("clientId")
	if sid == "" {
		sid = fmt.Sprintf("sid-%x", hash3(0, 0, 0, time.Now().UnixNano()))
	}
	s := &sioConn{c: c}
	f.mu.Lock()
	f.sockets[sid] = s
	f.mu.Unlock()
	f.send(sid, "status", map[string]any{"status": map[string]any{"exec_info": map[string]any{"queue_remaining": 0}}, "sid": sid})
	defer func() {
		f.mu.Lock()
		if f.sockets[sid] == s {
			delete(f.sockets, sid)
		}
		f.mu.Unlock()
		c.Close()
	}()
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
	}
}

func (f *ComfyUI) send(client, typ string, data any) {
	f.mu.Lock()
	s := f.sockets[client]
	f.mu.Unlock()
	if s == nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "data": data})
	s.send(string(b))
}

func (f *ComfyUI) worker() {
	for {
		select {
		case <-f.stopped:
			return
		case <-f.wake:
		case <-time.After(20 * time.Millisecond):
		}
		for {
			f.mu.Lock()
			if len(f.pending) == 0 {
				f.mu.Unlock()
				break
			}
			j := f.pending[0]
			f.pending = f.pending[1:]
			f.running = j
			f.mu.Unlock()
			stop := f.run(j)
			f.mu.Lock()
			f.running = nil
			f.mu.Unlock()
			if stop {
				return
			}
		}
	}
}

// run executes one prompt; it reports true when the server went away.
func (f *ComfyUI) run(j *comfyJob) bool {
	sc := f.get()
	f.mu.Lock()
	modern, noStatus := f.modern, f.noStatus
	f.mu.Unlock()
	var img image.Image
	var mask *image.Gray
	var samplers []string
	var save string
	ids := make([]string, 0, len(j.nodes))
	for id := range j.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := j.nodes[id]
		switch n.Class {
		case "LoadImage":
			name, _ := n.Inputs["image"].(string)
			f.mu.Lock()
			b := f.uploads["input/"+name]
			f.mu.Unlock()
			img, _ = decodeImage(b)
		case "LoadImageMask":
			name, _ := n.Inputs["image"].(string)
			f.mu.Lock()
			b := f.uploads["input/"+name]
			f.mu.Unlock()
			if m, err := decodeImage(b); err == nil {
				mask = redChannel(m)
				full := true
				for _, v := range mask.Pix {
					full = full && v >= 128
				}
				if full {
					mask = nil
				}
			}
		case "KSampler":
			samplers = append(samplers, id)
		case "SaveImage", "PreviewImage":
			save = id
		}
	}
	job := f.Jobs()[j.job]
	f.update(j.job, func(r *Job) {
		r.Masked = mask != nil
		r.Width, r.Height = img.Bounds().Dx(), img.Bounds().Dy()
		r.Outcome = OutcomeRunning
	})

	f.send(j.client, "execution_start", map[string]any{"prompt_id": j.id, "timestamp": time.Now().UnixMilli()})
	// finish writes the history and sends the end of the run, in the order of the
	// server's version.
	finish := func(outputs map[string]any, status string, msgs []any) {
		entry := map[string]any{"prompt": queueItem(j), "outputs": outputs}
		if !noStatus {
			entry["status"] = map[string]any{"status_str": status, "completed": status == "success", "messages": msgs}
			entry["meta"] = map[string]any{}
		}
		write := func() {
			f.mu.Lock()
			f.history[j.id] = entry
			f.mu.Unlock()
		}
		if noStatus {
			f.send(j.client, "executing", map[string]any{"node": nil, "prompt_id": j.id})
			write()
			return
		}
		write()
		if status == "success" {
			f.send(j.client, "execution_success", map[string]any{"prompt_id": j.id, "timestamp": time.Now().UnixMilli()})
		}
		f.send(j.client, "executing", map[string]any{"node": nil, "prompt_id": j.id})
	}
	fail := func(kind string, data map[string]any) {
		data["prompt_id"] = j.id
		f.send(j.client, kind, data)
		finish(map[string]any{}, "error", []any{[]any{"execution_start", map[string]any{"prompt_id": j.id}}, []any{kind, data}})
	}
	first := ""
	if len(samplers) > 0 {
		first = samplers[0]
	}
	if sc.Mode == ModeFail {
		f.end(j.job, OutcomeFailed)
		fail("execution_error", map[string]any{"node_id": first, "node_type": "KSampler", "executed": []string{},
			"exception_message": "CUDA out of memory. Tried to allocate 2.00 GiB", "exception_type": "torch.OutOfMemoryError",
			"traceback": []string{}, "current_inputs": map[string]any{}, "current_outputs": map[string]any{}})
		return false
	}
	// Every sampler reports its own steps, from 1 to its step count.
	for _, id := range samplers {
		f.send(j.client, "executing", map[string]any{"node": id, "display_node": id, "prompt_id": j.id})
		steps := int(j.nodes[id].Inputs["steps"].(float64))
		if sc.Steps > 0 {
			steps = sc.Steps
		}
		for i := 1; i <= steps; i++ {
			data := map[string]any{"value": i, "max": steps}
			if modern {
				data["prompt_id"], data["node"] = j.id, id
			}
			f.send(j.client, "progress", data)
			if sc.Mode == ModeDrop {
				f.Server.CloseClientConnections()
				f.Server.Listener.Close()
				f.mu.Lock()
				for _, s := range f.sockets {
					s.c.Close()
				}
				f.mu.Unlock()
				return true
			}
			wait := sc.delay()
			if sc.Mode == ModeHang {
				wait = time.Hour
			}
			select {
			case <-j.interrupted:
				f.end(j.job, OutcomeInterrupted)
				fail("execution_interrupted", map[string]any{"node_id": id, "node_type": "KSampler", "executed": []string{}})
				return false
			case <-f.stopped:
				return true
			case <-time.After(wait):
			}
		}
	}
	var out []byte
	if sc.Mode == ModeGarbage {
		out = []byte("not a png at all")
	} else {
		out = answer(sc.Mode, img, mask, job.Seed)
	}
	name := fmt.Sprintf("porchlight_%05d_.png", j.number)
	ref := map[string]any{"filename": name, "subfolder": "", "type": "output"}
	f.mu.Lock()
	f.outputs["output/"+name] = out
	f.mu.Unlock()
	f.end(j.job, OutcomeDone)
	f.send(j.client, "executed", map[string]any{"node": save, "display_node": save, "output": map[string]any{"images": []any{ref}}, "prompt_id": j.id})
	finish(map[string]any{save: map[string]any{"images": []any{ref}}}, "success",
		[]any{[]any{"execution_start", map[string]any{"prompt_id": j.id}}, []any{"execution_success", map[string]any{"prompt_id": j.id}}})
	return false
}

func redChannel(m image.Image) *image.Gray {
	b := m.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, _, _, _ := m.At(b.Min.X+x, b.Min.Y+y).RGBA()
			g.SetGray(x, y, color.Gray{Y: uint8(r >> 8)})
		}
	}
	return g
}

// Uploads returns the names of the uploaded files.
func (f *ComfyUI) Uploads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.uploads {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
