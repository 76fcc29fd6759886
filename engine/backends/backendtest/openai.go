package backendtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// openaiFields are the form fields of POST /v1/images/edits.
var openaiFields = map[string]bool{
	"image": true, "image[]": true, "mask": true, "prompt": true, "model": true, "n": true, "size": true,
	"response_format": true, "quality": true, "output_format": true, "output_compression": true,
	"background": true, "input_fidelity": true, "user": true, "stream": true, "partial_images": true,
}

// OpenAI is a fake OpenAI image edits endpoint.
type OpenAI struct {
	*state
	Server *httptest.Server
	URL    string
	// Key is the bearer token it requires ("" accepts any request).
	Key string

	mu    sync.Mutex
	files map[string][]byte // answers served by url
}

// NewOpenAI starts a fake image edits endpoint on 127.0.0.1 that requires key.
func NewOpenAI(t testing.TB, key string) *OpenAI {
	f := &OpenAI{state: newState(), Key: key, files: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/images/edits", f.edits)
	mux.HandleFunc("GET /files/{name}", f.file)
	mux.HandleFunc("GET /v1/models", f.models)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL
	t.Cleanup(f.Server.Close)
	return f
}

func openaiError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var p, c any
	if param != "" {
		p = param
	}
	if code != "" {
		c = code
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": p, "code": c}})
}

func (f *OpenAI) edits(w http.ResponseWriter, r *http.Request) {
	if f.Key != "" && r.Header.Get("Authorization") != "Bearer "+f.Key {
		// The API's front end takes the whole request before answering; refusing
		// half-way would reset a client still sending and hide the 401 behind it.
		io.Copy(io.Discard, r.Body)
		openaiError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key", "Incorrect API key provided.")
		return
	}
	if f.attempt() {
		openaiError(w, http.StatusServiceUnavailable, "server_error", "", "", "The server is overloaded or not ready yet.")
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "", "", "Content-Type must be multipart/form-data")
		return
	}
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		if r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) {
			return // the client gave up while uploading
		}
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
		return
	}
	io.Copy(io.Discard, r.Body) // reach EOF, so a client that goes away cancels r.Context()
	var names []string
	for k := range r.MultipartForm.Value {
		names = append(names, k)
	}
	for k := range r.MultipartForm.File {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !openaiFields[k] {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", k, "unknown_parameter", fmt.Sprintf("Unknown parameter: '%s'.", k))
			return
		}
	}
	model := r.FormValue("model")
	if model == "" {
		model = "dall-e-2"
	}
	gpt := strings.HasPrefix(model, "gpt-image")
	if gpt && r.FormValue("response_format") != "" {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "response_format", "unknown_parameter", "Unknown parameter: 'response_format'.")
		return
	}
	prompt := r.FormValue("prompt")
	if prompt == "" {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "prompt", "", "Missing required parameter: 'prompt'.")
		return
	}
	if n := r.FormValue("n"); n != "" && n != "1" {
		if v, err := strconv.Atoi(n); err != nil || v < 1 || v > 10 {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "n", "", "n must be 1 to 10")
			return
		}
	}
	sizes := map[string]bool{"256x256": !gpt, "512x512": !gpt, "1024x1024": true, "1536x1024": gpt, "1024x1536": gpt, "auto": gpt}
	size := r.FormValue("size")
	if size == "" {
		size = "1024x1024"
	}
	if !sizes[size] {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "size", "", fmt.Sprintf("Invalid size '%s' for %s.", size, model))
		return
	}
	if q := r.FormValue("quality"); q != "" && !map[string]bool{"low": gpt, "medium": gpt, "high": gpt, "auto": true, "standard": !gpt}[q] {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "quality", "", "Invalid quality "+q)
		return
	}
	imgFile := r.MultipartForm.File["image"]
	if len(imgFile) != 1 {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "", "Missing required parameter: 'image'.")
		return
	}
	// dall-e-2 takes a square PNG under 4 MB with an alpha channel (or gray); the
	// gpt-image models a PNG, JPEG or WebP under 25 MB.
	limit := int64(25 << 20)
	if !gpt {
		limit = 4 << 20
	}
	if imgFile[0].Size >= limit {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "", fmt.Sprintf("Invalid input image - image must be less than %d MB.", limit>>20))
		return
	}
	src, ctype, err := readPart(imgFile[0].Open, gpt)
	if err != nil {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "", "Invalid image file: "+err.Error())
		return
	}
	if !gpt && src.Bounds().Dx() != src.Bounds().Dy() {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "", "Uploaded image must be a square PNG.")
		return
	}
	if !gpt && ctype != pngRGBA && ctype != pngLA && ctype != pngL {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "",
			fmt.Sprintf("Invalid input image - format must be in ['RGBA', 'LA', 'L'], got %s.", pngModes[ctype]))
		return
	}
	var mask *image.Gray
	if mf := r.MultipartForm.File["mask"]; len(mf) == 1 {
		if mf[0].Size >= 4<<20 {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "mask", "", "Invalid input image - mask must be less than 4 MB.")
			return
		}
		mm, mtype, err := readPart(mf[0].Open, false)
		if err != nil {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "mask", "", "Invalid mask file: "+err.Error())
			return
		}
		if mm.Bounds().Size() != src.Bounds().Size() {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "mask", "", "Invalid input image - image and mask must have the same dimensions")
			return
		}
		if mtype != pngRGBA && mtype != pngLA {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "mask", "",
				fmt.Sprintf("Invalid input image - format must be in ['RGBA', 'LA'] with transparency, got %s.", pngModes[mtype]))
			return
		}
		mask = transparentRegion(mm)
	} else if !gpt {
		// Without a mask dall-e-2 edits where the image itself is transparent.
		if mask = transparentRegion(src); mask == nil {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "image", "",
				"Invalid input image - image must have transparency when no mask is given.")
			return
		}
	}
	stream := r.FormValue("stream") == "true"
	partials := 0
	if stream {
		if !gpt {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "stream", "", "Streaming is not supported for "+model)
			return
		}
		partials, _ = strconv.Atoi(r.FormValue("partial_images"))
		if partials < 0 || partials > 3 {
			openaiError(w, http.StatusBadRequest, "invalid_request_error", "partial_images", "", "partial_images must be 0 to 3")
			return
		}
	}
	// No seed in this protocol: the fake derives one from the prompt.
	h := fnv.New64a()
	io.WriteString(h, prompt)
	seed := int64(h.Sum64() >> 34)
	sc := f.get()
	var ow, oh int
	fmt.Sscanf(size, "%dx%d", &ow, &oh)
	if size == "auto" {
		ow, oh = src.Bounds().Dx(), src.Bounds().Dy()
	}
	job := f.record(Job{Prompt: prompt, Seed: seed, Width: src.Bounds().Dx(), Height: src.Bounds().Dy(), Masked: mask != nil, Model: model, Fields: names},
		OutcomeRunning)
	if sc.Mode == ModeFail {
		f.end(job, OutcomeFailed)
		st := sc.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		openaiError(w, st, "server_error", "", "", "CUDA out of memory while processing your request.")
		return
	}
	var fl http.Flusher
	if stream {
		fl, _ = w.(http.Flusher)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl.Flush()
	}
	steps := sc.steps()
	for i := 0; i < steps; i++ {
		if stream && i < partials {
			b := answer(ModeNormal, stretch(src, ow/4, oh/4), nil, seed)
			ev, _ := json.Marshal(map[string]any{"type": "image_edit.partial_image", "b64_json": base64.StdEncoding.EncodeToString(b),
				"partial_image_index": i, "created_at": time.Now().Unix(), "size": size, "quality": r.FormValue("quality")})
			fmt.Fprintf(w, "event: image_edit.partial_image\ndata: %s\n\n", ev)
			fl.Flush()
		}
		if sc.Mode == ModeDrop {
			f.Server.CloseClientConnections()
			f.Server.Listener.Close()
			return
		}
		wait := sc.delay()
		if sc.Mode == ModeHang {
			wait = time.Hour
		}
		select {
		case <-r.Context().Done():
			f.end(job, OutcomeAbandoned)
			return
		case <-time.After(wait):
		}
	}
	var out []byte
	if sc.Mode == ModeGarbage {
		out = []byte("GIF89a but not really")
	} else {
		base := stretch(src, ow, oh)
		var m *image.Gray
		if mask != nil {
			m = stretchGray(mask, ow, oh)
		}
		out = answer(sc.Mode, base, m, seed)
	}
	if stream {
		ev, _ := json.Marshal(map[string]any{"type": "image_edit.completed", "b64_json": base64.StdEncoding.EncodeToString(out),
			"created_at": time.Now().Unix(), "size": size, "usage": map[string]any{"total_tokens": 100}})
		fmt.Fprintf(w, "event: image_edit.completed\ndata: %s\n\n", ev)
		fl.Flush()
		return
	}
	item := map[string]any{"b64_json": base64.StdEncoding.EncodeToString(out)}
	if r.FormValue("response_format") == "url" {
		name := fmt.Sprintf("img-%x.png", seed)
		f.mu.Lock()
		f.files[name] = out
		f.mu.Unlock()
		item = map[string]any{"url": f.URL + "/files/" + name}
	}
	writeJSON(w, map[string]any{"created": time.Now().Unix(), "data": []any{item}})
}

// OpenAIModels are the models GET /v1/models lists.
var OpenAIModels = []string{"gpt-image-1", "dall-e-2", "dall-e-3", "gpt-4o"}

func (f *OpenAI) models(w http.ResponseWriter, r *http.Request) {
	if f.Key != "" && r.Header.Get("Authorization") != "Bearer "+f.Key {
		openaiError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key", "Incorrect API key provided.")
		return
	}
	var data []any
	for _, m := range OpenAIModels {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 1698785189, "owned_by": "system"})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

func (f *OpenAI) file(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	b, ok := f.files[r.PathValue("name")]
	f.mu.Unlock()
	if !ok || r.Header.Get("Authorization") != "" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b)
}

// PNG colour types (IHDR), as PIL names the modes they decode to.
const (
	pngL       = 0
	pngRGB     = 2
	pngPalette = 3
	pngLA      = 4
	pngRGBA    = 6
	notPNG     = -1
)

var pngModes = map[int]string{pngL: "L", pngRGB: "RGB", pngPalette: "P", pngLA: "LA", pngRGBA: "RGBA", notPNG: "not a PNG"}

// readPart decodes an uploaded image and says its PNG colour type; anyFormat also
// takes JPEG (gpt-image models).
func readPart(open func() (multipart.File, error), anyFormat bool) (image.Image, int, error) {
	fh, err := open()
	if err != nil {
		return nil, notPNG, err
	}
	defer fh.Close()
	b, err := io.ReadAll(fh)
	if err != nil {
		return nil, notPNG, err
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 26 {
		if !anyFormat {
			return nil, notPNG, fmt.Errorf("must be a PNG")
		}
		m, err := decodeImage(b)
		return m, notPNG, err
	}
	m, err := png.Decode(bytes.NewReader(b))
	return m, int(b[25]), err
}

// transparentRegion reads where an image is fully transparent, nil when nowhere.
func transparentRegion(m image.Image) *image.Gray {
	n := toNRGBA(m)
	g := image.NewGray(n.Rect)
	marked := false
	for y := 0; y < n.Rect.Dy(); y++ {
		for x := 0; x < n.Rect.Dx(); x++ {
			if n.Pix[y*n.Stride+4*x+3] == 0 {
				g.Pix[y*g.Stride+x] = 255
				marked = true
			}
		}
	}
	if !marked {
		return nil
	}
	return g
}
