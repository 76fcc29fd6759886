// Package openai is the backend adapter for OpenAI-compatible image edit endpoints:
// POST /v1/images/edits as multipart form data (image, mask, prompt, model, n,
// size, ...), answered with {"data": [{"b64_json": ...}]} (or a url, fetched), or,
// with stream set, as server-sent events "image_edit.partial_image" and
// "image_edit.completed" that also give progress.
//
// The protocol has fixed output sizes, so the photo is fitted to the size whose
// aspect is nearest (stretched, not cropped) and the answer stretched back. Its mask
// marks what to change with fully transparent pixels. dall-e-2 takes only a square
// RGBA (or gray) PNG under 4 MB, and edits only where something is transparent:
// without the order's mask the feature's region (see Region) is made transparent
// in the photo itself. It takes no seed: the same
// request can give different pixels each time, which is the endpoint's nature and
// the one exception to Porchlight's repeatable results. Cancelling closes the
// request; the protocol has no cancel of its own.
package openai

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Type is the adapter's config type.
var Type = backends.Type{
	Name: "openai",
	Keys: []string{"model", "sizes", "quality", "response_format", "stream", "partial_images", "input_fidelity", "organization"},
	New:  New,
}

// Backend is an OpenAI-compatible image edit endpoint.
type Backend struct {
	spec           backends.Spec
	call           *backends.Caller
	path           string
	model          string
	sizes          [][2]int
	quality        string
	responseFormat string
	stream         bool
	partials       int
	inputFidelity  string
}

// New builds the adapter from its config: model (default gpt-image-1), sizes (the
// output sizes the endpoint accepts, "1024x1024,1536x1024"; by default those of the
// model family), quality (low, medium, high, auto; by default from the step count of
// the gen_quality tier: gpt-image models only), response_format (b64_json or url;
// sent by default only to models other than gpt-image, which always answer base64),
// stream and partial_images (server-sent partial images for progress, gpt-image
// models), input_fidelity (high or low) and organization (OpenAI-Organization).
func New(spec backends.Spec) (backends.Backend, error) {
	b := &Backend{spec: spec}
	var err error
	if b.model, err = spec.String("model", "gpt-image-1"); err != nil {
		return nil, err
	}
	gptImage := strings.HasPrefix(b.model, "gpt-image")
	defSizes := "1024x1024"
	switch {
	case gptImage:
		defSizes = "1024x1024,1536x1024,1024x1536"
	case b.model == "dall-e-2":
		defSizes = "1024x1024"
	}
	sizes, err := spec.String("sizes", defSizes)
	if err != nil {
		return nil, err
	}
	for _, s := range strings.Split(sizes, ",") {
		w, h, ok := parseSize(strings.TrimSpace(s))
		if !ok {
			return nil, fmt.Errorf("%s: %q is not WIDTHxHEIGHT", spec.Field("sizes"), s)
		}
		if b.model == "dall-e-2" && (w != h || (w != 256 && w != 512 && w != 1024)) {
			return nil, fmt.Errorf("%s: dall-e-2 edits take 256x256, 512x512 or 1024x1024, not %s", spec.Field("sizes"), strings.TrimSpace(s))
		}
		b.sizes = append(b.sizes, [2]int{w, h})
	}
	if b.quality, err = spec.String("quality", ""); err != nil {
		return nil, err
	}
	// The edits endpoint's qualities: gpt-image models take low, medium, high and
	// auto; dall-e-2 standard and auto ("hd" is dall-e-3's, for generation only).
	qualities := []string{"", "low", "medium", "high", "auto", "standard"}
	switch {
	case gptImage:
		qualities = []string{"", "low", "medium", "high", "auto"}
	case b.model == "dall-e-2":
		qualities = []string{"", "standard", "auto"}
	}
	if !slices.Contains(qualities, b.quality) {
		return nil, fmt.Errorf("%s: %q is not a quality the edits endpoint takes for %s (one of %s)",
			spec.Field("quality"), b.quality, b.model, strings.Join(qualities[1:], ", "))
	}
	def := "b64_json"
	if gptImage {
		def = ""
	}
	if b.responseFormat, err = spec.String("response_format", def); err != nil {
		return nil, err
	}
	if b.responseFormat != "" && b.responseFormat != "b64_json" && b.responseFormat != "url" {
		return nil, fmt.Errorf("%s: %q is not b64_json or url", spec.Field("response_format"), b.responseFormat)
	}
	if b.stream, err = spec.Bool("stream", false); err != nil {
		return nil, err
	}
	if b.partials, err = spec.Int("partial_images", 2); err != nil {
		return nil, err
	}
	if b.partials < 0 || b.partials > 3 {
		return nil, fmt.Errorf("%s: must be 0 to 3", spec.Field("partial_images"))
	}
	if b.inputFidelity, err = spec.String("input_fidelity", ""); err != nil {
		return nil, err
	}
	org, err := spec.String("organization", "")
	if err != nil {
		return nil, err
	}
	b.call = backends.NewCaller(spec, spec.Name+" (openai)")
	if spec.APIKey != "" {
		b.call.Header.Set("Authorization", "Bearer "+spec.APIKey)
	}
	if org != "" {
		b.call.Header.Set("OpenAI-Organization", org)
	}
	// Both https://api.openai.com and https://api.openai.com/v1 are common base URLs.
	b.path = "/v1/images/edits"
	if strings.HasSuffix(spec.URL.Path, "/v1") {
		b.path = "/images/edits"
	}
	return b, nil
}

func (b *Backend) Name() string { return b.spec.Name }
func (b *Backend) Type() string { return Type.Name }

func parseSize(s string) (int, int, bool) {
	ws, hs, ok := strings.Cut(s, "x")
	if !ok {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w < 64 || h < 64 || w > 8192 || h > 8192 {
		return 0, 0, false
	}
	return w, h, true
}

// size picks the accepted size whose aspect is nearest the photo's.
func (b *Backend) size(w, h int) (int, int) {
	best, bestD := b.sizes[0], math.Inf(1)
	r := math.Log(float64(w) / float64(h))
	for _, s := range b.sizes {
		if d := math.Abs(math.Log(float64(s[0])/float64(s[1])) - r); d < bestD-1e-9 {
			best, bestD = s, d
		}
	}
	return best[0], best[1]
}

// quality maps the tier's step count when no quality is configured.
func (b *Backend) qualityFor(steps int) string {
	if b.quality != "" || !strings.HasPrefix(b.model, "gpt-image") {
		return b.quality
	}
	switch {
	case steps <= 20:
		return "low"
	case steps <= 35:
		return "medium"
	}
	return "high"
}

// Edit sends one image edit.
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, backends.Errorf(b, "prepare the request", "the image edit endpoint needs a prompt")
	}
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	sw, sh := b.size(req.Image.W(), req.Image.H())
	photo, mask, sw, sh, err := b.images(req, sw, sh)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	body, ctype, err := b.form(photo, mask, req, sw, sh)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	// A billed job that may have run is not sent twice.
	res, err := b.call.Do(ctx, backends.Call{Op: "image edit", Method: http.MethodPost, Path: b.path,
		Body: func() (io.Reader, error) { return bytes.NewReader(body), nil }, ContentType: ctype, Retry: backends.RetryUnsent})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer res.Body.Close()
	var data []byte
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		data, err = b.readStream(res.Body, &req)
	} else {
		data, err = b.readJSON(ctx, res.Body)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	out, err := backends.DecodeAnswer(data)
	if err != nil {
		return nil, backends.Errorf(b, "image edit", "%v", err)
	}
	if out.W() != req.Image.W() || out.H() != req.Image.H() {
		out = imaging.Resize(out, req.Image.W(), req.Image.H()) // undo the fit to an accepted size
	}
	req.Report(1)
	return out, nil
}

// dallE2Limit is dall-e-2's limit on the image and the mask ("less than 4MB").
const dallE2Limit = 4_000_000

// Region is the part of the frame a feature edits when the order has no mask, for
// endpoints that edit only where the image is transparent (dall-e-2): x0, y0, x1, y1
// as fractions of the width and height. Staging furnishes the floor, outdoor
// staging the ground, decluttering and the mess cleaner clear floors and surfaces;
// the walls, windows and sky above stay the photo's.
func Region(feature string) (x0, y0, x1, y1 float64) {
	switch feature {
	case backends.FeatureIndoorStaging:
		return 0.05, 0.40, 0.95, 1
	case backends.FeatureOutdoorStaging:
		return 0, 0.50, 1, 1
	}
	return 0, 0.30, 1, 1
}

// images encodes the photo and mask at w×h. dall-e-2 gets a square RGBA PNG under
// its limit whose transparency, without a mask, is the feature's region.
func (b *Backend) images(req backends.Request, w, h int) (photo, mask []byte, _, _ int, _ error) {
	fit := func(m *imaging.Image, w, h int) *imaging.Image {
		if m.W() != w || m.H() != h {
			return imaging.Resize(m, w, h)
		}
		return m
	}
	if b.model != "dall-e-2" {
		photo, err := backends.EncodePNG(fit(req.Image, w, h))
		if err == nil && req.Mask != nil {
			mask, err = backends.EncodeMask(fit(req.Mask, w, h), 0, 0, backends.MaskTransparent)
		}
		return photo, mask, w, h, err
	}
	if req.Feature == backends.FeatureMagicEraser && req.Mask == nil {
		return nil, nil, 0, 0, fmt.Errorf("the magic eraser needs a mask")
	}
	img := fit(req.Image, w, h)
	var clear func(x, y int) bool
	if req.Mask == nil {
		x0, y0, x1, y1 := Region(req.Feature)
		clear = func(x, y int) bool {
			fx, fy := (float64(x)+0.5)/float64(w), (float64(y)+0.5)/float64(h)
			return fx >= x0 && fx < x1 && fy >= y0 && fy < y1
		}
	}
	// Photo detail is 3 bytes a pixel at most and the alpha compresses to little,
	// so 1024x1024 stays under the limit; a check costs nothing.
	photo, err := backends.EncodePNGAlpha(img, clear, zlib.DefaultCompression)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if len(photo) >= dallE2Limit {
		return nil, nil, 0, 0, fmt.Errorf("the photo is a %.1f MB PNG at %dx%d, over dall-e-2's 4 MB; configure a smaller size", float64(len(photo))/1e6, w, h)
	}
	if req.Mask != nil {
		if mask, err = backends.EncodeMask(fit(req.Mask, w, h), 0, 0, backends.MaskTransparent); err != nil {
			return nil, nil, 0, 0, err
		}
	}
	return photo, mask, w, h, nil
}

func (b *Backend) form(photo, mask []byte, req backends.Request, w, h int) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	file := func(field, name string, data []byte) error {
		hdr := make(textproto.MIMEHeader)
		hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, field, name))
		hdr.Set("Content-Type", "image/png")
		p, err := mw.CreatePart(hdr)
		if err != nil {
			return err
		}
		_, err = p.Write(data)
		return err
	}
	if err := file("image", "photo.png", photo); err != nil {
		return nil, "", err
	}
	if mask != nil {
		if err := file("mask", "mask.png", mask); err != nil {
			return nil, "", err
		}
	}
	fields := [][2]string{{"prompt", req.Prompt}, {"model", b.model}, {"n", "1"}, {"size", fmt.Sprintf("%dx%d", w, h)}}
	if q := b.qualityFor(req.Steps); q != "" {
		fields = append(fields, [2]string{"quality", q})
	}
	if b.responseFormat != "" {
		fields = append(fields, [2]string{"response_format", b.responseFormat})
	}
	if b.inputFidelity != "" {
		fields = append(fields, [2]string{"input_fidelity", b.inputFidelity})
	}
	if b.stream {
		fields = append(fields, [2]string{"stream", "true"}, [2]string{"partial_images", strconv.Itoa(b.partials)})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

type imageData struct {
	B64JSON string `json:"b64_json"`
	URL     string `json:"url"`
}

// readJSON reads {"data": [{"b64_json"}]} or a url to fetch.
func (b *Backend) readJSON(ctx context.Context, r io.Reader) ([]byte, error) {
	raw, err := backends.ReadAll(r)
	if err != nil {
		return nil, backends.Errorf(b, "image edit", "reading the answer: %v", err)
	}
	var ans struct {
		Data []imageData `json:"data"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, backends.Errorf(b, "image edit", "the answer is not JSON: %v (%s)", err, backends.Snippet(raw))
	}
	if len(ans.Data) == 0 {
		return nil, backends.Errorf(b, "image edit", "the answer has no data: %s", backends.Snippet(raw))
	}
	d := ans.Data[0]
	switch {
	case d.B64JSON != "":
		img, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return nil, backends.Errorf(b, "image edit", "b64_json is not base64: %v", err)
		}
		return img, nil
	case d.URL != "":
		return b.fetch(ctx, d.URL)
	}
	return nil, backends.Errorf(b, "image edit", "the answer's data has neither b64_json nor url")
}

// fetch downloads an answer's url (a signed address: no credentials are sent).
func (b *Backend) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, backends.Errorf(b, "download the image", "%v", err)
	}
	res, err := b.call.Client.Do(req)
	if err != nil {
		return nil, backends.Errorf(b, "download the image", "%v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, &backends.Error{Backend: b.call.Backend, Op: "download the image", Status: res.StatusCode,
			Err: fmt.Errorf("%s", http.StatusText(res.StatusCode))}
	}
	data, err := backends.ReadAll(res.Body)
	if err != nil {
		return nil, backends.Errorf(b, "download the image", "%v", err)
	}
	return data, nil
}

// readStream reads the server-sent events of a streamed edit: partial images give
// progress, the completed event the result, an error event the failure.
func (b *Backend) readStream(r io.Reader, req *backends.Request) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), backends.MaxAnswerBytes)
	var event string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				event = ""
				continue
			}
			img, done, err := b.streamEvent(event, data.String(), req)
			if err != nil || done {
				return img, err
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, backends.Errorf(b, "image edit", "the event stream broke off: %v", err)
	}
	return nil, backends.Errorf(b, "image edit", "the event stream ended without an image_edit.completed event")
}

func (b *Backend) streamEvent(event, data string, req *backends.Request) ([]byte, bool, error) {
	var ev struct {
		Type         string          `json:"type"`
		B64JSON      string          `json:"b64_json"`
		PartialIndex int             `json:"partial_image_index"`
		Error        json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return nil, false, backends.Errorf(b, "image edit", "an event is not JSON: %v", err)
	}
	if ev.Type == "" {
		ev.Type = event
	}
	switch {
	case ev.Type == "image_edit.partial_image":
		req.Report(float64(ev.PartialIndex+1) / float64(b.partials+1))
		return nil, false, nil
	case ev.Type == "image_edit.completed":
		img, err := base64.StdEncoding.DecodeString(ev.B64JSON)
		if err != nil {
			return nil, true, backends.Errorf(b, "image edit", "b64_json is not base64: %v", err)
		}
		return img, true, nil
	case ev.Type == "error" || len(ev.Error) > 0:
		return nil, true, backends.Errorf(b, "image edit", "%s", backends.ErrorMessage([]byte(data)))
	}
	return nil, false, nil // unknown events are skipped
}

var _ backends.Backend = (*Backend)(nil)
