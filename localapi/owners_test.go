package localapi

import "testing"

// An internal owner has no secret to rotate and cannot be revoked through the API.
func TestInternalOwnerCannotBeRevoked(t *testing.T) {
	e := startServer(t)
	id, err := e.keys.InternalOwner("hotfolders")
	if err != nil {
		t.Fatal(err)
	}
	e.want(e.do("DELETE", "/v1/api-keys/"+id, e.admin, nil), 400, "hot-folder orders")
	if _, err := e.keys.Get(id); err != nil {
		t.Fatalf("the owner is gone: %v", err)
	}
}
