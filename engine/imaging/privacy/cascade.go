package privacy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// featureType tells which evaluator a cascade needs.
type featureType uint8

const (
	haarFeatures featureType = iota // Haar-like rectangle sums, variance normalised
	lbpFeatures                     // multi-block local binary patterns
)

// haarRect is one weighted rectangle of a Haar feature, in window coordinates.
type haarRect struct {
	x, y, w, h int
	weight     float32
}

// haarFeature is two or three weighted rectangles; tilted ones are rotated 45 degrees
// and read from the tilted integral.
type haarFeature struct {
	rects  [3]haarRect
	n      int
	tilted bool
}

// lbpFeature is the top-left 3x3 block grid of a multi-block LBP feature: block size
// w x h at (x, y).
type lbpFeature struct{ x, y, w, h int }

// node is one split of a weak classifier tree. left and right point to another node of
// the same tree when > 0, and to leaf -left / -right otherwise (OpenCV's convention).
type node struct {
	feature     int32
	threshold   float32
	left, right int32
}

// weak is one boosted tree: its nodes and leaves in the shared arrays.
type weak struct {
	node0, leaf0 int32
}

// stage is one boosted stage: weak classifiers weak0..weak0+nweak and the threshold
// their summed leaf values must reach for a window to go on.
type stage struct {
	weak0, nweak int32
	threshold    float32
}

// Cascade is a trained Viola-Jones boosted cascade in OpenCV's XML formats, either the
// new "opencv-cascade-classifier" layout (Haar or LBP features, stumps or trees) or the
// old "opencv-haar-classifier" layout.
type Cascade struct {
	Name       string
	kind       featureType
	winW, winH int
	stages     []stage
	weaks      []weak
	nodes      []node
	leaves     []float32
	subsets    []int32 // LBP: lbpSubset words per node, bit c set -> left leaf
	haar       []haarFeature
	lbp        []lbpFeature
	hasTilted  bool
}

// lbpSubset is the number of 32-bit words that cover the 256 LBP codes.
const lbpSubset = 8

// thresholdEps is subtracted from stage thresholds on load, as OpenCV does, so windows
// right at the trained threshold pass.
const thresholdEps = 1e-5

// Window returns the cascade's detection window size in pixels.
func (c *Cascade) Window() (w, h int) { return c.winW, c.winH }

// Stages returns the number of boosted stages.
func (c *Cascade) Stages() int { return len(c.stages) }

// LoadCascade reads a cascade XML file.
func LoadCascade(path string) (*Cascade, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cascade: %w", err)
	}
	defer f.Close()
	c, err := ParseCascade(f)
	if err != nil {
		return nil, fmt.Errorf("cascade %s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(filepath.Base(path), ".xml")
	return c, nil
}

// ParseCascade reads a cascade from OpenCV XML in either format.
func ParseCascade(r io.Reader) (*Cascade, error) {
	doc, err := parseXML(r)
	if err != nil {
		return nil, err
	}
	storage := doc.child("opencv_storage")
	if storage == nil || len(storage.children) == 0 {
		return nil, errors.New("not an OpenCV storage file (no <opencv_storage> content)")
	}
	root := storage.children[0]
	var c *Cascade
	switch {
	case root.child("stageType") != nil || root.child("featureType") != nil:
		c, err = parseNewFormat(root)
	case root.child("size") != nil && root.child("stages") != nil:
		c, err = parseOldFormat(root)
	default:
		return nil, fmt.Errorf("<%s> is neither a new-style nor an old-style cascade", root.name)
	}
	if err != nil {
		return nil, err
	}
	c.Name = root.name
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseNewFormat(root *xnode) (*Cascade, error) {
	if st := root.child("stageType"); st != nil && st.text != "BOOST" {
		return nil, fmt.Errorf("unsupported stage type %q", st.text)
	}
	c := &Cascade{}
	switch ft := root.child("featureType"); {
	case ft == nil:
		return nil, errors.New("missing <featureType>")
	case ft.text == "HAAR":
		c.kind = haarFeatures
	case ft.text == "LBP":
		c.kind = lbpFeatures
	default:
		return nil, fmt.Errorf("unsupported feature type %q (only HAAR and LBP)", ft.text)
	}
	w, err := root.number("width")
	if err != nil {
		return nil, err
	}
	h, err := root.number("height")
	if err != nil {
		return nil, err
	}
	c.winW, c.winH = int(w), int(h)
	catCount := 0
	if fp := root.child("featureParams"); fp != nil && fp.child("maxCatCount") != nil {
		v, err := fp.number("maxCatCount")
		if err != nil {
			return nil, err
		}
		catCount = int(v)
	}
	if (c.kind == lbpFeatures) != (catCount > 0) {
		return nil, fmt.Errorf("feature type and maxCatCount %d disagree", catCount)
	}
	if catCount > 256 {
		return nil, fmt.Errorf("maxCatCount %d above 256", catCount)
	}
	stages := root.child("stages").items()
	if len(stages) == 0 {
		return nil, errors.New("no stages")
	}
	for si, sn := range stages {
		th, err := sn.number("stageThreshold")
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", si, err)
		}
		st := stage{weak0: int32(len(c.weaks)), threshold: float32(th - thresholdEps)}
		for wi, wn := range sn.child("weakClassifiers").items() {
			if err := c.addNewWeak(wn); err != nil {
				return nil, fmt.Errorf("stage %d weak %d: %w", si, wi, err)
			}
			st.nweak++
		}
		c.stages = append(c.stages, st)
	}
	for fi, fn := range root.child("features").items() {
		var err error
		if c.kind == lbpFeatures {
			err = c.addLBPFeature(fn)
		} else {
			err = c.addHaarFeature(fn.child("rects"), fn.child("tilted"))
		}
		if err != nil {
			return nil, fmt.Errorf("feature %d: %w", fi, err)
		}
	}
	return c, nil
}

// addNewWeak parses internalNodes (left right feature threshold, or for LBP left right
// feature and lbpSubset subset words) and leafValues.
func (c *Cascade) addNewWeak(wn *xnode) error {
	in, err := wn.child("internalNodes").numbers()
	if err != nil {
		return err
	}
	leaves, err := wn.child("leafValues").numbers()
	if err != nil {
		return err
	}
	per := 4
	if c.kind == lbpFeatures {
		per = 3 + lbpSubset
	}
	if len(in) == 0 || len(in)%per != 0 {
		return fmt.Errorf("internalNodes has %d values, not a multiple of %d", len(in), per)
	}
	nn := len(in) / per
	if len(leaves) != nn+1 {
		return fmt.Errorf("%d nodes need %d leaves, got %d", nn, nn+1, len(leaves))
	}
	c.weaks = append(c.weaks, weak{node0: int32(len(c.nodes)), leaf0: int32(len(c.leaves))})
	for i := 0; i < nn; i++ {
		v := in[i*per : (i+1)*per]
		n := node{left: int32(v[0]), right: int32(v[1]), feature: int32(v[2])}
		if c.kind == lbpFeatures {
			for _, s := range v[3:] {
				c.subsets = append(c.subsets, int32(int64(s)))
			}
		} else {
			n.threshold = float32(v[3])
		}
		c.nodes = append(c.nodes, n)
	}
	for _, l := range leaves {
		c.leaves = append(c.leaves, float32(l))
	}
	return nil
}

func (c *Cascade) addHaarFeature(rects, tilted *xnode) error {
	var f haarFeature
	items := rects.items()
	if len(items) < 2 || len(items) > 3 {
		return fmt.Errorf("a Haar feature needs 2 or 3 rectangles, got %d", len(items))
	}
	for i, rn := range items {
		v, err := rn.numbers()
		if err != nil {
			return err
		}
		if len(v) != 5 {
			return fmt.Errorf("rectangle %d has %d values, want 5", i, len(v))
		}
		f.rects[i] = haarRect{x: int(v[0]), y: int(v[1]), w: int(v[2]), h: int(v[3]), weight: float32(v[4])}
	}
	f.n = len(items)
	if tilted != nil {
		v, err := tilted.numbers()
		if err != nil {
			return err
		}
		f.tilted = len(v) == 1 && v[0] != 0
	}
	if f.tilted {
		c.hasTilted = true
	}
	c.haar = append(c.haar, f)
	return nil
}

func (c *Cascade) addLBPFeature(fn *xnode) error {
	v, err := fn.child("rect").numbers()
	if err != nil {
		return err
	}
	if len(v) != 4 {
		return fmt.Errorf("LBP rect has %d values, want 4", len(v))
	}
	c.lbp = append(c.lbp, lbpFeature{x: int(v[0]), y: int(v[1]), w: int(v[2]), h: int(v[3])})
	return nil
}

// parseOldFormat converts the pre-2.0 layout: stages of trees whose nodes carry their
// feature inline and name children as left_val/left_node and right_val/right_node.
func parseOldFormat(root *xnode) (*Cascade, error) {
	size, err := root.child("size").numbers()
	if err != nil {
		return nil, err
	}
	if len(size) != 2 {
		return nil, errors.New("<size> needs width and height")
	}
	c := &Cascade{kind: haarFeatures, winW: int(size[0]), winH: int(size[1])}
	stages := root.child("stages").items()
	if len(stages) == 0 {
		return nil, errors.New("no stages")
	}
	for si, sn := range stages {
		th, err := sn.number("stage_threshold")
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", si, err)
		}
		if p := sn.child("parent"); p != nil {
			if v, err := p.numbers(); err == nil && len(v) == 1 && int(v[0]) != si-1 {
				return nil, fmt.Errorf("stage %d: tree-structured cascades are not supported", si)
			}
		}
		st := stage{weak0: int32(len(c.weaks)), threshold: float32(th - thresholdEps)}
		for ti, tn := range sn.child("trees").items() {
			if err := c.addOldTree(tn); err != nil {
				return nil, fmt.Errorf("stage %d tree %d: %w", si, ti, err)
			}
			st.nweak++
		}
		c.stages = append(c.stages, st)
	}
	return c, nil
}

func (c *Cascade) addOldTree(tn *xnode) error {
	nodes := tn.items()
	if len(nodes) == 0 {
		return errors.New("empty tree")
	}
	c.weaks = append(c.weaks, weak{node0: int32(len(c.nodes)), leaf0: int32(len(c.leaves))})
	nleaf := int32(0)
	ref := func(nn *xnode, side string) (int32, error) {
		if v := nn.child(side + "_val"); v != nil {
			x, err := v.numbers()
			if err != nil || len(x) != 1 {
				return 0, fmt.Errorf("bad <%s_val>", side)
			}
			c.leaves = append(c.leaves, float32(x[0]))
			nleaf++
			return -(nleaf - 1), nil
		}
		if v := nn.child(side + "_node"); v != nil {
			x, err := v.numbers()
			if err != nil || len(x) != 1 || x[0] < 1 || int(x[0]) >= len(nodes) {
				return 0, fmt.Errorf("bad <%s_node>", side)
			}
			return int32(x[0]), nil
		}
		return 0, fmt.Errorf("node has neither %s_val nor %s_node", side, side)
	}
	for _, nn := range nodes {
		fn := nn.child("feature")
		if fn == nil {
			return errors.New("node without <feature>")
		}
		if err := c.addHaarFeature(fn.child("rects"), fn.child("tilted")); err != nil {
			return err
		}
		th, err := nn.number("threshold")
		if err != nil {
			return err
		}
		n := node{feature: int32(len(c.haar) - 1), threshold: float32(th)}
		if n.left, err = ref(nn, "left"); err != nil {
			return err
		}
		if n.right, err = ref(nn, "right"); err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	return nil
}

// validate checks every index and rectangle so that evaluation never reads outside the
// model or the detection window.
func (c *Cascade) validate() error {
	if c.winW < 4 || c.winH < 4 || c.winW > 256 || c.winH > 256 {
		return fmt.Errorf("window %dx%d out of range", c.winW, c.winH)
	}
	nfeat := len(c.haar)
	if c.kind == lbpFeatures {
		nfeat = len(c.lbp)
	}
	if nfeat == 0 {
		return errors.New("no features")
	}
	for wi, w := range c.weaks {
		end := int32(len(c.nodes))
		if wi+1 < len(c.weaks) {
			end = c.weaks[wi+1].node0
		}
		lend := int32(len(c.leaves))
		if wi+1 < len(c.weaks) {
			lend = c.weaks[wi+1].leaf0
		}
		nn, nl := end-w.node0, lend-w.leaf0
		if nn <= 0 || nl <= 0 {
			return fmt.Errorf("weak classifier %d is empty", wi)
		}
		for i := w.node0; i < end; i++ {
			n := c.nodes[i]
			if n.feature < 0 || int(n.feature) >= nfeat {
				return fmt.Errorf("weak classifier %d uses feature %d of %d", wi, n.feature, nfeat)
			}
			for _, r := range [2]int32{n.left, n.right} {
				if (r > 0 && r >= nn) || (r <= 0 && -r >= nl) {
					return fmt.Errorf("weak classifier %d points outside its tree", wi)
				}
			}
			if c.kind == haarFeatures && (math.IsNaN(float64(n.threshold)) || math.IsInf(float64(n.threshold), 0)) {
				return fmt.Errorf("weak classifier %d has a non-finite threshold", wi)
			}
		}
		// Loops would hang evaluation: children must come after their parent.
		for i := w.node0; i < end; i++ {
			n := c.nodes[i]
			for _, r := range [2]int32{n.left, n.right} {
				if r > 0 && r <= i-w.node0 {
					return fmt.Errorf("weak classifier %d has a cycle", wi)
				}
			}
		}
	}
	for _, f := range c.haar {
		for _, r := range f.rects[:f.n] {
			if r.w <= 0 || r.h <= 0 {
				return fmt.Errorf("feature rectangle %v is empty", r)
			}
			if f.tilted {
				if r.x-r.h < 0 || r.x+r.w > c.winW || r.y < 0 || r.y+r.w+r.h > c.winH {
					return fmt.Errorf("tilted rectangle %v leaves the %dx%d window", r, c.winW, c.winH)
				}
			} else if r.x < 0 || r.y < 0 || r.x+r.w > c.winW || r.y+r.h > c.winH {
				return fmt.Errorf("rectangle %v leaves the %dx%d window", r, c.winW, c.winH)
			}
		}
	}
	for _, f := range c.lbp {
		if f.w <= 0 || f.h <= 0 || f.x < 0 || f.y < 0 || f.x+3*f.w > c.winW || f.y+3*f.h > c.winH {
			return fmt.Errorf("LBP feature %v leaves the %dx%d window", f, c.winW, c.winH)
		}
	}
	if c.kind == lbpFeatures && len(c.subsets) != len(c.nodes)*lbpSubset {
		return errors.New("LBP subsets do not match the nodes")
	}
	return nil
}

// Mirrored returns the cascade for left-right mirrored objects: running it equals
// running c on the mirrored image, without mirroring any pixels. Tilted Haar features
// have no mirrored counterpart in this representation and are refused.
func (c *Cascade) Mirrored() (*Cascade, error) {
	if c.hasTilted {
		return nil, fmt.Errorf("cascade %s has tilted features and cannot be mirrored", c.Name)
	}
	m := *c
	m.Name = c.Name + "_mirrored"
	if c.kind == haarFeatures {
		m.haar = make([]haarFeature, len(c.haar))
		for i, f := range c.haar {
			for k := 0; k < f.n; k++ {
				f.rects[k].x = c.winW - f.rects[k].x - f.rects[k].w
			}
			m.haar[i] = f
		}
		return &m, nil
	}
	m.lbp = make([]lbpFeature, len(c.lbp))
	for i, f := range c.lbp {
		f.x = c.winW - f.x - 3*f.w
		m.lbp[i] = f
	}
	// Mirroring swaps the left and right neighbour blocks, which permutes code bits:
	// the mirrored window's code c reads the original subset at mirrorCode(c).
	m.subsets = make([]int32, len(c.subsets))
	for n := 0; n < len(c.nodes); n++ {
		src := c.subsets[n*lbpSubset : (n+1)*lbpSubset]
		dst := m.subsets[n*lbpSubset : (n+1)*lbpSubset]
		for code := 0; code < 256; code++ {
			p := mirrorCode(code)
			if src[p>>5]&(1<<(p&31)) != 0 {
				dst[code>>5] |= 1 << (code & 31)
			}
		}
	}
	return &m, nil
}

// mirrorCode swaps the bits of an LBP code that belong to left/right mirrored blocks:
// top-left(7)<->top-right(5), right(4)<->left(0), bottom-right(3)<->bottom-left(1).
func mirrorCode(c int) int {
	bit := func(i int) int { return (c >> i) & 1 }
	return bit(5)<<7 | bit(6)<<6 | bit(7)<<5 | bit(0)<<4 | bit(1)<<3 | bit(2)<<2 | bit(3)<<1 | bit(4)
}

func (r haarRect) String() string {
	return "(" + strconv.Itoa(r.x) + "," + strconv.Itoa(r.y) + "," + strconv.Itoa(r.w) + "," + strconv.Itoa(r.h) + ")"
}

func (f lbpFeature) String() string {
	return "(" + strconv.Itoa(f.x) + "," + strconv.Itoa(f.y) + "," + strconv.Itoa(f.w) + "," + strconv.Itoa(f.h) + ")"
}
