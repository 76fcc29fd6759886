package lens

import (
	"context"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var sheetDir = flag.String("sheet", "", "write the lens contact sheet (straight | bent by the lens | corrected) as lens-contact-sheet.jpg in this folder")

// sheetRows are the photos and lenses of the contact sheet: the strongest bends of
// the test lenses.
var sheetRows = []struct {
	photo []string
	lens  int // index in estateLenses
}{
	{[]string{"interiors", "houses_109_bedroom.jpg"}, 5}, // Nikon Z 14-30mm at 14 mm
	{[]string{"exteriors", "houses_112_frontal.jpg"}, 2}, // Sony FE 12-24mm at 12 mm
	{[]string{"interiors", "houses_109_bedroom.jpg"}, 0}, // Canon EF 16-35mm at 16 mm
}

// TestLensContactSheet writes, with -sheet DIR, a sheet of straight photos with a
// grid drawn on them, the same bent by lensfun's model of a lens (its distortion, TCA
// and vignetting) and the bent one corrected: the grid's lines must come out straight
// again. Nothing is written without the flag.
func TestLensContactSheet(t *testing.T) {
	if *sheetDir == "" {
		t.Skip("no -sheet folder")
	}
	needDB(t)
	const shrink, gap = 2, 12
	var cells [][]*image.NRGBA
	for _, r := range sheetRows {
		straight := withGrid(imagingtest.LoadPhoto(t, r.photo...), 48)
		l := estateLenses[r.lens]
		sim, err := Simulate(l.shot, straight.W(), straight.H())
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		bent, err := sim.Apply(context.Background(), straight)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Prepare(l.shot, straight.W(), straight.H())
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		// The pipeline corrects brackets as 8-bit codes: the sheet shows that path.
		fixed, err := c.Apply(context.Background(), bent.Narrow())
		if err != nil {
			t.Fatal(err)
		}
		var row []*image.NRGBA
		for _, m := range []*imaging.Image{straight, bent, fixed.Widen()} {
			row = append(row, imagingtest.Shrink(m, shrink).ToNRGBA())
		}
		cells = append(cells, row)
		t.Logf("row %d: %s, %s", len(cells), r.photo[1], c.Describe())
	}
	// Photos share a width; each row is as tall as its photo.
	cw, h := cells[0][0].Bounds().Dx(), gap
	for _, row := range cells {
		h += row[0].Bounds().Dy() + gap
	}
	sheet := image.NewNRGBA(image.Rect(0, 0, 3*cw+4*gap, h))
	draw.Draw(sheet, sheet.Bounds(), image.NewUniform(color.NRGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	y := gap
	for _, row := range cells {
		for j, m := range row {
			at := image.Pt(gap+j*(cw+gap), y)
			draw.Draw(sheet, m.Bounds().Add(at), m, m.Bounds().Min, draw.Src)
		}
		y += row[0].Bounds().Dy() + gap
	}
	if err := os.MkdirAll(*sheetDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(*sheetDir, "lens-contact-sheet.jpg")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := jpeg.Encode(f, sheet, &jpeg.Options{Quality: 88}); err != nil {
		t.Fatal(err)
	}
	t.Logf("contact sheet: %s (%dx%d)", path, sheet.Bounds().Dx(), sheet.Bounds().Dy())
}

// withGrid returns a copy of m with a yellow grid every step pixels, 2 px wide, so
// that a bend shows in the lines wherever the photo has none. The lines start half a
// step in: a line on the border would smear where the bent photo repeats its edge.
func withGrid(m *imaging.Image, step int) *imaging.Image {
	g := m.Clone()
	for y := 0; y < g.H(); y++ {
		row := g.Row(y)
		onRow := (y+step/2)%step < 2
		for x := 0; x < g.W(); x++ {
			if onRow || (x+step/2)%step < 2 {
				row[x*3], row[x*3+1], row[x*3+2] = 1, 0.8, 0
			}
		}
	}
	return g
}
