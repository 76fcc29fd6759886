package codec

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// A truncated JPEG fails every time, also while other decodes run at once.
func TestTruncatedJPEGAlwaysFailsUnderConcurrency(t *testing.T) {
	b, err := os.ReadFile(testphotos.Path(t, "interiors", "houses_111_bedroom.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:len(b)*6/10]
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 32; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _, err := Decode(bytes.NewReader(cut), int64(len(cut)), DecodeOptions{})
			errs <- err
		}()
		go func() { // a sound decode beside it
			defer wg.Done()
			Decode(bytes.NewReader(b), int64(len(b)), DecodeOptions{})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if CodeOf(err) != CodeUnreadable {
			t.Fatalf("truncated JPEG: want unreadable, got %v", err)
		}
	}
}
