package privacy

import (
	"math"
	"sort"
)

// group is a cluster of overlapping raw hits: their mean rectangle and how many hits
// it holds.
type group struct {
	x, y, w, h float64
	n          int
}

// similar is OpenCV's SimilarRects: every edge within eps times the mean smaller side.
func similar(a, b *rawHit, eps float64) bool {
	delta := eps * (math.Min(float64(a.w), float64(b.w)) + math.Min(float64(a.h), float64(b.h))) * 0.5
	return math.Abs(float64(a.x-b.x)) <= delta &&
		math.Abs(float64(a.y-b.y)) <= delta &&
		math.Abs(float64(a.x+a.w-b.x-b.w)) <= delta &&
		math.Abs(float64(a.y+a.h-b.y-b.h)) <= delta
}

// groupHits clusters hits the way cv::groupRectangles does (equivalence classes of
// similar rectangles, averaged), keeps clusters with more than minNeighbors members,
// and drops a cluster lying inside a clearly stronger one. Unlike OpenCV it keeps the
// member count, which feeds the confidence.
func groupHits(hits []rawHit, minNeighbors int, eps float64) []group {
	n := len(hits)
	if n == 0 {
		return nil
	}
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	// Sort by x so the inner loop can stop once rectangles are too far apart to be
	// similar (delta is at most eps times the larger width).
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return hits[idx[a]].x < hits[idx[b]].x })
	for ii := 0; ii < n; ii++ {
		a := &hits[idx[ii]]
		reach := float32(eps) * (a.w + a.h)
		for jj := ii + 1; jj < n; jj++ {
			b := &hits[idx[jj]]
			if b.x-a.x > reach {
				break
			}
			if similar(a, b, eps) {
				ra, rb := find(int32(idx[ii])), find(int32(idx[jj]))
				if ra != rb {
					parent[rb] = ra
				}
			}
		}
	}
	byRoot := map[int32]*group{}
	var order []int32
	for i := range hits {
		r := find(int32(i))
		g := byRoot[r]
		if g == nil {
			g = &group{}
			byRoot[r] = g
			order = append(order, r)
		}
		h := &hits[i]
		g.x += float64(h.x)
		g.y += float64(h.y)
		g.w += float64(h.w)
		g.h += float64(h.h)
		g.n++
	}
	all := make([]group, 0, len(order))
	for _, r := range order {
		g := *byRoot[r]
		k := float64(g.n)
		g.x, g.y, g.w, g.h = g.x/k, g.y/k, g.w/k, g.h/k
		all = append(all, g)
	}
	var out []group
	for i, a := range all {
		if a.n <= minNeighbors {
			continue
		}
		inside := false
		for j, b := range all {
			if i == j || b.n <= minNeighbors {
				continue
			}
			dx, dy := b.w*eps, b.h*eps
			if a.x >= b.x-dx && a.y >= b.y-dy && a.x+a.w <= b.x+b.w+dx && a.y+a.h <= b.y+b.h+dy &&
				(b.n > max(3, a.n) || a.n < 3) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n })
	return out
}
