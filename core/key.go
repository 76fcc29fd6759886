package core

import "time"

// Scope is what an API key may do.
type Scope string

const (
	ScopeStandard Scope = "standard" // orders and reads its own work
	ScopeAdmin    Scope = "admin"    // also manages the key fleet
)

// Key is an API key record. The secret itself is never stored, only its hash.
type Key struct {
	UUID       string     `json:"uuid"`
	Name       string     `json:"name"`
	Scope      Scope      `json:"scope"`
	Prefix     string     `json:"prefix"` // the first characters of the secret, for people to tell keys apart
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}
