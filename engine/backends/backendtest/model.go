// Package backendtest holds in-process servers that speak the model backends'
// protocols (IOPaint, ComfyUI, AUTOMATIC1111, OpenAI image edits) strictly, for the
// adapters' contract tests and for tests of the generative features end to end.
// Each server checks every request against the protocol's documented shape and
// refuses unknown or misspelt fields, reports progress the way the real server does,
// honours the protocol's cancel, and can be scripted to fail, hang, answer something
// that is not a result, or go away in the middle of a job.
//
// The "model" they run is Paint: deterministic in its seed, it repaints the masked
// region (or, without a mask, a block where furniture would go) and nudges every
// other pixel by a level or two, like a real model's round trip through its latent
// space, so tests can tell a composited result from the raw answer.
package backendtest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg"
	"image/png"
	"sync"
	"time"
)

// Mode is how a fake server answers jobs.
type Mode int

const (
	ModeNormal  Mode = iota // run the job and answer the painted image
	ModeFail                // answer the job with Script.Status
	ModeHang                // report one step, then wait until the job is cancelled
	ModeBlank               // answer a uniform black image (a safety filter's answer)
	ModeEcho                // answer the input image unchanged
	ModeGarbage             // answer bytes that are not an image
	ModeTiny                // answer an 8x8 image
	ModeDrop                // after the first step, drop every connection and stop listening
)

// Script scripts a fake server.
type Script struct {
	Mode Mode
	// Status is the HTTP status of ModeFail (500 when 0).
	Status int
	// FailFirst makes the first n job requests answer 503 before jobs work.
	FailFirst int
	// Steps is the number of progress steps a job reports (4 when 0).
	Steps int
	// StepDelay is the time each step takes (5 ms when 0).
	StepDelay time.Duration
	// DropAnswer makes the server read a job request, start the job and close the
	// connection without answering, as a broken network does: the job runs on.
	DropAnswer bool
}

func (s Script) steps() int {
	if s.Steps <= 0 {
		return 4
	}
	return s.Steps
}

func (s Script) delay() time.Duration {
	if s.StepDelay <= 0 {
		return 5 * time.Millisecond
	}
	return s.StepDelay
}

// Outcome is what became of a job on a fake server.
type Outcome string

const (
	OutcomeWaiting     Outcome = "waiting"     // received, waiting for the server's model (a queue)
	OutcomeRunning     Outcome = "running"     // the model is working on it
	OutcomeDone        Outcome = "done"        // answered with an image
	OutcomeFailed      Outcome = "failed"      // the model failed (ModeFail)
	OutcomeInterrupted Outcome = "interrupted" // stopped by an interrupt
	OutcomeDeleted     Outcome = "deleted"     // taken off the queue before it ran
	OutcomeAbandoned   Outcome = "abandoned"   // its client went away and the server dropped it
)

// Ended reports whether o is final.
func (o Outcome) Ended() bool {
	return o != OutcomeWaiting && o != OutcomeRunning
}

// Cancelled reports whether the client's cancel reached the job.
func (o Outcome) Cancelled() bool {
	return o == OutcomeInterrupted || o == OutcomeDeleted || o == OutcomeAbandoned
}

// Job is what a fake recorded of one job it received.
type Job struct {
	Prompt    string
	Negative  string
	Seed      int64
	Steps     int
	Strength  float64
	Guidance  float64
	Width     int
	Height    int
	Masked    bool // a mask smaller than the whole frame came with it
	Model     string
	Sampler   string // the sampler the server ran (after its own fallbacks)
	Scheduler string
	Fields    []string // the request's field names, as sent
	Outcome   Outcome
}

// state is what every fake shares: the script and the record. Every change is
// broadcast, so tests wait for what they expect instead of sleeping.
type state struct {
	mu       sync.Mutex
	script   Script
	jobs     []Job
	attempts int
	cond     *sync.Cond
}

func newState() *state {
	s := &state{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// Set replaces the script.
func (s *state) Set(sc Script) {
	s.mu.Lock()
	s.script = sc
	s.mu.Unlock()
}

func (s *state) get() Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.script
}

// attempt counts a job request and reports whether it must fail with 503.
func (s *state) attempt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	s.cond.Broadcast()
	return s.attempts <= s.script.FailFirst
}

// record adds a job in outcome o and returns its index.
func (s *state) record(j Job, o Outcome) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	j.Outcome = o
	s.jobs = append(s.jobs, j)
	s.cond.Broadcast()
	return len(s.jobs) - 1
}

// update changes job i.
func (s *state) update(i int, fn func(*Job)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= 0 && i < len(s.jobs) {
		fn(&s.jobs[i])
		s.cond.Broadcast()
	}
}

// end sets job i's outcome unless it already ended.
func (s *state) end(i int, o Outcome) {
	s.update(i, func(j *Job) {
		if !j.Outcome.Ended() {
			j.Outcome = o
		}
	})
}

// Jobs returns the jobs received, in order.
func (s *state) Jobs() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Job(nil), s.jobs...)
}

// Attempts is the number of job requests received, failed ones included.
func (s *state) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// Cancelled is the number of jobs the client's cancel reached (an interrupt, a
// queue delete or a closed request).
func (s *state) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, j := range s.jobs {
		if j.Outcome.Cancelled() {
			n++
		}
	}
	return n
}

// WaitJobs waits until ok holds for the jobs received, or d passed; it reports
// whether ok held.
func (s *state) WaitJobs(d time.Duration, ok func(jobs []Job) bool) bool {
	t := time.AfterFunc(d, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer t.Stop()
	deadline := time.Now().Add(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for !ok(s.jobs) {
		if !time.Now().Before(deadline) {
			return false
		}
		s.cond.Wait()
	}
	return true
}

// WaitCancelled waits until at least n jobs were cancelled, or d passed.
func (s *state) WaitCancelled(n int, d time.Duration) bool {
	return s.WaitJobs(d, func(jobs []Job) bool {
		c := 0
		for _, j := range jobs {
			if j.Outcome.Cancelled() {
				c++
			}
		}
		return c >= n
	})
}

// WaitOutcome waits until job i exists and ok holds for its outcome, or d passed.
func (s *state) WaitOutcome(i int, d time.Duration, ok func(Outcome) bool) bool {
	return s.WaitJobs(d, func(jobs []Job) bool { return i < len(jobs) && ok(jobs[i].Outcome) })
}

// Paint is the fake model: a new image of src's size. With a mask (gray, >= 128
// marks the region) the region is filled with a colour of the seed; without one a
// block in the lower middle (where furniture would stand) is. Every other pixel moves
// by at most 2 levels per channel.
func Paint(src image.Image, mask *image.Gray, seed int64) *image.NRGBA {
	in := toNRGBA(src)
	w, h := in.Rect.Dx(), in.Rect.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	fill := seedColor(seed)
	inBlock := func(x, y int) bool {
		if mask != nil {
			return mask.Pix[y*mask.Stride+x] >= 128
		}
		return x >= w/4 && x < 3*w/4 && y >= h/2 && y < 5*h/6
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := y*out.Stride + 4*x
			if inBlock(x, y) {
				shade := uint8((x * 40) / max(w, 1))
				out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = fill.R+shade, fill.G, fill.B, 255
				continue
			}
			i := y*in.Stride + 4*x
			for c := 0; c < 3; c++ {
				d := int(hash3(x, y, c, seed)%5) - 2
				out.Pix[o+c] = uint8(min(max(int(in.Pix[i+c])+d, 0), 255))
			}
			out.Pix[o+3] = 255
		}
	}
	return out
}

// toNRGBA returns m as an NRGBA with its origin at 0,0.
func toNRGBA(m image.Image) *image.NRGBA {
	if n, ok := m.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	b := m.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Rect, m, b.Min, draw.Src)
	return n
}

func seedColor(seed int64) color.NRGBA {
	h := hash3(1, 2, 3, seed)
	return color.NRGBA{R: uint8(40 + h%120), G: uint8(40 + (h>>8)%120), B: uint8(40 + (h>>16)%120), A: 255}
}

func hash3(x, y, c int, seed int64) uint64 {
	v := uint64(x)*0x9E3779B97F4A7C15 ^ uint64(y)*0xC2B2AE3D27D4EB4F ^ uint64(c)*0x165667B19E3779F9 ^ uint64(seed)*0xD6E8FEB86659FD93
	v ^= v >> 31
	v *= 0xBF58476D1CE4E5B9
	v ^= v >> 27
	return v
}

// answer renders the image a job answers under mode, as PNG.
func answer(mode Mode, src image.Image, mask *image.Gray, seed int64) []byte {
	var m image.Image
	switch mode {
	case ModeBlank:
		m = image.NewNRGBA(src.Bounds()) // transparent black: decodes to black
		n := m.(*image.NRGBA)
		for i := 3; i < len(n.Pix); i += 4 {
			n.Pix[i] = 255
		}
	case ModeEcho:
		m = src
	case ModeGarbage:
		return []byte("<html><body>model exploded</body></html>")
	case ModeTiny:
		m = image.NewGray(image.Rect(0, 0, 8, 8))
	default:
		m = Paint(src, mask, seed)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, m); err != nil {
		panic(fmt.Sprintf("backendtest: encode answer: %v", err))
	}
	return buf.Bytes()
}

// decodeImage decodes an uploaded image of any registered Go format.
func decodeImage(b []byte) (image.Image, error) {
	m, _, err := image.Decode(bytes.NewReader(b))
	return m, err
}

// grayMask turns a decoded mask into gray (luma), nil when it covers the whole frame
// (a maskless feature's mask).
func grayMask(m image.Image) (*image.Gray, bool) {
	b := m.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	full := true
	marked := false
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			v := color.GrayModel.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.Gray)
			g.SetGray(x, y, v)
			if v.Y >= 128 {
				marked = true
			} else {
				full = false
			}
		}
	}
	if full {
		return nil, true
	}
	return g, marked
}

// imageLike is a decoded upload.
type imageLike = image.Image
