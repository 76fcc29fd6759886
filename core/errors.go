package core

import (
	"errors"
	"fmt"
)

// Kind classifies an error so every front door can answer it the same way: the API
// maps it to an HTTP status, the CLI and the window to a message.
type Kind int

const (
	KindInternal     Kind = iota
	KindInvalid           // the request is malformed or breaks a rule (400)
	KindUnauthorized      // missing, invalid or rotated-away key (401)
	KindForbidden         // valid key, insufficient scope (403)
	KindNotFound          // missing or owned by another key (404)
	KindConflict          // the resource's state forbids the action (409)
	KindTooLarge          // body over the limit (413)
	KindUnsupported       // wrong media type (415)
)

// Error is an error with a kind, an optional offending field and a reason meant for
// people. Field is the JSON path of the offending value ("inputs[2]",
// "scenes[4].quality") when there is one.
type Error struct {
	Kind   Kind
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Field != "" && e.Reason != "" {
		return e.Field + ": " + e.Reason
	}
	if e.Reason != "" {
		return e.Reason
	}
	return e.Field
}

// Invalid reports a bad value of field.
func Invalid(field, format string, args ...any) error {
	return &Error{Kind: KindInvalid, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// NotFound reports a missing resource (or one owned by another key).
func NotFound(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Reason: fmt.Sprintf(format, args...)}
}

// Conflict reports an action that the resource's state forbids.
func Conflict(format string, args ...any) error {
	return &Error{Kind: KindConflict, Reason: fmt.Sprintf(format, args...)}
}

// Unauthorized reports a missing or unknown key.
func Unauthorized(format string, args ...any) error {
	return &Error{Kind: KindUnauthorized, Reason: fmt.Sprintf(format, args...)}
}

// Forbidden reports a key without the scope an action needs.
func Forbidden(format string, args ...any) error {
	return &Error{Kind: KindForbidden, Reason: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err, KindInternal for errors that carry none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// WithPrefix returns err with its field prefixed, so a scene's validation error names
// "scenes[4].quality" rather than "quality". Other errors are returned as they are.
func WithPrefix(prefix string, err error) error {
	var e *Error
	if !errors.As(err, &e) || prefix == "" {
		return err
	}
	c := *e
	switch {
	case c.Field == "":
		c.Field = prefix
	case c.Field[0] == '[':
		c.Field = prefix + c.Field
	default:
		c.Field = prefix + "." + c.Field
	}
	return &c
}
