package client

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/porchlight/porchlight/core"
)

// Feature is one entry of the feature catalog.
type Feature struct {
	Key        string  `json:"key"`
	Category   string  `json:"category"`
	Recipe     string  `json:"recipe"`
	Version    string  `json:"version"`
	Parameters []Param `json:"parameters"`
	Available  bool    `json:"available"`
}

// Param is one order option of a feature.
type Param struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Default   any      `json:"default"`
	Enum      []string `json:"enum,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MaxLength int      `json:"maxLength,omitempty"`
}

// Preset is a named look an order selects by Key.
type Preset struct {
	Key         string         `json:"key"`
	Name        string         `json:"name"`
	Feature     string         `json:"feature"`
	Description string         `json:"description"`
	Settings    map[string]any `json:"settings"`
}

// IssuedKey is a new API key with its secret, shown once.
type IssuedKey struct {
	core.Key
	Secret string `json:"key"`
}

// RotatedKey is the answer of a rotation: the key's new secret.
type RotatedKey struct {
	UUID   string `json:"uuid"`
	Name   string `json:"name"`
	Secret string `json:"key"`
}

// Health is GET /healthz (public).
func (c *Client) Health(ctx context.Context) error {
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/healthz", noKey: true}, nil)
	return err
}

// OpenAPI returns the machine-readable description, GET /openapi.json (public).
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	res, err := c.send(ctx, request{method: http.MethodGet, path: "/openapi.json", noKey: true})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return io.ReadAll(io.LimitReader(res.Body, 16<<20))
}

// Features is GET /v1/features (public).
func (c *Client) Features(ctx context.Context) ([]Feature, error) {
	var ans struct {
		Features []Feature `json:"features"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/features", noKey: true}, &ans)
	return ans.Features, err
}

// Presets is GET /v1/presets?feature=; feature "" lists every preset.
func (c *Client) Presets(ctx context.Context, feature string) ([]Preset, error) {
	q := url.Values{}
	if feature != "" {
		q.Set("feature", feature)
	}
	var ans struct {
		Presets []Preset `json:"presets"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/presets", query: q}, &ans)
	return ans.Presets, err
}

// CreateKey is POST /v1/api-keys (admin scope).
func (c *Client) CreateKey(ctx context.Context, name string, scope core.Scope) (IssuedKey, error) {
	var k IssuedKey
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/api-keys", retry: retryLimited,
		body: map[string]any{"name": name, "scope": scope}}, &k)
	return k, err
}

// ListKeys is GET /v1/api-keys (admin scope).
func (c *Client) ListKeys(ctx context.Context) ([]core.Key, error) {
	var ks []core.Key
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/api-keys"}, &ks)
	return ks, err
}

// RevokeKey is DELETE /v1/api-keys/:uuid (admin scope).
func (c *Client) RevokeKey(ctx context.Context, uuid string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: "/v1/api-keys/" + escape(uuid), retry: retryLimited}, nil)
	return err
}

// RotateKey is POST /v1/api-keys/rotate: the calling key gets a new secret and the
// old one stops working at once, so the client uses the new one from then on.
func (c *Client) RotateKey(ctx context.Context) (RotatedKey, error) {
	var k RotatedKey
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/api-keys/rotate", retry: retryLimited}, &k)
	if err == nil && k.Secret != "" {
		c.key = k.Secret
	}
	return k, err
}
