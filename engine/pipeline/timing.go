package pipeline

import (
	"maps"
	"sync"
	"time"
)

// Timings keeps, per step, a moving average of seconds per megapixel, so progress
// weights and ETAs follow what this machine measured instead of constants.
type Timings struct {
	mu    sync.Mutex
	alpha float64            // weight of the newest measurement
	spm   map[string]float64 // step name -> seconds per megapixel
}

// NewTimings returns an empty model; alpha in (0,1] is the weight of each new
// measurement (0 takes 0.3).
func NewTimings(alpha float64) *Timings {
	if alpha <= 0 || alpha > 1 {
		alpha = 0.3
	}
	return &Timings{alpha: alpha, spm: map[string]float64{}}
}

// minMegapixels keeps tiny images from producing huge per-megapixel figures.
const minMegapixels = 0.05

// Observe records that step took d over an image of mp megapixels.
func (t *Timings) Observe(step string, mp float64, d time.Duration) {
	if d <= 0 {
		return
	}
	v := d.Seconds() / max(mp, minMegapixels)
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.spm[step]; ok {
		v = old + t.alpha*(v-old)
	}
	t.spm[step] = v
}

// Estimate returns the expected duration of step over mp megapixels, using fallback
// seconds per megapixel when the step was never measured. measured says which.
func (t *Timings) Estimate(step string, mp, fallback float64) (d time.Duration, measured bool) {
	t.mu.Lock()
	v, ok := t.spm[step]
	t.mu.Unlock()
	if !ok {
		v = fallback
	}
	return time.Duration(v * max(mp, minMegapixels) * float64(time.Second)), ok
}

// Snapshot returns the model (for persisting it).
func (t *Timings) Snapshot() map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.spm)
}

// Load replaces measurements with saved ones; non-positive values are ignored.
func (t *Timings) Load(m map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range m {
		if v > 0 {
			t.spm[k] = v
		}
	}
}
