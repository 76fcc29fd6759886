package sky

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func TestZZDbg(t *testing.T) {
	for _, id := range []string{"ADE_val_00001599", "ADE_val_00000455", "ADE_val_00000547"} {
		img := imagingtest.LoadFile(t, testphotos.Path(t, "sky", "images", id+".jpg"))
		debugRefine = func(w, h int, busy, unknown []bool, mask []float32) {
			m := imaging.New(w, h, 3)
			for p := range busy {
				if busy[p] {
					m.Pix[p*3] = 1
				}
				if unknown[p] {
					m.Pix[p*3+1] = 0.3
				}
				m.Pix[p*3+2] = mask[p]
			}
			writePNG(t, filepath.Join("/tmp/skydbg", id+"_busy.png"), m.ToNRGBA())
		}
		m, _, _ := segment(context.Background(), img, false)
		writePNG(t, filepath.Join("/tmp/skydbg", id+"_m1.png"), m.ToNRGBA())
	}
	debugRefine = nil
}
