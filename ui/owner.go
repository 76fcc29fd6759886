package ui

import (
	"fmt"

	"github.com/porchlight/porchlight/core"
)

// OwnerKeyName is the name of the standard API key the window acts as. Everything
// made in the window (imported photos, orders, batches, exports) belongs to this key,
// as if a local user had sent it through the API. Its secret is never shown; when it
// is revoked, the next start creates a new one (earlier work then stays with the old
// key and no longer appears in the window).
const OwnerKeyName = "window"

// OwnerKey returns the uuid of the "window" key, creating it the first time. It is
// idempotent: the oldest standard key of that name is used.
func OwnerKey(k Keys) (string, error) {
	list, err := k.List()
	if err != nil {
		return "", fmt.Errorf("window owner key: %w", err)
	}
	for _, key := range list {
		if key.Name == OwnerKeyName && key.Scope == core.ScopeStandard {
			return key.UUID, nil
		}
	}
	key, _, err := k.Create(OwnerKeyName, core.ScopeStandard)
	if err != nil {
		return "", fmt.Errorf("create window owner key: %w", err)
	}
	return key.UUID, nil
}
