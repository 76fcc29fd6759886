package quality

import (
	"flag"
	"math"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenScores are stored measurements of real photos; a change means the metrics
// changed.
type goldenScores struct {
	MEFSSIMBracketC float64 `json:"mefssim_house_C"`
	MEFSSIMAverage  float64 `json:"mefssim_house_average"`
	SSIMAB          float64 `json:"ssim_house_A_B"`
	Segments        int     `json:"segments_houses_162"`
	Tilt            float64 `json:"tilt_houses_162"`
}

func TestGoldenScores(t *testing.T) {
	if testing.Short() {
		t.Skip("several MEF-SSIM evaluations")
	}
	var seq []*imaging.Image
	for _, n := range []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"} {
		seq = append(seq, loadPhoto(t, "brackets", "house_interior_kim", n))
	}
	avg := imaging.New(seq[0].W(), seq[0].H(), 3)
	for _, m := range seq {
		for i, v := range m.Pix {
			avg.Pix[i] += v / 4
		}
	}
	var got goldenScores
	r, err := MEFSSIM(seq, seq[2], MEFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.MEFSSIMBracketC = r.Score
	if r, err = MEFSSIM(seq, avg, MEFOptions{}); err != nil {
		t.Fatal(err)
	}
	got.MEFSSIMAverage = r.Score
	if got.SSIMAB, err = SSIM(seq[0], seq[1], SSIMOptions{}); err != nil {
		t.Fatal(err)
	}
	segs := Segments(loadPhoto(t, "interiors", "houses_162_bedroom.jpg"), SegmentOptions{})
	got.Segments = len(segs)
	tilt, _ := VerticalTilt(segs, TiltOptions{})
	got.Tilt = tilt.Degrees

	path := filepath.Join("testdata", "golden_scores.json")
	var want goldenScores
	imagingtest.GoldenJSON(t, path, got, &want, *update)
	near := func(name string, a, b, tol float64) {
		if math.Abs(a-b) > tol {
			t.Errorf("%s = %.5f, golden %.5f (rerun with -update if intended)", name, a, b)
		}
	}
	near("MEF-SSIM of bracket C", got.MEFSSIMBracketC, want.MEFSSIMBracketC, 1e-4)
	near("MEF-SSIM of the average", got.MEFSSIMAverage, want.MEFSSIMAverage, 1e-4)
	near("SSIM A-B", got.SSIMAB, want.SSIMAB, 1e-4)
	near("segment count", float64(got.Segments), float64(want.Segments), 3)
	near("tilt", got.Tilt, want.Tilt, 0.05)
}
