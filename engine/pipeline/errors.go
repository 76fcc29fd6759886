package pipeline

import (
	"errors"
	"fmt"

	"github.com/porchlight/porchlight/engine/backends"
)

// Error codes an order can fail with (the order summary's errorCode).
const (
	CodeFeatureUnavailable = "feature_unavailable" // the build or the config lacks a step the order needs
	CodeUnreadableInput    = "unreadable_input"    // an input could not be decoded
	CodeInputUnavailable   = "input_unavailable"   // an input or the mask was deleted or is not ready
	CodeMismatchedInputs   = "mismatched_inputs"   // brackets of different sizes
	CodeInvalidMask        = "invalid_mask"        // the mask is not a usable mask for the input
	CodeStepFailed         = "processing_failed"   // a step could not process the image
	CodeBackendError       = "backend_error"       // a model backend failed
	CodeOutputFailed       = "output_failed"       // the result could not be encoded or stored
	CodeInternal           = "internal_error"      // a step crashed (a bug); the process kept running
)

// Error is a failure that ends an order, with a stable code and a reason for people.
type Error struct {
	Code   string
	Reason string
	Err    error // underlying cause, if any
}

func (e *Error) Error() string { return e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted reason.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with code whose reason is context: cause.
func Wrap(code string, cause error, context string) *Error {
	return &Error{Code: code, Reason: context + ": " + cause.Error(), Err: cause}
}

// CodeOf returns the code of the first *Error in err's chain, or CodeStepFailed for
// an error that carries none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, ErrUnavailable) {
		return CodeFeatureUnavailable
	}
	return CodeStepFailed
}

// UnavailableError reports a step the order needs that is not registered.
type UnavailableError struct {
	Step    string
	Feature string
	Backend bool // the feature runs on a model backend and none is configured

	configKey string // the feature's key under `features` in the config file
}

func (e *UnavailableError) Error() string {
	if e.Backend {
		msg := fmt.Sprintf("%s is not available: no model backend is configured for it", e.Feature)
		if e.configKey != "" {
			msg += ". " + backends.ConfigureHint(e.configKey)
		}
		return msg
	}
	return fmt.Sprintf("%s is not available in this build", e.Feature)
}

// Is makes errors.Is(err, ErrUnavailable) match any unavailable feature.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ErrUnavailable matches every *UnavailableError under errors.Is.
var ErrUnavailable = errors.New("feature unavailable")

// backendFeatureOf is the config key of the generative feature whose step is step,
// or "" for a step that runs in-process.
func backendFeatureOf(step string) string {
	for f, rc := range genRecipes {
		if rc.step == step {
			return f
		}
	}
	return ""
}
