package lens

import "testing"

// BenchmarkPrepare21MP is matching and the map's grid for a 21 MP frame.
func BenchmarkPrepare21MP(b *testing.B) {
	needDB(b)
	b.ReportAllocs()
	for range b.N {
		if _, err := Prepare(estateLenses[0].shot, 5616, 3744); err != nil {
			b.Fatal(err)
		}
	}
}
