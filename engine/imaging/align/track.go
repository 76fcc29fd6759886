package align

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Sub-pixel correspondences come from tracking corner patches (Shi–Tomasi score on
// the equalized target) into the equalized source by Lucas–Kanade with a gain and
// offset per patch, so that the local tone difference between exposures does not
// pull the estimate.

const (
	patchRadius = 12 // 25×25 patches: enough structure to agree with whole-image measures
	gridCols    = 20
	gridRows    = 14
	perCell     = 2
	minNCC      = 0.85
)

// match is one correspondence: target point and where it lies in the source.
type match struct {
	tx, ty, sx, sy float64
	ncc            float64
}

// level is one scale of an equalized image with its gradients.
type level struct {
	img, gx, gy *gray
	valid       []bool
}

func makeLevel(g *gray, valid []bool) *level {
	l := &level{img: g, gx: newGray(g.w, g.h), gy: newGray(g.w, g.h), valid: valid}
	imaging.Bands(g.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			up, dn := g.row(max(y-1, 0)), g.row(min(y+1, g.h-1))
			row := g.row(y)
			gx, gy := l.gx.row(y), l.gy.row(y)
			for x := range row {
				gx[x] = (row[min(x+1, g.w-1)] - row[max(x-1, 0)]) * 0.5
				gy[x] = (dn[x] - up[x]) * 0.5
			}
		}
	})
	return l
}

// corners picks well-spread trackable points: in each grid cell the best Shi–Tomasi
// scores whose whole patch is valid. The score is computed on the coarser level (at
// every other sample) for speed; points are returned in finest-level coordinates.
func corners(fine, coarse *level, margin int) [][2]int {
	g := coarse.img
	w, h := g.w, g.h
	type cand struct {
		x, y  int
		score float32
	}
	const r = 2 // structure tensor window 5×5 on the coarse level
	cm := margin/2 + 1
	rows := make([][]cand, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			if y < cm || y >= h-cm || y%2 != 0 {
				continue
			}
			for x := cm; x < w-cm; x += 2 {
				var sxx, sxy, syy float32
				ok := true
				for j := -r; j <= r && ok; j++ {
					o := (y+j)*w + x
					for i := -r; i <= r; i++ {
						if !coarse.valid[o+i] {
							ok = false
							break
						}
						a, b := coarse.gx.pix[o+i], coarse.gy.pix[o+i]
						sxx += a * a
						sxy += a * b
						syy += b * b
					}
				}
				if !ok {
					continue
				}
				tr, det := sxx+syy, sxx*syy-sxy*sxy
				score := tr/2 - float32(math.Sqrt(float64(max(0, tr*tr/4-det))))
				rows[y] = append(rows[y], cand{x, y, score})
			}
		}
	})
	cells := make([][]cand, gridCols*gridRows)
	var maxScore float32
	for _, row := range rows {
		for _, c := range row {
			k := (c.y*gridRows/h)*gridCols + c.x*gridCols/w
			cells[k] = append(cells[k], c)
			maxScore = max(maxScore, c.score)
		}
	}
	fw, fh := fine.img.w, fine.img.h
	var out [][2]int
	for _, cs := range cells {
		sort.Slice(cs, func(i, j int) bool { return cs[i].score > cs[j].score })
		taken := 0
		for _, c := range cs {
			if taken == perCell || c.score < maxScore*0.01 {
				break
			}
			x, y := 2*c.x, 2*c.y
			if x < margin || y < margin || x >= fw-margin || y >= fh-margin || !patchValid(fine, x, y) {
				continue
			}
			far := true
			for _, p := range out[len(out)-taken:] {
				if abs(p[0]-x) < 2*patchRadius && abs(p[1]-y) < 2*patchRadius {
					far = false
				}
			}
			if far {
				out = append(out, [2]int{x, y})
				taken++
			}
		}
	}
	return out
}

// patchValid reports whether at least 90% of the patch around (x, y) is valid.
func patchValid(lv *level, x, y int) bool {
	w := lv.img.w
	bad := 0
	const limit = (2*patchRadius + 1) * (2*patchRadius + 1) / 10
	for j := -patchRadius; j <= patchRadius; j++ {
		o := (y+j)*w + x
		for i := -patchRadius; i <= patchRadius; i++ {
			if !lv.valid[o+i] {
				bad++
			}
		}
	}
	return bad <= limit
}

// lk refines the displacement (dx, dy) of the patch of tgt centred at (x, y) into src.
// ok is false when it does not converge or the patch does not match well.
func lk(tgt, src *level, x, y int, dx, dy float64) (float64, float64, float64, bool) {
	gain, bias := 1.0, 0.0
	const n = (2*patchRadius + 1) * (2*patchRadius + 1)
	var tv [n]float32
	var use [n]bool
	k := 0
	for j := -patchRadius; j <= patchRadius; j++ {
		for i := -patchRadius; i <= patchRadius; i++ {
			o := (y+j)*tgt.img.w + x + i
			tv[k], use[k] = tgt.img.pix[o], tgt.valid[o]
			k++
		}
	}
	converged := false
	for it := 0; it < 30; it++ {
		var A [4][4]float64
		var B [4]float64
		k = 0
		for j := -patchRadius; j <= patchRadius; j++ {
			for i := -patchRadius; i <= patchRadius; i++ {
				if !use[k] {
					k++
					continue
				}
				px, py := float32(float64(x+i)+dx), float32(float64(y+j)+dy)
				s := float64(src.img.at(px, py))
				sx := float64(src.gx.at(px, py))
				sy := float64(src.gy.at(px, py))
				r := gain*s + bias - float64(tv[k])
				J := [4]float64{gain * sx, gain * sy, s, 1}
				for a := 0; a < 4; a++ {
					B[a] -= J[a] * r
					for b := a; b < 4; b++ {
						A[a][b] += J[a] * J[b]
					}
				}
				k++
			}
		}
		for a := 0; a < 4; a++ {
			for b := 0; b < a; b++ {
				A[a][b] = A[b][a]
			}
		}
		d, ok := solve4(A, B)
		if !ok {
			return 0, 0, 0, false
		}
		dx += d[0]
		dy += d[1]
		gain += d[2]
		bias += d[3]
		if gain < 0.2 || gain > 5 || math.Abs(dx) > 1e4 || math.Abs(dy) > 1e4 {
			return 0, 0, 0, false
		}
		if d[0]*d[0]+d[1]*d[1] < 1e-5 {
			converged = true
			break
		}
	}
	if !converged {
		return 0, 0, 0, false
	}
	// Normalized cross-correlation of the matched patches.
	var st, ss, stt, sss, sts, cnt float64
	k = 0
	for j := -patchRadius; j <= patchRadius; j++ {
		for i := -patchRadius; i <= patchRadius; i++ {
			if !use[k] {
				k++
				continue
			}
			cnt++
			s := float64(src.img.at(float32(float64(x+i)+dx), float32(float64(y+j)+dy)))
			t := float64(tv[k])
			st += t
			ss += s
			stt += t * t
			sss += s * s
			sts += t * s
			k++
		}
	}
	cov := sts - st*ss/cnt
	vt, vs := stt-st*st/cnt, sss-ss*ss/cnt
	if vt <= 0 || vs <= 0 {
		return 0, 0, 0, false
	}
	ncc := cov / math.Sqrt(vt*vs)
	return dx, dy, ncc, ncc >= minNCC
}

// solve4 solves the symmetric 4×4 system by Gaussian elimination with pivoting.
func solve4(A [4][4]float64, B [4]float64) ([4]float64, bool) {
	var x [4]float64
	for c := 0; c < 4; c++ {
		p := c
		for r := c + 1; r < 4; r++ {
			if math.Abs(A[r][c]) > math.Abs(A[p][c]) {
				p = r
			}
		}
		if math.Abs(A[p][c]) < 1e-12 {
			return x, false
		}
		A[c], A[p] = A[p], A[c]
		B[c], B[p] = B[p], B[c]
		for r := c + 1; r < 4; r++ {
			f := A[r][c] / A[c][c]
			for k := c; k < 4; k++ {
				A[r][k] -= f * A[c][k]
			}
			B[r] -= f * B[c]
		}
	}
	for r := 3; r >= 0; r-- {
		s := B[r]
		for k := r + 1; k < 4; k++ {
			s -= A[r][k] * x[k]
		}
		x[r] = s / A[r][r]
	}
	return x, true
}

// track follows the corners of tgt into src, coarse to fine over the given levels
// (finest first), starting from the displacement (dx, dy) at the finest level.
func track(tgt, src []*level, pts [][2]int, dx, dy float64) []match {
	out := make([]match, len(pts))
	okAll := make([]bool, len(pts))
	imaging.Bands(len(pts), func(_, i0, i1 int) {
		for i := i0; i < i1; i++ {
			p := pts[i]
			ddx, ddy := dx, dy
			good := true
			for l := len(tgt) - 1; l >= 0; l-- {
				f := float64(int(1) << l)
				// Level-l coordinates of the finest-level point: u = (x+0.5)/f − 0.5.
				x := int(math.Round((float64(p[0])+0.5)/f - 0.5))
				y := int(math.Round((float64(p[1])+0.5)/f - 0.5))
				lw, lh := tgt[l].img.w, tgt[l].img.h
				if x < patchRadius+1 || y < patchRadius+1 || x >= lw-patchRadius-1 || y >= lh-patchRadius-1 {
					continue
				}
				// Offsets between the rounded point and its exact position cancel
				// because only the displacement is carried between levels.
				var ncc float64
				var ok bool
				var nx, ny float64
				nx, ny, ncc, ok = lk(tgt[l], src[l], x, y, ddx/f, ddy/f)
				if !ok {
					if l == 0 {
						good = false
					}
					continue
				}
				ddx, ddy = nx*f, ny*f
				if l == 0 {
					out[i] = match{float64(p[0]), float64(p[1]), float64(p[0]) + nx, float64(p[1]) + ny, ncc}
				}
			}
			okAll[i] = good && out[i].ncc > 0
		}
	})
	var res []match
	for i, m := range out {
		if okAll[i] {
			res = append(res, m)
		}
	}
	return res
}
