package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestSupervisorStopsAllWhenOneFails(t *testing.T) {
	s := NewSupervisor(quietLog())
	stopped := make(chan struct{})
	s.Add("long", ServiceFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return ctx.Err()
	}))
	s.Add("bad", ServiceFunc(func(ctx context.Context) error { return errors.New("boom") }))
	err := s.Serve(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad: boom") {
		t.Fatalf("want bad: boom, got %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(time.Second):
		t.Fatal("the long service was not cancelled")
	}
}

func TestSupervisorGracefulStop(t *testing.T) {
	s := NewSupervisor(quietLog())
	s.Add("a", ServiceFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }))
	s.Add("done-early", ServiceFunc(func(ctx context.Context) error { return nil }))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if err := s.Serve(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestSupervisorRecoversPanic(t *testing.T) {
	s := NewSupervisor(quietLog())
	s.Add("p", ServiceFunc(func(ctx context.Context) error { panic("oops") }))
	if err := s.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("want panic error, got %v", err)
	}
}
