package engine_test

import (
	"context"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
)

// BenchmarkSubmit measures validation plus the durable enqueue of one order.
func BenchmarkSubmit(b *testing.B) {
	e := newEnv(b, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Quality: ptr(90)}, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmitBatch100 measures a 100-scene batch: validation of every scene and
// one transaction for all of them.
func BenchmarkSubmitBatch100(b *testing.B) {
	e := newEnv(b, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	scenes := make([]engine.Scene, 100)
	for i := range scenes {
		scenes[i] = engine.Scene{Inputs: []string{in}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: scenes}, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrderThroughput runs small real orders end to end (queue, worker,
// pipeline, output) with the default worker count.
func BenchmarkOrderThroughput(b *testing.B) {
	e := newEnv(b, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	b.ReportAllocs()
	b.ResetTimer()
	ids := make([]string, b.N)
	for i := range ids {
		s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = s.OrderUUID
	}
	for _, id := range ids {
		if s := e.wait(e.owner, id); s.Status != core.OrderCompleted {
			b.Fatalf("order ended %s: %s", s.Status, s.Error)
		}
	}
}
