package hotfolder

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// soakEnv is the variable that sets the soak test's duration (Go syntax, "90s").
const soakEnv = "PORCHLIGHT_SOAK"

// The soak test drops real photo sets into a hot folder round after round for a
// while, checks every result, and checks that heap, goroutines and resident memory
// stay flat once the first round has warmed everything up.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs without -short, for " + soakEnv + " (default 60s)")
	}
	d := 60 * time.Second
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: %v", soakEnv, v, err)
		}
	}
	e := newEnv(t, "")
	c := folderConfig(t, "soak")
	c.Grouping, c.Count = GroupSubfolder, 0
	c.Originals = OriginalsDelete
	c.Naming = "{scene}"
	e.start(c)

	type set struct {
		dir   string // "" for a loose file
		files map[string][]byte
	}
	var sets []set
	if e.pipe.Has("merge") {
		kim := map[string][]byte{}
		for _, n := range kimBrackets {
			kim[n] = readPhoto(t, "brackets", "house_interior_kim", n)
		}
		house := map[string][]byte{}
		for _, n := range oldHouse {
			house[n] = readPhoto(t, "brackets", "oldhouse_exterior", n)
		}
		sets = append(sets, set{"kim", kim}, set{"house", house})
	}
	sets = append(sets,
		set{"", map[string][]byte{"bedroom.jpg": readPhoto(t, photoBedroom...)}},
		set{"", map[string][]byte{"kitchen.jpg": readPhoto(t, photoKitchen...)}})

	type sample struct {
		heap       uint64
		goroutines int
		rss        int64
	}
	measure := func() sample {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return sample{heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine(), rss: rssBytes()}
	}
	var base sample
	start := time.Now()
	rounds, scenes := 0, 0
	for rounds == 0 || time.Since(start) < d {
		rounds++
		want := map[string][]string{} // output stem -> inputs
		for i, s := range sets {
			for name, data := range s.files {
				if s.dir == "" {
					stem := fmt.Sprintf("r%04d_%d_%s", rounds, i, name)
					drop(t, c.Input, stem, data)
					want[strings.TrimSuffix(stem, ".jpg")] = []string{stem}
				} else {
					dir := fmt.Sprintf("r%04d_%s", rounds, s.dir)
					drop(t, c.Input, dir+"/"+name, data)
					want[dir] = append(want[dir], dir+"/"+name)
				}
			}
		}
		scenes += len(want)
		waitFor(t, 2*time.Minute, fmt.Sprintf("round %d", rounds), func() bool { return e.settledCount("soak") == scenes })
		if st := e.status("soak"); st.Failed != 0 {
			t.Fatalf("round %d: %+v", rounds, st)
		}
		for stem, inputs := range want {
			out := filepath.Join(c.Output, stem+".jpg")
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			if _, format, err := image.DecodeConfig(bytes.NewReader(b)); err != nil || format != "jpeg" {
				t.Fatalf("round %d: %s: %v", rounds, stem, err)
			}
			sc := readSidecar(t, out+".json")
			if sc.Status != "completed" || len(sc.Inputs) != len(inputs) {
				t.Fatalf("round %d: %s: %+v", rounds, stem, sc)
			}
			os.Remove(out)
			os.Remove(out + ".json")
		}
		if left := filesIn(t, c.Input); len(left) != 0 {
			t.Fatalf("round %d left %v in the input", rounds, left)
		}
		if rounds == 1 {
			base = measure()
		}
	}
	end := measure()
	t.Logf("soak: %d rounds, %d scenes in %v; heap %.1f -> %.1f MB, goroutines %d -> %d, RSS %.1f -> %.1f MB",
		rounds, scenes, time.Since(start).Round(time.Second), mb(base.heap), mb(end.heap),
		base.goroutines, end.goroutines, float64(base.rss)/1e6, float64(end.rss)/1e6)
	if end.goroutines > base.goroutines+5 {
		t.Errorf("goroutines grew from %d to %d", base.goroutines, end.goroutines)
	}
	if end.heap > base.heap+32<<20 {
		t.Errorf("heap grew from %.1f to %.1f MB", mb(base.heap), mb(end.heap))
	}
	if base.rss > 0 && end.rss > base.rss+256<<20 {
		t.Errorf("resident memory grew from %.1f to %.1f MB", float64(base.rss)/1e6, float64(end.rss)/1e6)
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// rssBytes is the resident set size from /proc/self/status, 0 where unavailable.
func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
