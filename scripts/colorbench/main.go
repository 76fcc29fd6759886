// Command colorbench measures develop's colour correction against the anchors, for
// scripts/bench-color.sh (make bench-color).
//
//	colorbench render -data DIR -out DIR   the inputs: each test interior and exterior
//	                                        under known light fields, and the real
//	                                        interiors as they are
//	colorbench report -out DIR [-sheet F]  invariance, chroma and neutral surfaces of
//	                                        every method, and the contact sheet
//
// Between the two, the script runs `porchlight process` (ours) and the OpenCV
// anchors on the same inputs.
package main

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/color/colortest"
)

// edge is the longer side of the rendered inputs: enough for the statistics,
// small enough for a hundred runs.
const edge = 768

// keptNeutral is the C*ab of the brightest near-neutral surfaces below which a
// real photo counts as near neutral as shot.
const keptNeutral = 6.0

// fields are the lights; the first is the reference.
var fields = []struct {
	name string
	f    colortest.Field
}{
	{"6500K", colortest.Global(6500)},
	{"2700K", colortest.Global(2700)},
	{"3500K", colortest.Global(3500)},
	{"5000K", colortest.Global(5000)},
	{"8000K", colortest.Global(8000)},
	{"window-lamp", colortest.Gradient()},
	{"lamp-pools", colortest.Pools()},
}

// Methods, in the order of the contact sheet's columns.
var methods = []string{"none", "grayworld", "learning", "ours"}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: colorbench render|report ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	data := fs.String("data", "", "the test photo folder")
	out := fs.String("out", "", "the work folder")
	sheet := fs.String("sheet", "", "write the contact sheet of the real interiors here (JPEG)")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "render":
		err = render(*data, *out)
	case "report":
		err = report(*out, *sheet)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "colorbench:", err)
		os.Exit(1)
	}
}

func jpegs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := strings.ToLower(e.Name())
		if strings.HasSuffix(n, ".jpg") || strings.HasSuffix(n, ".jpeg") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func stem(p string) string { return strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)) }

func load(path string, maxEdge int) (*imaging.Image, error) {
	img, _, err := codec.DecodeFile(path, codec.DecodeOptions{ScaleToMaxEdge: maxEdge})
	if err != nil {
		return nil, err
	}
	if img.C == 3 {
		return img, nil
	}
	rgb := imaging.New(img.W(), img.H(), 3)
	for y := range img.H() {
		for x := range img.W() {
			for c := range 3 {
				rgb.Set(x, y, c, img.At(x, y, min(c, img.C-1)))
			}
		}
	}
	return rgb, nil
}

func save(path string, img *imaging.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return codec.WriteFile(path, img, codec.EncodeOptions{Format: "png", Bits16: true})
}

// render writes in/<photo>__<light>.png for every test interior and exterior, and
// real/<photo>.png for every real interior.
func render(data, out string) error {
	if data == "" || out == "" {
		return errors.New("render needs -data and -out")
	}
	var all []string
	for _, sub := range []string{"interiors", "exteriors"} {
		ps, err := jpegs(filepath.Join(data, sub))
		if err != nil {
			return err
		}
		all = append(all, ps...)
	}
	for _, p := range all {
		src, err := load(p, edge)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if err := save(filepath.Join(out, "in", stem(p)+"__"+f.name+".png"), colortest.Render(src, f.f)); err != nil {
				return err
			}
		}
		if strings.Contains(p, string(filepath.Separator)+"interiors"+string(filepath.Separator)) {
			if err := save(filepath.Join(out, "real", stem(p)+".png"), src); err != nil {
				return err
			}
		}
	}
	return nil
}

// result is the file of method m for input name in set ("in" or "real").
func result(out, set, m, name string) string {
	if m == "none" {
		return filepath.Join(out, set, name)
	}
	return filepath.Join(out, set+"-"+m, name)
}

func report(out, sheet string) error {
	ins, err := filepath.Glob(filepath.Join(out, "in", "*__"+fields[0].name+".png"))
	if err != nil || len(ins) == 0 {
		return fmt.Errorf("no rendered inputs under %s/in", out)
	}
	sort.Strings(ins)
	fmt.Printf("Invariance: %d photos under %d lights, CIEDE2000 of colour (lightness set equal) against the same photo at %s, every method on the same inputs\n\n",
		len(ins), len(fields), fields[0].name)
	fmt.Printf("%-10s %10s %10s %14s\n", "method", "mean dE00", "p95 dE00", "mean chroma")
	inv := map[string]colortest.Stats{}
	chr := map[string]float64{}
	for _, m := range methods {
		var diffs []float64
		var chroma float64
		n := 0
		for _, ref := range ins {
			base := strings.TrimSuffix(filepath.Base(ref), "__"+fields[0].name+".png")
			r, err := load(result(out, "in", m, filepath.Base(ref)), 0)
			if err != nil {
				return err
			}
			chroma += colortest.MeanChroma(r, 2)
			n++
			for _, f := range fields[1:] {
				o, err := load(result(out, "in", m, base+"__"+f.name+".png"), 0)
				if err != nil {
					return err
				}
				if !imaging.SameSize(r, o) {
					return fmt.Errorf("%s: %s result has another size", m, base)
				}
				diffs = append(diffs, colortest.ColourDiffs(r, o, 2)...)
				chroma += colortest.MeanChroma(o, 2)
				n++
			}
		}
		inv[m] = colortest.Summarize(diffs)
		chr[m] = chroma / float64(n)
		fmt.Printf("%-10s %10.2f %10.2f %14.1f\n", m, inv[m].Mean, inv[m].P95, chr[m])
	}

	reals, err := filepath.Glob(filepath.Join(out, "real", "*.png"))
	if err != nil || len(reals) == 0 {
		return fmt.Errorf("no real interiors under %s/real", out)
	}
	sort.Strings(reals)
	fmt.Printf("\nNeutral surfaces: mean C*ab of the brightest near-neutral surfaces of %d real interiors and bracket scenes (the same pixels for every method)\n\n", len(reals))
	fmt.Printf("%-36s", "photo")
	for _, m := range methods {
		fmt.Printf(" %10s", m)
	}
	fmt.Println()
	neutral := map[string]float64{}
	// Colour kept where there is little to correct: the chroma of every method's
	// result against the photo as shot, on the real photos whose whites are
	// already near neutral.
	kept, shot := map[string]float64{}, 0.0
	var rows [][]*imaging.Image
	for _, p := range reals {
		name := filepath.Base(p)
		before, err := load(p, edge)
		if err != nil {
			return err
		}
		row := []*imaging.Image{}
		nearNeutral := colortest.NeutralChroma(before, before, 1) < keptNeutral
		if nearNeutral {
			shot += colortest.MeanChroma(before, 2)
		}
		fmt.Printf("%-36s", strings.TrimSuffix(name, ".png"))
		for _, m := range methods {
			img, err := load(result(out, "real", m, name), edge)
			if err != nil {
				return err
			}
			if !imaging.SameSize(before, img) {
				img = imaging.Resize(img, before.W(), before.H())
			}
			v := colortest.NeutralChroma(before, img, 1)
			neutral[m] += v / float64(len(reals))
			if nearNeutral {
				kept[m] += colortest.MeanChroma(img, 2)
			}
			fmt.Printf(" %10.2f", v)
			row = append(row, img)
		}
		fmt.Println()
		rows = append(rows, row)
	}
	fmt.Printf("%-36s", "mean")
	for _, m := range methods {
		fmt.Printf(" %10.2f", neutral[m])
	}
	fmt.Println()
	if shot > 0 {
		fmt.Printf("\nColour kept on the real photos near neutral as shot (whites under C*ab %.0f): mean chroma of the result against the photo as shot\n\n", keptNeutral)
		for _, m := range methods {
			fmt.Printf(" %10s", m)
		}
		fmt.Println()
		for _, m := range methods {
			fmt.Printf(" %9.0f%%", 100*kept[m]/shot)
		}
		fmt.Println()
	}

	best := "grayworld"
	if inv["learning"].Mean < inv[best].Mean {
		best = "learning"
	}
	ok := true
	check := func(pass bool, format string, args ...any) {
		word := "PASS"
		if !pass {
			word, ok = "FAIL", false
		}
		fmt.Printf("%s  %s\n", word, fmt.Sprintf(format, args...))
	}
	fmt.Println()
	check(inv["ours"].Mean <= 0.5*inv[best].Mean, "invariance: mean dE00 %.2f at most half of the best anchor's (%s %.2f)", inv["ours"].Mean, best, inv[best].Mean)
	ratio := chr["ours"] / chr["grayworld"]
	check(ratio >= 0.85 && ratio <= 1.15, "colour kept: mean chroma %.1f within 15 %% of grey-world's %.1f (%.0f %%)", chr["ours"], chr["grayworld"], 100*ratio)
	for _, m := range methods[:3] {
		check(neutral["ours"] < neutral[m], "neutral surfaces: C*ab %.2f below %s's %.2f", neutral["ours"], m, neutral[m])
	}
	if sheet != "" {
		if err := contactSheet(sheet, rows); err != nil {
			return err
		}
		fmt.Printf("\ncontact sheet (columns: %s): %s\n", strings.Join(methods, ", "), sheet)
	}
	if !ok {
		return errors.New("targets missed")
	}
	return nil
}

// contactSheet lays the rows out 1600 pixels wide, one column per method.
func contactSheet(path string, rows [][]*imaging.Image) error {
	const width, gap = 1600, 4
	cols := len(methods)
	cell := (width - gap*(cols-1)) / cols
	var heights []int
	total := 0
	for _, r := range rows {
		h := cell * r[0].H() / r[0].W()
		heights = append(heights, h)
		total += h + gap
	}
	sheet := imaging.New(width, total-gap, 3)
	y := 0
	for i, r := range rows {
		for j, img := range r {
			small := imaging.Resize(img, cell, heights[i])
			for yy := range heights[i] {
				copy(sheet.Row(y + yy)[j*(cell+gap)*3:(j*(cell+gap)+cell)*3], small.Row(yy))
			}
		}
		y += heights[i] + gap
	}
	// The gaps stay white, so columns and rows read apart.
	out := sheet.ToNRGBA()
	white := image.NewUniform(color.White)
	for j := 1; j < cols; j++ {
		x := j*(cell+gap) - gap
		draw.Draw(out, image.Rect(x, 0, x+gap, out.Bounds().Dy()), white, image.Point{}, draw.Src)
	}
	y = 0
	for _, h := range heights[:len(heights)-1] {
		y += h
		draw.Draw(out, image.Rect(0, y, width, y+gap), white, image.Point{}, draw.Src)
		y += gap
	}
	return codec.WriteFile(path, imaging.FromImage(out, false), codec.EncodeOptions{Format: "jpeg", Quality: 72})
}
