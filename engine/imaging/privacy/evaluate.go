package privacy

import "math"

// haarNode is one tree split of a Haar cascade with its feature's rectangle corners
// turned into offsets into the integral tables of one pyramid level (OpenCV's
// "optimised features"), stored inline so a window walks one contiguous array.
type haarNode struct {
	ofs         [3][4]int32
	weight      [3]float32
	n           int32
	tilted      bool
	threshold   float32
	left, right int32
}

// prepared is a cascade bound to the row stride of one pyramid level. A worker keeps
// one per cascade and re-binds it per level, so no allocation happens per window.
type prepared struct {
	c        *Cascade
	stride   int
	haar     []haarNode // per cascade node
	lbp      [][16]int32
	norm     [4]int32
	normArea float64
}

func (p *prepared) bind(c *Cascade, stride int) {
	if p.c == c && p.stride == stride {
		return
	}
	p.c, p.stride = c, stride
	s := int32(stride)
	corner := func(x, y int) int32 { return int32(y)*s + int32(x) }
	if c.kind == haarFeatures {
		if cap(p.haar) < len(c.nodes) {
			p.haar = make([]haarNode, len(c.nodes))
		}
		p.haar = p.haar[:len(c.nodes)]
		for i, nd := range c.nodes {
			f := c.haar[nd.feature]
			o := haarNode{n: int32(f.n), tilted: f.tilted, threshold: nd.threshold, left: nd.left, right: nd.right}
			for k, r := range f.rects[:f.n] {
				o.weight[k] = r.weight
				if f.tilted {
					// OpenCV's tilted corners: (x, y), (x-h, y+h), (x+w, y+w), (x+w-h, y+w+h).
					o.ofs[k] = [4]int32{corner(r.x, r.y), corner(r.x-r.h, r.y+r.h),
						corner(r.x+r.w, r.y+r.w), corner(r.x+r.w-r.h, r.y+r.w+r.h)}
				} else {
					o.ofs[k] = [4]int32{corner(r.x, r.y), corner(r.x+r.w, r.y),
						corner(r.x, r.y+r.h), corner(r.x+r.w, r.y+r.h)}
				}
			}
			p.haar[i] = o
		}
		// Variance is measured inside a 1-pixel inset, as OpenCV does.
		nw, nh := c.winW-2, c.winH-2
		p.norm = [4]int32{corner(1, 1), corner(1+nw, 1), corner(1, 1+nh), corner(1+nw, 1+nh)}
		p.normArea = float64(nw * nh)
		return
	}
	if cap(p.lbp) < len(c.lbp) {
		p.lbp = make([][16]int32, len(c.lbp))
	}
	p.lbp = p.lbp[:len(c.lbp)]
	for i, f := range c.lbp {
		var o [16]int32
		for r := 0; r < 4; r++ {
			for q := 0; q < 4; q++ {
				o[r*4+q] = corner(f.x+q*f.w, f.y+r*f.h)
			}
		}
		p.lbp[i] = o
	}
}

// minWindowStdRatio is OpenCV's flat-window rejection: windows whose standard
// deviation is at most 10 grey levels are skipped before any stage runs
// (area / (area * std) >= 0.1).
const minWindowStdRatio = 0.1

// Window outcomes besides passing: rejected as flat before any stage, or by stage 0.
// OpenCV skips the next position after a stage-0 rejection, and so does scan.
const (
	passed      = 1
	rejectFlat  = -1
	rejectFirst = 0
	rejectLater = -2
)

// evalHaar runs the cascade on the window whose top-left corner is at table offset
// base. It stops as soon as one stage fails and reports how the window ended.
func (p *prepared) evalHaar(it *integrals, base int32) int {
	sum, sq := it.sum, it.sq
	n := &p.norm
	vs := float64(sum[base+n[0]] - sum[base+n[1]] - sum[base+n[2]] + sum[base+n[3]])
	vq := float64(sq[base+n[0]] - sq[base+n[1]] - sq[base+n[2]] + sq[base+n[3]])
	nf := p.normArea*vq - vs*vs
	if nf <= 0 {
		return rejectFlat
	}
	nf = math.Sqrt(nf)
	if p.normArea/nf >= minWindowStdRatio {
		return rejectFlat
	}
	inv := float32(1 / nf)
	c := p.c
	sum32, tilted := sum, it.tilted
	nodes := p.haar
	for si, st := range c.stages {
		var acc float32
		for _, w := range c.weaks[st.weak0 : st.weak0+st.nweak] {
			idx := int32(0)
			for {
				nd := &nodes[w.node0+idx]
				tab := sum32
				if nd.tilted {
					tab = tilted
				}
				// Rectangle sums are exact modulo 2^32 and below 2^31, so int32 holds them.
				o := &nd.ofs
				v := nd.weight[0]*float32(int32(tab[base+o[0][0]]-tab[base+o[0][1]]-tab[base+o[0][2]]+tab[base+o[0][3]])) +
					nd.weight[1]*float32(int32(tab[base+o[1][0]]-tab[base+o[1][1]]-tab[base+o[1][2]]+tab[base+o[1][3]]))
				if nd.n == 3 {
					v += nd.weight[2] * float32(int32(tab[base+o[2][0]]-tab[base+o[2][1]]-tab[base+o[2][2]]+tab[base+o[2][3]]))
				}
				if v*inv < nd.threshold {
					idx = nd.left
				} else {
					idx = nd.right
				}
				if idx <= 0 {
					break
				}
			}
			acc += c.leaves[w.leaf0-idx]
		}
		if acc < st.threshold {
			if si == 0 {
				return rejectFirst
			}
			return rejectLater
		}
	}
	return passed
}

// evalLBP runs a multi-block LBP cascade (stumps with 256-way categorical splits).
func (p *prepared) evalLBP(it *integrals, base int32) int {
	c := p.c
	sum := it.sum
	for si, st := range c.stages {
		var acc float32
		for wi := st.weak0; wi < st.weak0+st.nweak; wi++ {
			w := c.weaks[wi]
			idx := int32(0)
			for {
				ni := w.node0 + idx
				nd := &c.nodes[ni]
				code := lbpCode(sum, base, &p.lbp[nd.feature])
				sub := c.subsets[int(ni)*lbpSubset:]
				if sub[code>>5]&(1<<(code&31)) != 0 {
					idx = nd.left
				} else {
					idx = nd.right
				}
				if idx <= 0 {
					break
				}
			}
			acc += c.leaves[w.leaf0-idx]
		}
		if acc < st.threshold {
			if si == 0 {
				return rejectFirst
			}
			return rejectLater
		}
	}
	return passed
}

// lbpCode compares the eight outer blocks of a 3x3 grid with the centre block; bit
// order as OpenCV: top-left 128, top 64, top-right 32, right 16, bottom-right 8,
// bottom 4, bottom-left 2, left 1.
func lbpCode(s []uint32, b int32, o *[16]int32) uint32 {
	// The 4x4 grid corners, loaded once; block (r, q) is p[r][q]-p[r][q+1]-p[r+1][q]+p[r+1][q+1].
	p0, p1, p2, p3 := s[b+o[0]], s[b+o[1]], s[b+o[2]], s[b+o[3]]
	p4, p5, p6, p7 := s[b+o[4]], s[b+o[5]], s[b+o[6]], s[b+o[7]]
	p8, p9, p10, p11 := s[b+o[8]], s[b+o[9]], s[b+o[10]], s[b+o[11]]
	p12, p13, p14, p15 := s[b+o[12]], s[b+o[13]], s[b+o[14]], s[b+o[15]]
	cv := p5 - p6 - p9 + p10
	var code uint32
	if p0-p1-p4+p5 >= cv {
		code |= 128
	}
	if p1-p2-p5+p6 >= cv {
		code |= 64
	}
	if p2-p3-p6+p7 >= cv {
		code |= 32
	}
	if p6-p7-p10+p11 >= cv {
		code |= 16
	}
	if p10-p11-p14+p15 >= cv {
		code |= 8
	}
	if p9-p10-p13+p14 >= cv {
		code |= 4
	}
	if p8-p9-p12+p13 >= cv {
		code |= 2
	}
	if p4-p5-p8+p9 >= cv {
		code |= 1
	}
	return code
}
