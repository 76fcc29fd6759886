package codec

import (
	"errors"
	"fmt"
)

// Ingest failure codes, as the asset store reports them in data.code.
const (
	CodeEmptyFile          = "empty_file"
	CodeUnsupportedFormat  = "unsupported_format"
	CodeUnreadable         = "unreadable"
	CodeResolutionTooLarge = "resolution_too_large"
)

// Error is a decoding failure with a stable machine code (one of the Code constants)
// and a reason meant for people. errors.Is matches it against the sentinels below by
// code, so callers can test `errors.Is(err, codec.ErrUnreadable)`.
type Error struct {
	Code   string
	Reason string
	Err    error // underlying cause, if any
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return e.Code
	}
	return e.Code + ": " + e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Reason == "" || t.Reason == e.Reason)
}

// Sentinels for errors.Is.
var (
	ErrEmptyFile          = &Error{Code: CodeEmptyFile}
	ErrUnsupportedFormat  = &Error{Code: CodeUnsupportedFormat}
	ErrUnreadable         = &Error{Code: CodeUnreadable}
	ErrResolutionTooLarge = &Error{Code: CodeResolutionTooLarge}
)

// CodeOf returns the code of the first *Error in err's chain, or "" when there is none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func unreadable(cause error, format string, args ...any) error {
	return &Error{Code: CodeUnreadable, Reason: fmt.Sprintf(format, args...), Err: cause}
}

func unsupported(format string, args ...any) error {
	return &Error{Code: CodeUnsupportedFormat, Reason: fmt.Sprintf(format, args...)}
}

func tooLarge(w, h int, max int64) error {
	return &Error{Code: CodeResolutionTooLarge,
		Reason: fmt.Sprintf("%dx%d is %.1f megapixels, over the limit of %.1f", w, h,
			float64(w)*float64(h)/1e6, float64(max)/1e6)}
}
