package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/sync/errgroup"
)

// Service is a long-lived component: it runs until ctx ends or it fails.
type Service interface {
	Serve(ctx context.Context) error
}

// ServiceFunc adapts a function to Service.
type ServiceFunc func(ctx context.Context) error

// Serve calls f.
func (f ServiceFunc) Serve(ctx context.Context) error { return f(ctx) }

// Supervisor runs a set of services together: when one returns an error, the others
// are cancelled and Serve returns that first error. A service that returns nil before
// the context ends is treated as finished, not as a failure.
type Supervisor struct {
	log      *slog.Logger
	names    []string
	services []Service
}

// NewSupervisor returns an empty supervisor that logs through log.
func NewSupervisor(log *slog.Logger) *Supervisor { return &Supervisor{log: log} }

// Add registers a service under a name used in logs and errors.
func (s *Supervisor) Add(name string, svc Service) {
	s.names = append(s.names, name)
	s.services = append(s.services, svc)
}

// Serve runs every service until ctx ends or one fails.
func (s *Supervisor) Serve(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for i, svc := range s.services {
		name, svc := s.names[i], svc
		g.Go(func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%s: panic: %v", name, r)
				}
			}()
			s.log.Debug("service starting", "service", name)
			err = svc.Serve(gctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				s.log.Error("service failed", "service", name, "err", err)
				return fmt.Errorf("%s: %w", name, err)
			}
			s.log.Debug("service stopped", "service", name)
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		return ctx.Err()
	}
	return err
}
