// Package comfyui is the backend adapter for ComfyUI: the photo (and mask) go up
// through POST /upload/image (multipart), the feature's workflow template, filled in,
// is queued with POST /prompt {prompt, client_id}, progress comes over the WebSocket
// /ws?clientId= ("progress", "executing", "execution_success", "execution_error",
// "execution_interrupted" messages), the result is found in GET /history/{prompt_id}
// (polled as well, so a lost WebSocket costs only progress) and fetched with GET
// /view?filename=&subfolder=&type=. Cancelling removes the prompt from the queue
// (POST /queue {"delete": [id]}) and, when it is the one running, interrupts it
// (POST /interrupt).
//
// Each feature needs a workflow exported in ComfyUI's API format, with placeholders
// such as {{image}}, {{prompt}}, {{seed}} where the job's values go (see Ph*); the
// examples in workflows/ are an img2img workflow for the generative features and an
// inpainting one for the magic eraser.
package comfyui

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Type is the adapter's config type.
var Type = backends.Type{
	Name: "comfyui",
	Keys: []string{"workflows", "output_node", "model", "progress", "poll_interval"},
	New:  New,
}

// Backend is a ComfyUI server with a workflow per feature.
type Backend struct {
	spec      backends.Spec
	call      *backends.Caller
	workflows map[string]*workflow
	model     string
	progress  bool
	poll      time.Duration
}

// New builds the adapter from its config: workflows (feature -> template file, API
// format), output_node (the node whose images are the result, when a workflow has
// several), model ({{model}}), progress (WebSocket, default true), poll_interval
// (how often /history is read, default 500ms).
func New(spec backends.Spec) (backends.Backend, error) {
	b := &Backend{spec: spec, workflows: map[string]*workflow{}}
	files, err := spec.StringMap("workflows")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: needs a workflow per feature, e.g. workflows: {indoor_staging: /path/to/staging.json}", spec.Field("workflows"))
	}
	out, err := spec.String("output_node", "")
	if err != nil {
		return nil, err
	}
	for feature, file := range files {
		if !backends.KnownFeature(feature) {
			return nil, fmt.Errorf("%s.%s: not a feature that runs on a model backend (one of %s)",
				spec.Field("workflows"), feature, strings.Join(backends.Features, ", "))
		}
		wf, err := loadWorkflow(file, out)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", spec.Field("workflows"), feature, err)
		}
		b.workflows[feature] = wf
	}
	if b.model, err = spec.String("model", ""); err != nil {
		return nil, err
	}
	for f, wf := range b.workflows {
		if wf.uses[PhModel] && b.model == "" {
			return nil, fmt.Errorf("%s.%s uses {{model}} but %s is not set", spec.Field("workflows"), f, spec.Field("model"))
		}
	}
	if b.progress, err = spec.Bool("progress", true); err != nil {
		return nil, err
	}
	if b.poll, err = spec.Duration("poll_interval", 500*time.Millisecond); err != nil {
		return nil, err
	}
	b.call = backends.NewCaller(spec, spec.Name+" (comfyui)")
	if spec.APIKey != "" {
		b.call.Header.Set("Authorization", "Bearer "+spec.APIKey) // for a proxy in front of ComfyUI
	}
	return b, nil
}

func (b *Backend) Name() string { return b.spec.Name }
func (b *Backend) Type() string { return Type.Name }

// CheckFeature needs a workflow for the feature, and one with a mask for the
// magic eraser.
func (b *Backend) CheckFeature(feature string) error {
	wf, ok := b.workflows[feature]
	if !ok {
		return fmt.Errorf("%s.%s is not set: ComfyUI needs a workflow for it", b.spec.Field("workflows"), feature)
	}
	if feature == backends.FeatureMagicEraser && !wf.uses[PhMask] {
		return fmt.Errorf("%s: the magic eraser's workflow has no {{mask}} placeholder", wf.path)
	}
	return nil
}

// Edit runs the feature's workflow.
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	if err := b.CheckFeature(req.Feature); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	wf := b.workflows[req.Feature]
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()

	photo, err := backends.EncodePNG(req.Image)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	values := map[string]any{
		PhPrompt: req.Prompt, PhNegative: req.Negative, PhSeed: req.Seed, PhSteps: req.Steps,
		PhDenoise: req.Strength, PhCFG: req.Guidance, PhWidth: req.Image.W(), PhHeight: req.Image.H(), PhModel: b.model,
	}
	if values[PhImage], err = b.upload(ctx, "porchlight", photo); err != nil {
		return nil, err
	}
	if wf.uses[PhMask] {
		mask, err := backends.EncodeMask(req.Mask, req.Image.W(), req.Image.H(), backends.MaskGray)
		if err != nil {
			return nil, backends.Errorf(b, "prepare the request", "%v", err)
		}
		if values[PhMask], err = b.upload(ctx, "porchlight-mask", mask); err != nil {
			return nil, err
		}
	}
	prompt, err := wf.fill(values)
	if err != nil {
		return nil, backends.Errorf(b, "fill the workflow", "%s: %v", wf.path, err)
	}

	clientID := randomID()
	var mu sync.Mutex // keeps the WebSocket's progress reports and the final one apart
	events := make(chan string, 16)
	var ws *websocket.Conn
	if b.progress {
		ws = b.dialEvents(ctx, clientID)
	}
	var wsDone chan struct{}
	if ws != nil {
		wsDone = make(chan struct{})
		go func() {
			defer close(wsDone)
			b.readEvents(ws, func(f float64) {
				mu.Lock()
				defer mu.Unlock()
				req.Report(f)
			}, events)
		}()
		defer func() { ws.Close(); <-wsDone }()
	}

	id, err := b.queue(ctx, prompt, clientID)
	if err != nil {
		return nil, err
	}
	entry, err := b.wait(ctx, id, events)
	if err != nil {
		if ctx.Err() != nil {
			b.cancelPrompt(ctx, id)
			return nil, ctx.Err()
		}
		return nil, err
	}
	img, err := b.fetchResult(ctx, wf, entry)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if ws != nil {
		ws.Close()
		<-wsDone
	}
	mu.Lock()
	req.Report(1)
	mu.Unlock()
	return img, nil
}

// upload sends a PNG as multipart "image" with overwrite, named after its content so a
// repeated job reuses the file.
func (b *Backend) upload(ctx context.Context, prefix string, png []byte) (string, error) {
	sum := sha256.Sum256(png)
	name := prefix + "-" + hex.EncodeToString(sum[:12]) + ".png"
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image"; filename="%s"`, name))
	h.Set("Content-Type", "image/png")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	pw.Write(png)
	mw.WriteField("overwrite", "true")
	mw.WriteField("type", "input")
	if err := mw.Close(); err != nil {
		return "", err
	}
	body := buf.Bytes()
	var ans struct {
		Name      string `json:"name"`
		Subfolder string `json:"subfolder"`
		Type      string `json:"type"`
	}
	err = b.call.JSON(ctx, backends.Call{
		Op: "upload " + prefix, Method: http.MethodPost, Path: "/upload/image",
		Body:        func() (io.Reader, error) { return bytes.NewReader(body), nil },
		ContentType: mw.FormDataContentType(), Retry: backends.RetrySafe,
	}, &ans)
	if err != nil {
		return "", err
	}
	if ans.Name == "" {
		return "", backends.Errorf(b, "upload "+prefix, "the answer names no file")
	}
	if ans.Subfolder != "" {
		return path.Join(ans.Subfolder, ans.Name), nil
	}
	return ans.Name, nil
}

// queue posts the filled workflow; a refused one reports ComfyUI's node errors.
func (b *Backend) queue(ctx context.Context, prompt map[string]any, clientID string) (string, error) {
	body, err := backends.JSONBody(map[string]any{"prompt": prompt, "client_id": clientID})
	if err != nil {
		return "", backends.Errorf(b, "queue the workflow", "%v", err)
	}
	var ans struct {
		PromptID string `json:"prompt_id"`
	}
	err = b.call.JSON(ctx, backends.Call{
		Op: "queue the workflow", Method: http.MethodPost, Path: "/prompt",
		Body: body, ContentType: "application/json", Retry: backends.RetryUnsent,
	}, &ans)
	if err != nil {
		return "", err
	}
	if ans.PromptID == "" {
		return "", backends.Errorf(b, "queue the workflow", "the answer has no prompt_id")
	}
	return ans.PromptID, nil
}

// historyEntry is one prompt of GET /history/{id}.
type historyEntry struct {
	Outputs map[string]struct {
		Images []imageRef `json:"images"`
	} `json:"outputs"`
	Status struct {
		StatusStr string              `json:"status_str"`
		Completed bool                `json:"completed"`
		Messages  [][]json.RawMessage `json:"messages"`
	} `json:"status"`
}

type imageRef struct {
	Filename  string `json:"filename"`
	Subfolder string `json:"subfolder"`
	Type      string `json:"type"`
}

// wait polls /history until the prompt finished, early when the WebSocket says
// something happened to it.
func (b *Backend) wait(ctx context.Context, id string, events <-chan string) (*historyEntry, error) {
	t := time.NewTicker(b.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		case <-events:
		}
		var hist map[string]historyEntry
		err := b.call.JSON(ctx, backends.Call{Op: "read the history", Method: http.MethodGet,
			Path: "/history/" + url.PathEscape(id), Retry: backends.RetrySafe}, &hist)
		if err != nil {
			return nil, err
		}
		e, ok := hist[id]
		if !ok {
			continue // still queued or running
		}
		switch {
		case e.Status.StatusStr == "error":
			return nil, backends.Errorf(b, "run the workflow", "%s", executionError(e.Status.Messages))
		case e.Status.Completed || (e.Status.StatusStr == "" && len(e.Outputs) > 0):
			return &e, nil
		case e.Status.StatusStr == "success":
			return &e, nil
		}
	}
}

// executionError finds ComfyUI's execution_error (or interruption) in a history's
// messages.
func executionError(msgs [][]json.RawMessage) string {
	for _, m := range msgs {
		if len(m) < 2 {
			continue
		}
		var name string
		json.Unmarshal(m[0], &name)
		var d struct {
			NodeID           string `json:"node_id"`
			NodeType         string `json:"node_type"`
			ExceptionMessage string `json:"exception_message"`
			ExceptionType    string `json:"exception_type"`
		}
		json.Unmarshal(m[1], &d)
		switch name {
		case "execution_error":
			return fmt.Sprintf("node %s (%s) failed: %s: %s", d.NodeID, d.NodeType, d.ExceptionType, strings.TrimSpace(d.ExceptionMessage))
		case "execution_interrupted":
			return fmt.Sprintf("interrupted at node %s (%s)", d.NodeID, d.NodeType)
		}
	}
	return "the workflow failed without a message"
}

// fetchResult downloads the output node's first image.
func (b *Backend) fetchResult(ctx context.Context, wf *workflow, e *historyEntry) (*imaging.Image, error) {
	out, ok := e.Outputs[wf.output]
	if !ok || len(out.Images) == 0 {
		var got []string
		for id := range e.Outputs {
			got = append(got, id)
		}
		sort.Strings(got)
		return nil, backends.Errorf(b, "read the result", "node %s of %s produced no image (outputs from nodes %v)", wf.output, wf.path, got)
	}
	ref := out.Images[0]
	q := url.Values{"filename": {ref.Filename}, "subfolder": {ref.Subfolder}, "type": {ref.Type}}
	res, err := b.call.Do(ctx, backends.Call{Op: "download the result", Method: http.MethodGet, Path: "/view", Query: q, Retry: backends.RetrySafe})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := backends.ReadAll(res.Body)
	if err != nil {
		return nil, backends.Errorf(b, "download the result", "%v", err)
	}
	img, err := backends.DecodeAnswer(data)
	if err != nil {
		return nil, backends.Errorf(b, "download the result", "%s: %v", ref.Filename, err)
	}
	return img, nil
}

// cancelPrompt removes the prompt from the queue and interrupts it when it is the
// one running (an interrupt stops whatever runs, so it is sent only then).
func (b *Backend) cancelPrompt(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if body, err := backends.JSONBody(map[string]any{"delete": []string{id}}); err == nil {
		b.call.Do(cctx, backends.Call{Op: "remove the prompt from the queue", Method: http.MethodPost, Path: "/queue",
			Body: body, ContentType: "application/json", Retry: backends.RetryNever})
	}
	var q struct {
		Running [][]json.RawMessage `json:"queue_running"`
	}
	if err := b.call.JSON(cctx, backends.Call{Op: "read the queue", Method: http.MethodGet, Path: "/queue", Retry: backends.RetryNever}, &q); err != nil {
		return
	}
	for _, item := range q.Running {
		var pid string
		if len(item) > 1 && json.Unmarshal(item[1], &pid) == nil && pid == id {
			if body, err := backends.JSONBody(map[string]any{"prompt_id": id}); err == nil {
				b.call.Do(cctx, backends.Call{Op: "interrupt the prompt", Method: http.MethodPost, Path: "/interrupt",
					Body: body, ContentType: "application/json", Retry: backends.RetryNever})
			}
			return
		}
	}
}

// dialEvents opens the WebSocket; nil when it cannot (progress then comes only at
// the end, completion from polling).
func (b *Backend) dialEvents(ctx context.Context, clientID string) *websocket.Conn {
	u := *b.spec.URL
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path = b.spec.URL.Path + "/ws"
	u.RawQuery = url.Values{"clientId": {clientID}}.Encode()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, res, err := websocket.DefaultDialer.DialContext(dctx, u.String(), b.call.Header)
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	if err != nil {
		return nil
	}
	go func() { <-ctx.Done(); c.Close() }()
	return c
}

// readEvents turns the WebSocket's JSON messages into progress and wake-ups of the
// history poll. Binary messages (previews) are skipped.
func (b *Backend) readEvents(c *websocket.Conn, report func(float64), wake chan<- string) {
	for {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if typ != websocket.TextMessage {
			continue
		}
		var m struct {
			Type string `json:"type"`
			Data struct {
				Value    float64 `json:"value"`
				Max      float64 `json:"max"`
				PromptID string  `json:"prompt_id"`
				Node     *string `json:"node"`
			} `json:"data"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		switch m.Type {
		case "progress":
			if m.Data.Max > 0 {
				report(m.Data.Value / m.Data.Max * 0.95)
			}
		case "execution_success", "execution_error", "execution_interrupted":
			select {
			case wake <- m.Type:
			default:
			}
		case "executing":
			if m.Data.Node == nil {
				select {
				case wake <- m.Type:
				default:
				}
			}
		}
	}
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("comfyui: no randomness: " + err.Error()))
	}
	return hex.EncodeToString(b[:])
}

var _ backends.Backend = (*Backend)(nil)
