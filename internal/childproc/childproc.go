// Package childproc serves tests that run a child process (the test binary run
// again) and wait for it to announce itself on one of its output streams.
package childproc

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// WaitLine reads out line by line until a line starting with prefix and answers the
// rest of it; the lines after it are drained in the background, so that the child
// never blocks on a full pipe. A child whose output ends first (a failure, a skip)
// fails the test at once with what it printed; timeout only catches a child that
// hangs.
func WaitLine(t testing.TB, out io.Reader, prefix string, timeout time.Duration) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the child exited before printing %q; its output:\n%s", prefix, strings.Join(seen, "\n"))
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				go func() { // keep the pipe drained while the child runs
					for range lines {
					}
				}()
				return rest
			}
			seen = append(seen, l)
		case <-deadline:
			t.Fatalf("the child did not print %q within %s; its output:\n%s", prefix, timeout, strings.Join(seen, "\n"))
		}
	}
}
