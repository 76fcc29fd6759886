package imaging

import (
	"math"
	"testing"
)

func TestNarrowEightBitExact(t *testing.T) {
	m := New(256, 3, 3)
	for i := range m.Pix {
		m.Pix[i] = Decode8(uint8((i * 7) % 256))
	}
	n := m.Narrow()
	if n.Pix8 == nil || n.Pix != nil || !n.IsNarrow() {
		t.Fatalf("8-bit image not held in 8 bits")
	}
	if n.Bytes() != len(m.Pix) {
		t.Fatalf("Bytes %d, want %d", n.Bytes(), len(m.Pix))
	}
	back := n.Widen()
	for i, v := range back.Pix {
		if v != m.Pix[i] {
			t.Fatalf("sample %d: %g, want %g", i, v, m.Pix[i])
		}
	}
	enc := n.EncodedRow(1, make([]float32, 256*3))
	for x, v := range enc {
		want := float32((256*3+x)*7%256) / 255
		if v != want {
			t.Fatalf("encoded %d: %g, want %g", x, v, want)
		}
	}
}

func TestNarrowSixteenBit(t *testing.T) {
	m := New(200, 2, 3)
	for i := range m.Pix {
		m.Pix[i] = float32(i) / float32(len(m.Pix)-1)
	}
	m.Pix[5] = -0.5
	m.Pix[6] = 1.5
	m.Pix[7] = float32(math.NaN())
	n := m.Narrow()
	if n.Pix16 == nil || n.Pix8 != nil {
		t.Fatalf("non-8-bit image not held in 16 bits")
	}
	for y := 0; y < 2; y++ {
		lin := n.LinearRow(y, make([]float32, 600))
		enc := n.EncodedRow(y, make([]float32, 600))
		for x := range lin {
			v := m.Pix[y*600+x]
			want := float64(LinearToSRGB(v))
			if math.IsNaN(float64(v)) {
				want = 0
			}
			if d := math.Abs(float64(enc[x]) - want); d > 1.0/65535 {
				t.Fatalf("sample %d: encoded %g, want %g", x, enc[x], want)
			}
			if v >= 0 && v <= 1 && math.Abs(float64(lin[x]-v)) > 2e-4*float64(v)+1e-6 {
				t.Fatalf("sample %d: linear %g, want %g", x, lin[x], v)
			}
		}
	}
	if n.Narrow() != n {
		t.Fatal("Narrow of a narrow image copied it")
	}
	if err := n.CheckBuffer(); err != nil {
		t.Fatal(err)
	}
	n.Pix16 = n.Pix16[:10]
	if n.CheckBuffer() == nil {
		t.Fatal("short buffer passed")
	}
}

func BenchmarkNarrow(b *testing.B) {
	m := New(5616, 3744, 3)
	for i := range m.Pix {
		m.Pix[i] = Decode8(uint8(i * 31))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(m.Pix)) * 4)
	for b.Loop() {
		m.Narrow()
	}
}
