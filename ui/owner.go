package ui

import (
	"fmt"

	"github.com/porchlight/porchlight/engine/keys"
)

// OwnerKeyName is the name of the internal owner the window acts as. Everything
// made in the window (imported photos, orders, batches, exports) belongs to it, as
// if a local user had sent it through the API. It is a key record with no secret,
// recorded by uuid (keys.Service.InternalOwner), so no API key, whatever its name,
// can reach the window's work.
const OwnerKeyName = keys.OwnerWindow

// OwnerKey returns the uuid of the window's internal owner, creating it the first
// time.
func OwnerKey(k Keys) (string, error) {
	id, err := k.InternalOwner(OwnerKeyName)
	if err != nil {
		return "", fmt.Errorf("window owner key: %w", err)
	}
	return id, nil
}
