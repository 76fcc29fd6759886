package imaging

// ChamferFar is the distance Chamfer gives a pixel with nothing to measure to.
const ChamferFar = int32(1 << 29)

// Chamfer returns, for every pixel of a w×h grid, the 3-4 chamfer distance (3 per
// axial step, 4 per diagonal one: thirds of a pixel) to the nearest pixel where
// set[i] != invert, in two passes over the grid. Pixels with no such pixel get
// ChamferFar.
func Chamfer(set []bool, w, h int, invert bool) []int32 {
	d := make([]int32, w*h)
	for i, v := range set {
		if v != invert {
			d[i] = 0
		} else {
			d[i] = ChamferFar
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			v := d[i]
			if v == 0 {
				continue
			}
			if x > 0 {
				v = min(v, d[i-1]+3)
			}
			if y > 0 {
				v = min(v, d[i-w]+3)
				if x > 0 {
					v = min(v, d[i-w-1]+4)
				}
				if x < w-1 {
					v = min(v, d[i-w+1]+4)
				}
			}
			d[i] = v
		}
	}
	for y := h - 1; y >= 0; y-- {
		for x := w - 1; x >= 0; x-- {
			i := y*w + x
			v := d[i]
			if v == 0 {
				continue
			}
			if x < w-1 {
				v = min(v, d[i+1]+3)
			}
			if y < h-1 {
				v = min(v, d[i+w]+3)
				if x < w-1 {
					v = min(v, d[i+w+1]+4)
				}
				if x > 0 {
					v = min(v, d[i+w-1]+4)
				}
			}
			d[i] = v
		}
	}
	return d
}
