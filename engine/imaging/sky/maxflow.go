package sky

// This file is a Boykov-Kolmogorov max-flow solver specialised to an 8-connected pixel
// grid: the segmentation is a two-label energy (sky / not sky) minimised exactly by one
// minimum s-t cut. Arcs are addressed as node*8+d, so the graph needs no edge lists.

// Grid neighbour directions, in opposite pairs: direction d^1 points back along d.
var (
	gridDX = [8]int{1, -1, 0, 0, 1, -1, 1, -1}
	gridDY = [8]int{0, 0, 1, -1, 1, -1, -1, 1}
)

const (
	gridK = 8

	treeFree = 0
	treeS    = 1
	treeT    = 2

	parentTerminal = -1
	parentOrphan   = -2
	parentNone     = -3

	distInfinite = int32(1 << 30)
)

// cutGraph holds residual capacities of the grid arcs and the terminal links.
type cutGraph struct {
	w, h  int
	valid []uint8   // bit d set when neighbour d of a node is inside the grid
	off   [8]int32  // index offset of neighbour d
	cap   []float32 // residual capacity of arc node*8+d (node -> its neighbour d)
	tr    []float32 // terminal residual: > 0 from the source, < 0 to the sink

	tree   []uint8
	parent []int32 // arc from the node towards its parent, or a parent* sentinel
	dist   []int32
	ts     []int32
	time   int32

	active  []int32 // FIFO of active nodes
	head    int
	queued  []bool
	orphans []int32
}

func newCutGraph(w, h int) *cutGraph {
	n := w * h
	valid := make([]uint8, n)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var m uint8
			for d := 0; d < gridK; d++ {
				nx, ny := x+gridDX[d], y+gridDY[d]
				if nx >= 0 && ny >= 0 && nx < w && ny < h {
					m |= 1 << d
				}
			}
			valid[y*w+x] = m
		}
	}
	var off [8]int32
	for d := range off {
		off[d] = int32(gridDY[d]*w + gridDX[d])
	}
	return &cutGraph{
		w: w, h: h, valid: valid, off: off,
		cap: make([]float32, n*gridK), tr: make([]float32, n),
		tree: make([]uint8, n), parent: make([]int32, n),
		dist: make([]int32, n), ts: make([]int32, n), queued: make([]bool, n),
	}
}

// neighbour returns the node across arc d of node p, or -1 outside the grid.
func (g *cutGraph) neighbour(p int32, d int) int32 {
	if g.valid[p]&(1<<d) == 0 {
		return -1
	}
	return p + g.off[d]
}

// setTerminal gives node p the costs of taking the source label (costS, paid when it
// ends on the source side) and the sink label (costT).
func (g *cutGraph) setTerminal(p int, costS, costT float32) {
	// Source side pays the p->t link, sink side pays s->p; only the difference matters.
	g.tr[p] = costT - costS
}

// setPair sets the symmetric cost of cutting between p and its neighbour d.
func (g *cutGraph) setPair(p int, d int, c float32) {
	q := g.neighbour(int32(p), d)
	if q < 0 {
		return
	}
	g.cap[p*gridK+d] = c
	g.cap[int(q)*gridK+(d^1)] = c
}

func (g *cutGraph) activate(p int32) {
	if !g.queued[p] {
		g.queued[p] = true
		g.active = append(g.active, p)
	}
}

func (g *cutGraph) nextActive() int32 {
	for g.head < len(g.active) {
		p := g.active[g.head]
		g.head++
		g.queued[p] = false
		if g.tree[p] != treeFree {
			return p
		}
	}
	g.active = g.active[:0]
	g.head = 0
	return -1
}

// arcHead is the node an arc points to.
func (g *cutGraph) arcHead(a int32) int32 { return a/gridK + g.off[a%gridK] }

// sister is the reverse of arc a: from its head back along the opposite direction.
func (g *cutGraph) sister(a int32) int32 { return g.arcHead(a)*gridK + (a % gridK) ^ 1 }

// solve runs max-flow; afterwards sourceSide reports each node's label.
func (g *cutGraph) solve() {
	n := int32(g.w * g.h)
	for p := int32(0); p < n; p++ {
		g.parent[p] = parentNone
		switch {
		case g.tr[p] > 0:
			g.tree[p], g.parent[p], g.dist[p], g.ts[p] = treeS, parentTerminal, 1, 0
			g.activate(p)
		case g.tr[p] < 0:
			g.tree[p], g.parent[p], g.dist[p], g.ts[p] = treeT, parentTerminal, 1, 0
			g.activate(p)
		default:
			g.tree[p] = treeFree
		}
	}
	for {
		p := g.nextActive()
		if p < 0 {
			return
		}
		mid := int32(-1) // arc from the S side to the T side of the found path
		if g.tree[p] == treeS {
			for d := 0; d < gridK; d++ {
				a := p*gridK + int32(d)
				if g.cap[a] <= 0 {
					continue
				}
				q := g.neighbour(p, d)
				if q < 0 {
					continue
				}
				switch g.tree[q] {
				case treeFree:
					g.tree[q], g.parent[q] = treeS, g.sister(a)
					g.ts[q], g.dist[q] = g.ts[p], g.dist[p]+1
					g.activate(q)
				case treeT:
					mid = a
				default:
					if g.ts[q] <= g.ts[p] && g.dist[q] > g.dist[p] {
						g.parent[q] = g.sister(a)
						g.ts[q], g.dist[q] = g.ts[p], g.dist[p]+1
					}
				}
				if mid >= 0 {
					break
				}
			}
		} else {
			for d := 0; d < gridK; d++ {
				q := g.neighbour(p, d)
				if q < 0 {
					continue
				}
				in := q*gridK + int32(d^1) // arc q -> p
				if g.cap[in] <= 0 {
					continue
				}
				switch g.tree[q] {
				case treeFree:
					g.tree[q], g.parent[q] = treeT, in
					g.ts[q], g.dist[q] = g.ts[p], g.dist[p]+1
					g.activate(q)
				case treeS:
					mid = in
				default:
					if g.ts[q] <= g.ts[p] && g.dist[q] > g.dist[p] {
						g.parent[q] = in
						g.ts[q], g.dist[q] = g.ts[p], g.dist[p]+1
					}
				}
				if mid >= 0 {
					break
				}
			}
		}
		if mid >= 0 {
			g.activate(p) // it may still have paths to grow
			g.time++
			g.augment(mid)
			g.adopt()
		}
	}
}

// augment pushes the bottleneck flow along source -> ... -> tail(mid) -> head(mid) ->
// ... -> sink and records the nodes whose parent link saturated as orphans.
func (g *cutGraph) augment(mid int32) {
	tail, hd := mid/gridK, g.arcHead(mid)
	b := g.cap[mid]
	for i := tail; ; {
		a := g.parent[i]
		if a == parentTerminal {
			b = min(b, g.tr[i])
			break
		}
		b = min(b, g.cap[g.sister(a)])
		i = g.arcHead(a)
	}
	for j := hd; ; {
		a := g.parent[j]
		if a == parentTerminal {
			b = min(b, -g.tr[j])
			break
		}
		b = min(b, g.cap[a])
		j = g.arcHead(a)
	}
	g.cap[mid] -= b
	g.cap[g.sister(mid)] += b
	for i := tail; ; {
		a := g.parent[i]
		if a == parentTerminal {
			g.tr[i] -= b
			if g.tr[i] <= 0 {
				g.tr[i] = 0
				g.makeOrphan(i)
			}
			break
		}
		up := g.arcHead(a)
		g.cap[a] += b
		g.cap[g.sister(a)] -= b
		if g.cap[g.sister(a)] <= 0 {
			g.cap[g.sister(a)] = 0
			g.makeOrphan(i)
		}
		i = up
	}
	for j := hd; ; {
		a := g.parent[j]
		if a == parentTerminal {
			g.tr[j] += b
			if g.tr[j] >= 0 {
				g.tr[j] = 0
				g.makeOrphan(j)
			}
			break
		}
		up := g.arcHead(a)
		g.cap[g.sister(a)] += b
		g.cap[a] -= b
		if g.cap[a] <= 0 {
			g.cap[a] = 0
			g.makeOrphan(j)
		}
		j = up
	}
}

func (g *cutGraph) makeOrphan(p int32) {
	g.parent[p] = parentOrphan
	g.orphans = append(g.orphans, p)
}

// adopt finds a new parent in the same tree for every orphan, or frees it.
func (g *cutGraph) adopt() {
	for len(g.orphans) > 0 {
		last := len(g.orphans) - 1
		i := g.orphans[last]
		g.orphans = g.orphans[:last]
		g.adoptOne(i)
	}
}

func (g *cutGraph) adoptOne(i int32) {
	t := g.tree[i]
	best, dmin := int32(-1), distInfinite
	for d := 0; d < gridK; d++ {
		j := g.neighbour(i, d)
		if j < 0 || g.tree[j] != t || g.parent[j] == parentNone {
			continue
		}
		a0 := i*gridK + int32(d) // arc i -> j
		if t == treeS && g.cap[g.sister(a0)] <= 0 {
			continue // the source tree needs residual j -> i
		}
		if t == treeT && g.cap[a0] <= 0 {
			continue // the sink tree needs residual i -> j
		}
		// Walk j's path to its root to check it reaches the terminal.
		dd := int32(0)
		k := j
		for {
			if g.ts[k] == g.time {
				dd += g.dist[k]
				break
			}
			a := g.parent[k]
			dd++
			if a == parentTerminal {
				g.ts[k], g.dist[k] = g.time, 1
				break
			}
			if a == parentOrphan {
				dd = distInfinite
				break
			}
			k = g.arcHead(a)
		}
		if dd < distInfinite {
			if dd < dmin {
				best, dmin = a0, dd
			}
			// Stamp the walked path so later searches stop early.
			for k = j; g.ts[k] != g.time; k = g.arcHead(g.parent[k]) {
				g.ts[k], g.dist[k] = g.time, dd
				dd--
			}
		}
	}
	if best >= 0 {
		g.parent[i] = best
		g.ts[i], g.dist[i] = g.time, dmin+1
		return
	}
	// No parent: free the node; children become orphans, neighbours that could reach it
	// become active again.
	for d := 0; d < gridK; d++ {
		j := g.neighbour(i, d)
		if j < 0 || g.tree[j] != t {
			continue
		}
		a := g.parent[j]
		if a == parentNone {
			continue
		}
		a0 := i*gridK + int32(d)
		if (t == treeS && g.cap[g.sister(a0)] > 0) || (t == treeT && g.cap[a0] > 0) {
			g.activate(j)
		}
		if a >= 0 && g.arcHead(a) == i {
			g.makeOrphan(j)
		}
	}
	g.tree[i] = treeFree
	g.parent[i] = parentNone
}

// sourceSide reports whether node p ended on the source side of the minimum cut.
func (g *cutGraph) sourceSide(p int) bool { return g.tree[p] == treeS }
