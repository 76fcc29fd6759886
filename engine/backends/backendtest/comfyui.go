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
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// comfyClass is a node type the fake knows: its inputs (kind: string, int, number,
// enum:a|b, or link:TYPE) and output types.
type comfyClass struct {
	inputs  map[string]string
	outputs []string
}

var comfyClasses = map[string]comfyClass{
	"CheckpointLoaderSimple": {map[string]string{"ckpt_name": "string"}, []string{"MODEL", "CLIP", "VAE"}},
	"LoadImage":              {map[string]string{"image": "upload"}, []string{"IMAGE", "MASK"}},
	"LoadImageMask":          {map[string]string{"image": "upload", "channel": "enum:alpha|red|green|blue"}, []string{"MASK"}},
	"VAEEncode":              {map[string]string{"pixels": "link:IMAGE", "vae": "link:VAE"}, []string{"LATENT"}},
	"CLIPTextEncode":         {map[string]string{"text": "string", "clip": "link:CLIP"}, []string{"CONDITIONING"}},
	"SetLatentNoiseMask":     {map[string]string{"samples": "link:LATENT", "mask": "link:MASK"}, []string{"LATENT"}},
	"KSampler": {map[string]string{"seed": "int", "steps": "int", "cfg": "number", "sampler_name": "string",
		"scheduler": "string", "denoise": "number", "model": "link:MODEL", "positive": "link:CONDITIONING",
		"negative": "link:CONDITIONING", "latent_image": "link:LATENT"}, []string{"LATENT"}},
	"VAEDecode":    {map[string]string{"samples": "link:LATENT", "vae": "link:VAE"}, []string{"IMAGE"}},
	"SaveImage":    {map[string]string{"images": "link:IMAGE", "filename_prefix": "string"}, nil},
	"PreviewImage": {map[string]string{"images": "link:IMAGE"}, nil},
}

// ComfyUI is a fake ComfyUI server: uploads, the prompt queue with one worker,
// history, view, queue deletes, interrupts and the WebSocket.
type ComfyUI struct {
	*state
	Server *httptest.Server
	URL    string

	mu       sync.Mutex
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
	nodes       map[string]comfyNode
	interrupted chan struct{}
	once        sync.Once
}

type comfyNode struct {
	Class  string         `json:"class_type"`
	Inputs map[string]any `json:"inputs"`
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
		f.running.once.Do(func() { close(f.running.interrupted) })
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
		comfyError(w, http.StatusBadRequest, "invalid_prompt", "body is not JSON: "+err.Error(), nil)
		return
	}
	for k := range body {
		switch k {
		case "prompt", "client_id", "extra_data", "number", "front", "prompt_id", "partial_execution_targets":
		default:
			comfyError(w, http.StatusBadRequest, "invalid_prompt", "unknown field "+k, nil)
			return
		}
	}
	raw, ok := body["prompt"]
	if !ok {
		comfyError(w, http.StatusBadRequest, "no_prompt", "No prompt provided", nil)
		return
	}
	var nodes map[string]comfyNode
	if err := json.Unmarshal(raw, &nodes); err != nil {
		comfyError(w, http.StatusBadRequest, "invalid_prompt", "prompt is not an object of nodes: "+err.Error(), nil)
		return
	}
	var client string
	if c, ok := body["client_id"]; ok {
		json.Unmarshal(c, &client)
	}
	if nodeErrs := f.validate(nodes); len(nodeErrs) > 0 {
		comfyError(w, http.StatusBadRequest, "prompt_outputs_failed_validation", "Prompt outputs failed validation", nodeErrs)
		return
	}
	f.mu.Lock()
	f.number++
	job := &comfyJob{id: fmt.Sprintf("prompt-%04d-%x", f.number, hash3(f.number, 0, 0, int64(len(raw)))), client: client,
		number: f.number, nodes: nodes, interrupted: make(chan struct{})}
	f.pending = append(f.pending, job)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	writeJSON(w, map[string]any{"prompt_id": job.id, "number": job.number, "node_errors": map[string]any{}})
}

// validate checks every node against the table, as ComfyUI's validate_prompt does.
func (f *ComfyUI) validate(nodes map[string]comfyNode) map[string]any {
	errs := map[string]any{}
	fail := func(id, class, msg string) {
		errs[id] = map[string]any{"errors": []any{map[string]any{"type": "value_not_valid", "message": msg, "details": msg}},
			"dependent_outputs": []any{}, "class_type": class}
	}
	outputs := 0
	for id, n := range nodes {
		cl, ok := comfyClasses[n.Class]
		if !ok {
			fail(id, n.Class, fmt.Sprintf("node type %q does not exist", n.Class))
			continue
		}
		if cl.outputs == nil {
			outputs++
		}
		for name := range n.Inputs {
			if _, ok := cl.inputs[name]; !ok {
				fail(id, n.Class, fmt.Sprintf("unknown input %q", name))
			}
		}
		for name, kind := range cl.inputs {
			v, ok := n.Inputs[name]
			if !ok {
				fail(id, n.Class, fmt.Sprintf("Required input is missing: %s", name))
				continue
			}
			if msg := f.checkInput(nodes, kind, v); msg != "" {
				fail(id, n.Class, name+": "+msg)
			}
		}
	}
	if outputs == 0 {
		errs["prompt"] = "Prompt has no outputs"
	}
	return errs
}

func (f *ComfyUI) checkInput(nodes map[string]comfyNode, kind string, v any) string {
	if s, ok := v.(string); ok && strings.Contains(s, "{{") {
		return fmt.Sprintf("unfilled placeholder %q", s)
	}
	switch {
	case kind == "string":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%v is not a string", v)
		}
	case kind == "upload":
		s, _ := v.(string)
		f.mu.Lock()
		_, ok := f.uploads["input/"+s]
		f.mu.Unlock()
		if !ok {
			return fmt.Sprintf("Invalid image file: %v", v)
		}
	case kind == "int":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			return fmt.Sprintf("%v is not an integer", v)
		}
	case kind == "number":
		if _, ok := v.(float64); !ok {
			return fmt.Sprintf("%v is not a number", v)
		}
	case strings.HasPrefix(kind, "enum:"):
		s, _ := v.(string)
		for _, e := range strings.Split(kind[5:], "|") {
			if s == e {
				return ""
			}
		}
		return fmt.Sprintf("Value not in list: %v", v)
	case strings.HasPrefix(kind, "link:"):
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			return fmt.Sprintf("%v is not a link [node_id, output]", v)
		}
		src, ok1 := l[0].(string)
		idx, ok2 := l[1].(float64)
		n, ok3 := nodes[src]
		if !ok1 || !ok2 || !ok3 {
			return fmt.Sprintf("link %v points to no node", v)
		}
		outs := comfyClasses[n.Class].outputs
		if int(idx) < 0 || int(idx) >= len(outs) || outs[int(idx)] != kind[5:] {
			return fmt.Sprintf("link %v is not a %s output", v, kind[5:])
		}
	}
	return ""
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
			f.cancel()
			continue
		}
		kept = append(kept, j)
	}
	f.pending = kept
	f.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// interrupt is POST /interrupt, with an optional {"prompt_id"} that must name the
// running prompt.
func (f *ComfyUI) interrupt(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	want := ""
	if len(bytes.TrimSpace(b)) > 0 {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		for k, v := range body {
			if k != "prompt_id" {
				http.Error(w, "unknown field "+k, http.StatusBadRequest)
				return
			}
			json.Unmarshal(v, &want)
		}
	}
	f.mu.Lock()
	if j := f.running; j != nil && (want == "" || want == j.id) {
		j.once.Do(func() { close(j.interrupted); f.cancel() })
	}
	f.mu.Unlock()
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
	var img image.Image
	var mask *image.Gray
	var job Job
	var sampler, save string
	for id, n := range j.nodes {
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
			sampler = id
		case "SaveImage", "PreviewImage":
			save = id
		case "CheckpointLoaderSimple":
			job.Model, _ = n.Inputs["ckpt_name"].(string)
		}
	}
	ks := j.nodes[sampler].Inputs
	text := func(link any) string {
		l, _ := link.([]any)
		if len(l) == 2 {
			if id, ok := l[0].(string); ok {
				s, _ := j.nodes[id].Inputs["text"].(string)
				return s
			}
		}
		return ""
	}
	num := func(v any) float64 { n, _ := v.(float64); return n }
	job.Prompt, job.Negative = text(ks["positive"]), text(ks["negative"])
	job.Seed, job.Steps = int64(num(ks["seed"])), int(num(ks["steps"]))
	job.Strength, job.Guidance = num(ks["denoise"]), num(ks["cfg"])
	job.Width, job.Height = img.Bounds().Dx(), img.Bounds().Dy()
	job.Masked = mask != nil
	for k := range ks {
		job.Fields = append(job.Fields, k)
	}
	sort.Strings(job.Fields)
	f.record(job)

	f.send(j.client, "execution_start", map[string]any{"prompt_id": j.id, "timestamp": time.Now().UnixMilli()})
	f.send(j.client, "executing", map[string]any{"node": sampler, "display_node": sampler, "prompt_id": j.id})
	fail := func(kind string, data map[string]any) {
		data["prompt_id"] = j.id
		f.send(j.client, kind, data)
		f.mu.Lock()
		f.history[j.id] = map[string]any{"prompt": queueItem(j), "outputs": map[string]any{},
			"status": map[string]any{"status_str": "error", "completed": false,
				"messages": []any{[]any{"execution_start", map[string]any{"prompt_id": j.id}}, []any{kind, data}}}}
		f.mu.Unlock()
	}
	if sc.Mode == ModeFail {
		fail("execution_error", map[string]any{"node_id": sampler, "node_type": "KSampler", "executed": []string{},
			"exception_message": "CUDA out of memory. Tried to allocate 2.00 GiB", "exception_type": "torch.OutOfMemoryError",
			"traceback": []string{}, "current_inputs": map[string]any{}, "current_outputs": map[string]any{}})
		return false
	}
	steps := job.Steps
	if sc.Steps > 0 {
		steps = sc.Steps
	}
	steps = max(steps, 1)
	for i := 1; i <= steps; i++ {
		f.send(j.client, "progress", map[string]any{"value": i, "max": steps, "prompt_id": j.id, "node": sampler})
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
			fail("execution_interrupted", map[string]any{"node_id": sampler, "node_type": "KSampler", "executed": []string{}})
			return false
		case <-f.stopped:
			return true
		case <-time.After(wait):
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
	f.history[j.id] = map[string]any{"prompt": queueItem(j),
		"outputs": map[string]any{save: map[string]any{"images": []any{ref}}},
		"status": map[string]any{"status_str": "success", "completed": true,
			"messages": []any{[]any{"execution_start", map[string]any{"prompt_id": j.id}},
				[]any{"execution_success", map[string]any{"prompt_id": j.id}}}}}
	f.mu.Unlock()
	f.send(j.client, "executed", map[string]any{"node": save, "display_node": save, "output": map[string]any{"images": []any{ref}}, "prompt_id": j.id})
	f.send(j.client, "executing", map[string]any{"node": nil, "prompt_id": j.id})
	f.send(j.client, "execution_success", map[string]any{"prompt_id": j.id, "timestamp": time.Now().UnixMilli()})
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
