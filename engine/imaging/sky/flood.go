package sky

// flood collects into queue the connected part of the pixels for which in holds that
// contains start (4-connected, or 8-connected when conn is 8), marking each in seen,
// and returns it with its bounding box. start must satisfy in and not be seen yet.
func flood(start, w, h, conn int, in func(q int) bool, seen []bool, queue []int32) (part []int32, x0, y0, x1, y1 int) {
	queue = append(queue[:0], int32(start))
	seen[start] = true
	x0, y0, x1, y1 = w, h, 0, 0
	for i := 0; i < len(queue); i++ {
		p := int(queue[i])
		x, y := p%w, p/w
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		for d := 0; d < conn; d++ {
			nx, ny := x+gridDX[d], y+gridDY[d]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			if q := ny*w + nx; !seen[q] && in(q) {
				seen[q] = true
				queue = append(queue, int32(q))
			}
		}
	}
	return queue, x0, y0, x1, y1
}
