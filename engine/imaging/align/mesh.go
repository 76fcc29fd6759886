package align

import "math"

// Mesh is a smooth displacement field on a regular grid of nodes spanning the frame,
// added to a transform's matrix: the source position of (x, y) is M·(x, y) + mesh(x, y),
// the mesh interpolated bilinearly between nodes. Phone brackets need it: the camera
// reprocesses every frame (lens and stabilization corrections), leaving sub-pixel
// warps no homography describes.
type Mesh struct {
	Cols, Rows int          // nodes per row and per column (at least 2)
	W, H       int          // the frame the nodes span: node (i, j) is at (i·(W−1)/(Cols−1), j·(H−1)/(Rows−1))
	D          [][2]float64 // displacement at each node, row by row, in pixels
}

// At returns the interpolated displacement at (x, y).
func (m *Mesh) At(x, y float64) (float64, float64) {
	if m == nil {
		return 0, 0
	}
	gx := x / float64(m.W-1) * float64(m.Cols-1)
	gy := y / float64(m.H-1) * float64(m.Rows-1)
	gx = math.Min(math.Max(gx, 0), float64(m.Cols-1))
	gy = math.Min(math.Max(gy, 0), float64(m.Rows-1))
	i, j := min(int(gx), m.Cols-2), min(int(gy), m.Rows-2)
	tx, ty := gx-float64(i), gy-float64(j)
	a, b := m.D[j*m.Cols+i], m.D[j*m.Cols+i+1]
	c, d := m.D[(j+1)*m.Cols+i], m.D[(j+1)*m.Cols+i+1]
	dx := (1-ty)*((1-tx)*a[0]+tx*b[0]) + ty*((1-tx)*c[0]+tx*d[0])
	dy := (1-ty)*((1-tx)*a[1]+tx*b[1]) + ty*((1-tx)*c[1]+tx*d[1])
	return dx, dy
}

// node returns the position of node (i, j).
func (m *Mesh) node(i, j int) (float64, float64) {
	return float64(i) * float64(m.W-1) / float64(m.Cols-1), float64(j) * float64(m.H-1) / float64(m.Rows-1)
}

// maxAbs is the largest node displacement.
func (m *Mesh) maxAbs() float64 {
	var v float64
	if m != nil {
		for _, d := range m.D {
			v = math.Max(v, math.Hypot(d[0], d[1]))
		}
	}
	return v
}

// apply maps (x, y) through the matrix and the mesh.
func (t *Transform) apply(x, y float64) (float64, float64) {
	sx, sy := t.M.Apply(x, y)
	dx, dy := t.Mesh.At(x, y)
	return sx + dx, sy + dy
}

// fitMesh fits a cols×rows displacement field to the residuals of the matches under
// m (w×h frame), by least squares with a membrane smoothness term so nodes without
// matches follow their neighbours.
func fitMesh(m Mat3, ms []match, w, h, cols, rows int, smooth float64) *Mesh {
	mesh := &Mesh{Cols: cols, Rows: rows, W: w, H: h, D: make([][2]float64, cols*rows)}
	n := cols * rows
	A := make([]float64, n*n)
	bx := make([]float64, n)
	by := make([]float64, n)
	for _, p := range ms {
		px, py := m.Apply(p.tx, p.ty)
		rx, ry := p.sx-px, p.sy-py
		idx, wt := mesh.weights(p.tx, p.ty)
		for a := 0; a < 4; a++ {
			bx[idx[a]] += wt[a] * rx
			by[idx[a]] += wt[a] * ry
			for b := 0; b < 4; b++ {
				A[idx[a]*n+idx[b]] += wt[a] * wt[b]
			}
		}
	}
	// Membrane term: smooth·Σ (d_p − d_q)² over neighbouring nodes, plus a tiny pull
	// to zero so the system is never singular.
	for j := 0; j < rows; j++ {
		for i := 0; i < cols; i++ {
			p := j*cols + i
			A[p*n+p] += 1e-6
			for _, q := range [][2]int{{i + 1, j}, {i, j + 1}} {
				if q[0] >= cols || q[1] >= rows {
					continue
				}
				k := q[1]*cols + q[0]
				A[p*n+p] += smooth
				A[k*n+k] += smooth
				A[p*n+k] -= smooth
				A[k*n+p] -= smooth
			}
		}
	}
	dx, ok1 := solveSPD(append([]float64(nil), A...), bx, n)
	dy, ok2 := solveSPD(A, by, n)
	if !ok1 || !ok2 {
		return nil
	}
	for i := range mesh.D {
		mesh.D[i] = [2]float64{dx[i], dy[i]}
	}
	return mesh
}

// weights returns the four nodes around (x, y) and their bilinear weights.
func (m *Mesh) weights(x, y float64) ([4]int, [4]float64) {
	gx := math.Min(math.Max(x/float64(m.W-1)*float64(m.Cols-1), 0), float64(m.Cols-1))
	gy := math.Min(math.Max(y/float64(m.H-1)*float64(m.Rows-1), 0), float64(m.Rows-1))
	i, j := min(int(gx), m.Cols-2), min(int(gy), m.Rows-2)
	tx, ty := gx-float64(i), gy-float64(j)
	p := j*m.Cols + i
	return [4]int{p, p + 1, p + m.Cols, p + m.Cols + 1},
		[4]float64{(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty, tx * ty}
}

// solveSPD solves the symmetric positive definite system A·x = b (A row-major n×n)
// by Cholesky decomposition, overwriting A.
func solveSPD(A, b []float64, n int) ([]float64, bool) {
	for j := 0; j < n; j++ {
		s := A[j*n+j]
		for k := 0; k < j; k++ {
			s -= A[j*n+k] * A[j*n+k]
		}
		if s <= 0 {
			return nil, false
		}
		A[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := A[i*n+j]
			for k := 0; k < j; k++ {
				s -= A[i*n+k] * A[j*n+k]
			}
			A[i*n+j] = s / A[j*n+j]
		}
	}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := b[i]
		for k := 0; k < i; k++ {
			s -= A[i*n+k] * y[k]
		}
		y[i] = s / A[i*n+i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= A[k*n+i] * x[k]
		}
		x[i] = s / A[i*n+i]
	}
	return x, true
}
