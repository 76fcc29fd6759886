// Package adapters builds the Registry of model backends from the configuration
// with every adapter this build has: comfyui, iopaint, a1111, openai and remote.
package adapters

import (
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/a1111"
	"github.com/porchlight/porchlight/engine/backends/comfyui"
	"github.com/porchlight/porchlight/engine/backends/iopaint"
	"github.com/porchlight/porchlight/engine/backends/openai"
	"github.com/porchlight/porchlight/engine/backends/remote"
)

// Types lists the adapters.
func Types() []backends.Type {
	return []backends.Type{comfyui.Type, iopaint.Type, a1111.Type, openai.Type, remote.Type}
}

// NewRegistry builds the registry from the config keys `backends` (name -> settings)
// and `features` (feature key -> backend name). An empty config gives an empty
// registry: every generative feature is then unavailable and says how to configure it.
func NewRegistry(specs map[string]map[string]any, features map[string]string) (*backends.Registry, error) {
	return backends.NewRegistry(specs, features, Types())
}
