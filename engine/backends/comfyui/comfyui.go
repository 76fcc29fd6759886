// Package comfyui is the backend adapter for ComfyUI: the photo (and mask) go up
// through POST /upload/image (multipart), the feature's workflow template, filled in,
// is queued with POST /prompt {prompt, client_id}, progress comes over the WebSocket
// /ws?clientId= ("progress", "executing", "execution_success", "execution_error",
// "execution_interrupted" messages), the result is found in GET /history/{prompt_id}
// (polled as well, so a lost WebSocket costs only progress) and fetched with GET
// /view?filename=&subfolder=&type=.
//
// On a server other clients use: each job has a client id of its own, so the
// WebSocket brings only its messages; progress keeps the highest fraction seen
// (every sampler of a workflow counts from zero); a run fails on its
// execution_error message, or when its history entry, which older servers write
// without a status, holds no image from the output node. Cancelling finds the
// prompt in GET /queue (by its id, or by our client id when its id never came back)
// and removes it from the queue while it waits (POST /queue {"delete"}), or
// interrupts it while it runs (POST /interrupt {"prompt_id"}: newer servers stop
// only that prompt, older ones whatever runs, so it is sent only right after
// /queue showed ours running). The prompt's id is ours too (prompt_id in POST
// /prompt, which newer servers keep), and a prompt whose answer was lost is
// cancelled, never queued twice.
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

	clientID, promptID := randomID(), uuid()
	var mu sync.Mutex // keeps the WebSocket's progress reports and the final one apart
	ev := &events{wake: make(chan struct{}, 1)}
	var ws *websocket.Conn
	if b.progress {
		ws = b.dialEvents(ctx, clientID)
	}
	var wsDone chan struct{}
	if ws != nil {
		wsDone = make(chan struct{})
		last := 0.0
		go func() {
			defer close(wsDone)
			b.readEvents(ws, func(f float64) {
				mu.Lock()
				defer mu.Unlock()
				if f > last { // several samplers each count from zero
					last = f
					req.Report(f)
				}
			}, ev)
		}()
		defer func() { ws.Close(); <-wsDone }()
	}

	id, err := b.queue(ctx, prompt, clientID, promptID)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, backends.ErrMaybeStarted) {
			// The server may have queued it without our hearing: find it and take it back.
			b.cancelPrompt(ctx, promptID, clientID, false)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		return nil, err
	}
	entry, err := b.wait(ctx, wf, id, ev)
	if err != nil {
		if ctx.Err() != nil {
			b.cancelPrompt(ctx, id, clientID, true)
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
func (b *Backend) queue(ctx context.Context, prompt map[string]any, clientID, promptID string) (string, error) {
	body, err := backends.JSONBody(map[string]any{"prompt": prompt, "client_id": clientID, "prompt_id": promptID})
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

// historyEntry is one prompt of GET /history/{id}. Servers before mid-2023 write no
// status: an entry is there only once the prompt ended.
type historyEntry struct {
	Outputs map[string]struct {
		Images []imageRef `json:"images"`
	} `json:"outputs"`
	Status *struct {
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

// events is what the WebSocket told of our prompt.
type events struct {
	wake   chan struct{} // something happened: read the history
	mu     sync.Mutex
	failed string // execution_error's account
}

func (e *events) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *events) failure() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failed
}

// wait polls /history until the prompt ended, early when the WebSocket says
// something happened to it.
func (b *Backend) wait(ctx context.Context, wf *workflow, id string, ev *events) (*historyEntry, error) {
	t := time.NewTicker(b.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		case <-ev.wake:
		}
		if msg := ev.failure(); msg != "" {
			return nil, backends.Errorf(b, "run the workflow", "%s", msg)
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
		case e.Status == nil:
			// An older server: the entry means the run ended; without the output
			// node's image it failed.
			if out, ok := e.Outputs[wf.output]; ok && len(out.Images) > 0 {
				return &e, nil
			}
			if msg := ev.failure(); msg != "" {
				return nil, backends.Errorf(b, "run the workflow", "%s", msg)
			}
			return nil, backends.Errorf(b, "run the workflow", "the run ended without an image from node %s of %s (the server's log says why)", wf.output, wf.path)
		case e.Status.StatusStr == "error":
			return nil, backends.Errorf(b, "run the workflow", "%s", executionError(e.Status.Messages))
		case e.Status.Completed || e.Status.StatusStr == "success" || (e.Status.StatusStr == "" && len(e.Outputs) > 0):
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
		if msg := failureMessage(name, m[1]); msg != "" {
			return msg
		}
	}
	return "the workflow failed without a message"
}

// failureMessage tells an execution_error or execution_interrupted; "" for other
// messages.
func failureMessage(name string, data json.RawMessage) string {
	var d struct {
		NodeID           string `json:"node_id"`
		NodeType         string `json:"node_type"`
		ExceptionMessage string `json:"exception_message"`
		ExceptionType    string `json:"exception_type"`
	}
	json.Unmarshal(data, &d)
	switch name {
	case "execution_error":
		return fmt.Sprintf("node %s (%s) failed: %s: %s", d.NodeID, d.NodeType, d.ExceptionType, strings.TrimSpace(d.ExceptionMessage))
	case "execution_interrupted":
		return fmt.Sprintf("interrupted at node %s (%s)", d.NodeID, d.NodeType)
	}
	return ""
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

// cancelPrompt takes our prompt back: off the queue while it waits, interrupted
// while it runs, and nothing once it ended. It is found by id, or by our client id
// (an older server chose another id, or the answer never came); answered says the
// server told us the id, so a prompt not in the queue has ended. /interrupt
// follows the /queue that showed ours running, as close as the protocol allows:
// an older server stops whatever runs by then.
func (b *Backend) cancelPrompt(ctx context.Context, id, clientID string, answered bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.spec.Timeout)
	if b.takeBack(cctx, id, clientID, answered, 10) || answered {
		cancel()
		return
	}
	// Unanswered, it may reach the queue later (the server validates it first):
	// keep looking a while, without holding up the job's end.
	go func() {
		defer cancel()
		b.takeBack(cctx, id, clientID, false, 100)
	}()
}

// takeBack looks for our prompt up to looks times; done says it is off the queue
// and not running, or was interrupted and ended.
func (b *Backend) takeBack(ctx context.Context, id, clientID string, answered bool, looks int) (done bool) {
	t := time.NewTicker(b.poll)
	defer t.Stop()
	interrupted := false
	for ; looks > 0; looks-- {
		running, pending, err := b.findPrompt(ctx, id, clientID)
		if err != nil {
			return true
		}
		switch {
		case running != "" && !interrupted:
			if body, err := backends.JSONBody(map[string]any{"prompt_id": running}); err == nil {
				b.call.Do(ctx, backends.Call{Op: "interrupt the prompt", Method: http.MethodPost, Path: "/interrupt",
					Body: body, ContentType: "application/json", Retry: backends.RetryNever})
			}
			interrupted = true
		case len(pending) > 0:
			if body, err := backends.JSONBody(map[string]any{"delete": pending}); err == nil {
				b.call.Do(ctx, backends.Call{Op: "remove the prompt from the queue", Method: http.MethodPost, Path: "/queue",
					Body: body, ContentType: "application/json", Retry: backends.RetryNever})
			}
			answered = true // it was in the queue: once gone, it is gone
		case running == "" && (answered || interrupted):
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-t.C:
		}
	}
	return false
}

// findPrompt reads GET /queue for our prompt: the id it runs under, or those it
// waits under.
func (b *Backend) findPrompt(ctx context.Context, id, clientID string) (running string, pending []string, err error) {
	var q struct {
		Running [][]json.RawMessage `json:"queue_running"`
		Pending [][]json.RawMessage `json:"queue_pending"`
	}
	if err := b.call.JSON(ctx, backends.Call{Op: "read the queue", Method: http.MethodGet, Path: "/queue", Retry: backends.RetrySafe}, &q); err != nil {
		return "", nil, err
	}
	// An item is [number, prompt_id, prompt, extra_data, outputs].
	ours := func(item []json.RawMessage) string {
		var pid string
		if len(item) < 2 || json.Unmarshal(item[1], &pid) != nil {
			return ""
		}
		var extra struct {
			ClientID string `json:"client_id"`
		}
		if len(item) > 3 {
			json.Unmarshal(item[3], &extra)
		}
		if pid == id || (clientID != "" && extra.ClientID == clientID) {
			return pid
		}
		return ""
	}
	for _, it := range q.Running {
		if pid := ours(it); pid != "" {
			running = pid
		}
	}
	for _, it := range q.Pending {
		if pid := ours(it); pid != "" {
			pending = append(pending, pid)
		}
	}
	return running, pending, nil
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

// readEvents turns the WebSocket's JSON messages into progress, failures and
// wake-ups of the history poll. ComfyUI sends a prompt's messages to its client
// id's socket only, so all of them are ours. Binary messages (previews) are
// skipped.
func (b *Backend) readEvents(c *websocket.Conn, report func(float64), ev *events) {
	for {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if typ != websocket.TextMessage {
			continue
		}
		var m struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		var d struct {
			Value float64 `json:"value"`
			Max   float64 `json:"max"`
			Node  *string `json:"node"`
		}
		json.Unmarshal(m.Data, &d)
		switch m.Type {
		case "progress":
			if d.Max > 0 {
				report(d.Value / d.Max * 0.95)
			}
		case "execution_error":
			ev.mu.Lock()
			ev.failed = failureMessage(m.Type, m.Data)
			ev.mu.Unlock()
			ev.poke()
		case "execution_success", "execution_interrupted":
			ev.poke()
		case "executing":
			if d.Node == nil {
				ev.poke()
			}
		}
	}
}

// uuid is a random version 4 UUID, the form of ComfyUI's own prompt ids.
func uuid() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("comfyui: no randomness: " + err.Error()))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("comfyui: no randomness: " + err.Error()))
	}
	return hex.EncodeToString(b[:])
}

var _ backends.Backend = (*Backend)(nil)
