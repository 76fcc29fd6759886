package assets

import "errors"

import "github.com/porchlight/porchlight/core"

func asCore(err error, target **core.Error) bool { return errors.As(err, target) }
