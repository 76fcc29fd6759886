package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// decodeFile decodes a file as the pipeline's decoder does (float32, upright, sRGB).
func decodeFile(t testing.TB, path string) *imaging.Image {
	t.Helper()
	img, _, err := codec.DecodeFile(path, codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Auto HDR on a real 4-bracket set: the delivered image keeps more of the scene's
// detail across exposures (MEF-SSIM) than any single bracket does.
func TestAutoHDRMergesRealBrackets(t *testing.T) {
	var rel [][]string
	for _, n := range []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"} {
		rel = append(rel, []string{"brackets", "house_interior_kim", n})
	}
	fa := photos(t, rel...)
	p := New(Config{Logger: quiet()})
	if !p.FeatureAvailable("auto_hdr") {
		t.Fatal("auto HDR steps are not registered")
	}
	ids := []string{"in0", "in1", "in2", "in3"}
	res, err := p.Run(context.Background(), Request{OrderID: "hdr", Inputs: ids,
		Options: resolved(t, core.Options{Format: ptr("png")}), Assets: fa}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Steps) != "[decode align merge resolution_cap encode]" {
		t.Fatalf("steps %v", res.Steps)
	}
	data := fa.out["hdr"]
	fused, _, err := codec.Decode(bytes.NewReader(data), int64(len(data)), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seq []*imaging.Image
	for _, r := range rel {
		seq = append(seq, decodeFile(t, testphotos.Path(t, r...)))
	}
	if !imaging.SameSize(fused, seq[0]) {
		t.Fatalf("fused %dx%d, brackets %dx%d", fused.W(), fused.H(), seq[0].W(), seq[0].H())
	}
	score, err := quality.MEFSSIM(seq, toRGB(fused), quality.MEFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	best := 0.0
	for i, b := range seq {
		s, err := quality.MEFSSIM(seq, b, quality.MEFOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bracket %d alone: MEF-SSIM %.4f", i, s.Score)
		best = max(best, s.Score)
	}
	t.Logf("merged: MEF-SSIM %.4f", score.Score)
	if score.Score <= best || score.Score < 0.9 {
		t.Fatalf("merged MEF-SSIM %.4f, best single bracket %.4f", score.Score, best)
	}

	// Same brackets, same options: the same pixels.
	res2, err := p.Run(context.Background(), Request{OrderID: "hdr2", Inputs: ids,
		Options: resolved(t, core.Options{Format: ptr("png")}), Assets: fa}, nil)
	if err != nil || !bytes.Equal(fa.out["hdr2"], data) {
		t.Fatalf("second run differs (err %v, %v)", err, res2.Steps)
	}
}
