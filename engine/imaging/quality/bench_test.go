package quality

import "testing"

func BenchmarkMEFSSIM(b *testing.B) {
	var seq = make([]*plane, 5)
	for i := range seq {
		p := newPlane(1024, 680)
		for j := range p.pix {
			p.pix[j] = float64((j*7919 + i*31) % 255)
		}
		seq[i] = p
	}
	b.ReportAllocs()
	for b.Loop() {
		xs := append([]*plane(nil), seq...)
		mefSSIMPlanes(xs, seq[2])
	}
}
