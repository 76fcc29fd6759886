package client_test

import (
	"errors"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/localapi/client"
	"github.com/porchlight/porchlight/localapi/client/clienttest"
)

// A pending upload gets a new address, which then takes the bytes; a ready asset has
// no address to re-issue and the server's 409 comes back as an API error.
func TestReissueUploadURL(t *testing.T) {
	_, c := standard(t, clienttest.Options{})
	ctx := ctxT(t)
	d, err := c.DeclareAsset(ctx, "A.jpg", "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.ReissueUploadURL(ctx, d.AssetID)
	if err != nil {
		t.Fatal(err)
	}
	if again.AssetID != d.AssetID || again.UploadURL == "" || again.ExpiresIn <= 0 {
		t.Fatalf("re-issued %+v, declared %+v", again, d)
	}
	if err := c.PutUpload(ctx, again.UploadURL, "image/jpeg", photo(t, "A.jpg")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConfirmUpload(ctx, d.AssetID); err != nil {
		t.Fatal(err)
	}
	if st, err := c.WaitAsset(ctx, d.AssetID); err != nil || st.Status != core.AssetReady {
		t.Fatalf("asset after the re-issued upload: %+v %v", st, err)
	}
	_, err = c.ReissueUploadURL(ctx, d.AssetID)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("re-issue for a ready asset: %v", err)
	}
}
