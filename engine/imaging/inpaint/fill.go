package inpaint

// onionRandom is how many random sources each onion pixel tries before refining.
const onionRandom = 32

// onionFill gives the hole of the coarsest level its first estimate by peeling it
// from the border inwards: each pixel, in order of its distance to the known photo,
// takes the centre of the source patch that best matches what is already known or
// filled around it (masked distance; candidates from its filled neighbours' sources,
// shifted, plus random ones refined by random search). Structure running into the
// hole thus continues into it, instead of the flat average a smooth fill would give,
// which the search would then match with flat sources. It returns each hole pixel's
// source (-1 elsewhere) to seed the field.
func (l *level) onionFill(seed int64) []int32 {
	w, h, nc, nf := l.w, l.h, l.nc, l.nf
	done := make([]bool, w*h)
	from := make([]int32, w*h)
	for i, hole := range l.hole {
		done[i] = !hole
		from[i] = -1
	}
	var layer, next []int32
	queued := make([]bool, w*h)
	for i, hole := range l.hole {
		if hole && l.hasDoneNeighbour(done, i) {
			layer = append(layer, int32(i))
			queued[i] = true
		}
	}
	r := streamSeed(seed, 4)
	full := max(w, h)
	for len(layer) > 0 {
		for _, i32 := range layer {
			i := int(i32)
			x, y := i%w, i/w
			e := l.extentAt(x, y)
			best, bd := int32(-1), inf32
			try := func(s int) {
				if s < 0 || s >= len(l.valid) || !l.valid[s] || int32(s) == best {
					return
				}
				if d := l.maskedSSD(i, s, e, done) + l.penalty(x, y, s); d < bd {
					bd, best = d, int32(s)
				}
			}
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					if s := from[ny*w+nx]; s >= 0 {
						try(int(s) - dy*w - dx)
					}
				}
			}
			for range onionRandom {
				try(int(l.srcs[r.intn(len(l.srcs))]))
			}
			if best < 0 { // cannot happen (the pixel borders a known one), but never index with -1
				best = l.srcs[0]
			}
			for range 2 {
				cx, cy := int(best)%w, int(best)/w
				for rad := full; rad >= 1; rad /= 2 {
					sx := cx + r.intn(2*rad+1) - rad
					sy := cy + r.intn(2*rad+1) - rad
					if sx >= l.pr && sy >= l.pr && sx < w-l.pr && sy < h-l.pr {
						try(sy*w + sx)
					}
				}
			}
			s := int(best)
			copy(l.lin[i*nc:i*nc+nc], l.lin[s*nc:s*nc+nc])
			if l.hasTex {
				l.tex[2*i], l.tex[2*i+1] = l.tex[2*s], l.tex[2*s+1]
			}
			copy(l.feat[i*nf:i*nf+nf], l.feat[s*nf:s*nf+nf])
			from[i] = best
			done[i] = true
		}
		next = next[:0]
		for _, i32 := range layer {
			i := int(i32)
			x, y := i%w, i/w
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					if j := ny*w + nx; !done[j] && !queued[j] {
						queued[j] = true
						next = append(next, int32(j))
					}
				}
			}
		}
		layer, next = next, layer
	}
	return from
}

// maskedSSD is the mean squared feature distance between the target patch at t and
// the source patch at s over the target pixels that are known (weighted as in ssd) or
// already filled.
func (l *level) maskedSSD(t, s int, e extent, done []bool) float32 {
	nf, w := l.nf, l.w
	var sum float32
	n := float32(0)
	for dy := e.dy0; dy <= e.dy1; dy++ {
		for dx := e.dx0; dx <= e.dx1; dx++ {
			o := dy*w + dx
			if !done[t+o] {
				continue
			}
			a := l.feat[(t+o)*nf : (t+o)*nf+nf]
			b := l.feat[(s+o)*nf : (s+o)*nf+nf]
			var d2 float32
			for k := range a {
				d := a[k] - b[k]
				d2 += d * d
			}
			wt := float32(1)
			if !l.hole[t+o] {
				wt = knownWeight
			}
			sum += wt * d2
			n += wt
		}
	}
	if n == 0 {
		return inf32
	}
	return sum / n / float32(nf)
}

func (l *level) hasDoneNeighbour(done []bool, i int) bool {
	x, y := i%l.w, i/l.w
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			nx, ny := x+dx, y+dy
			if nx >= 0 && ny >= 0 && nx < l.w && ny < l.h && done[ny*l.w+nx] {
				return true
			}
		}
	}
	return false
}

// upsampleFrom starts this level's field from the coarser level's: each target takes
// its parent's source, doubled and shifted by its position within the parent, and the
// parent's vote weight. Where that lands on an invalid source the nearest valid one
// around it is used, failing that a random one.
func (l *level) upsampleFrom(c *level, seed int64, k int) {
	w := l.w
	nb := (l.h + bandRows - 1) / bandRows
	forEach(nb, func(b int) {
		r := streamSeed(seed, 3, k, b)
		for y := b * bandRows; y < min(l.h, (b+1)*bandRows); y++ {
			sp := l.spans[y]
			for x := int(sp[0]); x < int(sp[1]); x++ {
				t := y*w + x
				if l.nnf[t] < 0 {
					continue
				}
				cx, cy := min(x/2, c.w-1), min(y/2, c.h-1)
				ct := cy*c.w + cx
				cs := c.nnf[ct]
				s := int32(-1)
				if cs >= 0 {
					sx := 2*(int(cs)%c.w) + x - 2*cx
					sy := 2*(int(cs)/c.w) + y - 2*cy
					s = l.nearestValid(sx, sy, l.pr)
					l.wt[t] = c.wt[ct]
				} else {
					// The parent is known photo (a hole too thin to survive halving):
					// start from the nearest intact patch.
					s = l.nearestValid(x, y, 3*l.pr)
					l.wt[t] = 1
				}
				if s < 0 {
					s = l.srcs[r.intn(len(l.srcs))]
				}
				l.nnf[t] = s
			}
		}
	})
}

// nearestValid returns the valid source closest to (x, y) within reach pixels, or -1.
func (l *level) nearestValid(x, y, reach int) int32 {
	for rad := 0; rad <= reach; rad++ {
		for dy := -rad; dy <= rad; dy++ {
			for dx := -rad; dx <= rad; dx++ {
				if max(abs(dx), abs(dy)) != rad {
					continue
				}
				sx, sy := x+dx, y+dy
				if sx >= 0 && sy >= 0 && sx < l.w && sy < l.h && l.valid[sy*l.w+sx] {
					return int32(sy*l.w + sx)
				}
			}
		}
	}
	return -1
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
