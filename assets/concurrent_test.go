package assets

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// Fifty clients declare, PUT over HTTP and confirm at once; every asset must reach
// ready and download byte for byte. A few trailing bytes after each JPEG's end make
// every upload distinct (decoders ignore them) so no two share a blob.
func TestFiftyConcurrentUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 50 photos")
	}
	e := newEnv(t, Config{})
	sources := [][]byte{
		photo(t, "interiors", "houses_156_bedroom.jpg"),
		photo(t, "interiors", "houses_158_bedroom.jpg"),
		photo(t, "interiors", "houses_162_bedroom.jpg"),
		photo(t, "interiors", "houses_162_kitchen.jpg"),
		photo(t, "interiors", "houses_218_kitchen.jpg"),
		photo(t, "brackets", "house_interior_kim", "A.jpg"),
		photo(t, "brackets", "house_interior_kim", "D.jpg"),
	}
	const n = 50
	type upload struct {
		id   string
		data []byte
	}
	ups := make([]upload, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		data := append(append([]byte(nil), sources[i%len(sources)]...), fmt.Sprintf("#%03d", i)...)
		ups[i].data = data
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, url, err := e.s.Declare(owner, fmt.Sprintf("photo-%02d.jpg", i), "image/jpeg")
			if err != nil {
				errs <- err
				return
			}
			ups[i].id = a.ID
			req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(data))
			req.Header.Set("Content-Type", "image/jpeg")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("PUT %d: %d", i, resp.StatusCode)
				return
			}
			if _, err := e.s.Confirm(owner, a.ID); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, u := range ups {
		a := e.wait(u.id)
		if a.Status != core.AssetReady || a.SHA256 != hexSum(u.data) {
			t.Fatalf("upload %d: %s %s %s", i, a.Status, a.Code, a.Reason)
		}
		url, _, err := e.s.DownloadURL(owner, u.id)
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, url)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, u.data) {
			t.Fatalf("download %d: %d, bytes equal %v", i, resp.StatusCode, bytes.Equal(body, u.data))
		}
	}
}
