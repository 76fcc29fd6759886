package localapi

import (
	"net/http"

	"github.com/porchlight/porchlight/core"
)

// Handlers of API key management: admins issue, list and revoke keys; every key
// can rotate itself (their rows are in routes.go).

type createKeyRequest struct {
	Name  string     `json:"name" doc:"a label for people, 1 to 100 characters"`
	Scope core.Scope `json:"scope,omitempty" doc:"standard (default) or admin"`
}

// issuedKey is a key record with its secret, which is shown this once.
type issuedKey struct {
	core.Key
	Secret string `json:"key" doc:"the secret (sk-...); shown only in this answer"`
}

type rotatedKey struct {
	UUID   string `json:"uuid"`
	Name   string `json:"name"`
	Secret string `json:"key" doc:"the new secret; the old one stopped working"`
}

type revokedKey struct {
	UUID    string `json:"uuid"`
	Revoked bool   `json:"revoked"`
}

func (s *Server) createKey(r *http.Request) (int, any, error) {
	var req createKeyRequest
	if err := DecodeJSON(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Scope == "" {
		req.Scope = core.ScopeStandard
	}
	k, secret, err := s.deps.Keys.Create(req.Name, req.Scope)
	if err != nil {
		return 0, nil, err
	}
	s.log.Info("api key issued", "uuid", k.UUID, "name", k.Name, "scope", k.Scope, "by", Owner(r))
	return 0, issuedKey{Key: k, Secret: secret}, nil
}

func (s *Server) listKeys(*http.Request) (int, any, error) {
	list, err := s.deps.Keys.List()
	if err != nil {
		return 0, nil, err
	}
	if list == nil {
		list = []core.Key{}
	}
	return 0, list, nil
}

func (s *Server) revokeKey(r *http.Request) (int, any, error) {
	id := PathVar(r, "uuid")
	if err := s.deps.Keys.Revoke(id); err != nil {
		return 0, nil, err
	}
	s.log.Info("api key revoked", "uuid", id, "by", Owner(r))
	return 0, revokedKey{UUID: id, Revoked: true}, nil
}

func (s *Server) rotateKey(r *http.Request) (int, any, error) {
	// The secret that authenticated this request is swapped in one transaction,
	// so of concurrent rotations with it only one gets a new secret.
	k, secret, err := s.deps.Keys.RotateSecret(r.Header.Get(HeaderAPIKey))
	if err != nil {
		return 0, nil, err
	}
	s.log.Info("api key rotated", "uuid", k.UUID)
	return 0, rotatedKey{UUID: k.UUID, Name: k.Name, Secret: secret}, nil
}
