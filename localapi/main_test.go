package localapi

import (
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
)

func TestMain(m *testing.M) {
	// Downloads answer image bytes; let the document check read them as a string,
	// which is what the document says they are.
	for _, ct := range []string{"image/jpeg", "image/png", "image/webp"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
	}
	os.Exit(m.Run())
}
