package ui

import (
	"container/list"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // asset thumbnails are JPEG
	"os"
	"sync"

	"golang.org/x/image/draw"

	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// thumbEdge is the longest edge of the thumbnails the window keeps: enough for the
// overview grid on a high-density screen, small enough to hold hundreds.
const thumbEdge = 320

// thumbCache holds small previews by key ("file:" + path or "asset:" + id), loads
// missing ones on a few background workers, newest request first (the rows on
// screen now), and forgets the least recently used beyond its capacity. Reading it
// never blocks on a load.
type thumbCache struct {
	mu      sync.Mutex
	entries map[string]*list.Element
	lru     *list.List // front: most recently used
	max     int
	stack   []thumbJob // requests not yet started, newest last
	loading map[string]bool
	wake    chan struct{}
	onLoad  func() // called after a load finished (from a worker)
}

type thumbEntry struct {
	key string
	img image.Image // nil when the load failed
	err error
}

type thumbJob struct {
	key  string
	load func() (image.Image, error)
}

func newThumbCache(capacity int, onLoad func()) *thumbCache {
	return &thumbCache{
		entries: map[string]*list.Element{}, lru: list.New(), max: capacity,
		loading: map[string]bool{}, wake: make(chan struct{}, 1), onLoad: onLoad,
	}
}

// work loads queued previews until ctx ends; run it on a few goroutines.
func (c *thumbCache) work(ctx context.Context) {
	for {
		job, ok := c.next(ctx)
		if !ok {
			return
		}
		img, err := job.load()
		c.store(job.key, img, err)
		if c.onLoad != nil {
			c.onLoad()
		}
	}
}

func (c *thumbCache) next(ctx context.Context) (thumbJob, bool) {
	for {
		c.mu.Lock()
		if n := len(c.stack); n > 0 {
			job := c.stack[n-1]
			c.stack = c.stack[:n-1]
			c.mu.Unlock()
			return job, true
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return thumbJob{}, false
		case <-c.wake:
		}
	}
}

// Get returns the cached preview of key. A miss schedules load (once) and answers
// nil; failed is true when an earlier load of key failed.
func (c *thumbCache) Get(key string, load func() (image.Image, error)) (img image.Image, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*thumbEntry)
		return e.img, e.err != nil
	}
	if load != nil && !c.loading[key] {
		c.loading[key] = true
		c.stack = append(c.stack, thumbJob{key: key, load: load})
		select {
		case c.wake <- struct{}{}:
		default:
		}
	} else if load != nil {
		// Already queued: move it to the top, the row is on screen again.
		for i := len(c.stack) - 1; i >= 0; i-- {
			if c.stack[i].key == key {
				j := c.stack[i]
				c.stack = append(append(c.stack[:i], c.stack[i+1:]...), j)
				break
			}
		}
	}
	return nil, false
}

// Peek returns a cached preview without scheduling anything.
func (c *thumbCache) Peek(key string) image.Image {
	img, _ := c.Get(key, nil)
	return img
}

func (c *thumbCache) store(key string, img image.Image, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.loading, key)
	if el, ok := c.entries[key]; ok {
		el.Value = &thumbEntry{key: key, img: img, err: err}
		c.lru.MoveToFront(el)
		return
	}
	c.entries[key] = c.lru.PushFront(&thumbEntry{key: key, img: img, err: err})
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.entries, old.Value.(*thumbEntry).key)
	}
	// Signal the remaining queue: a worker may be waiting on wake.
	if len(c.stack) > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Len is the number of cached previews.
func (c *thumbCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// fileThumb reads a small preview of a photo on disk: its embedded thumbnail when
// large enough, else a reduced decode.
func fileThumb(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	img, err := codec.Thumbnail(f, st.Size(), thumbEdge)
	if err != nil {
		return nil, fmt.Errorf("preview of %s: %w", path, err)
	}
	return img.ToNRGBA(), nil
}

// assetThumb reads the asset store's thumbnail of an asset, fitted to thumbEdge.
func assetThumb(a Assets, owner, id string) (image.Image, error) {
	f, err := a.Thumbnail(owner, id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("thumbnail of %s: %w", id, err)
	}
	return fitImage(img, thumbEdge), nil
}

// fitImage scales img down to fit maxEdge (never up).
func fitImage(img image.Image, maxEdge int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= maxEdge && h <= maxEdge {
		return img
	}
	if w >= h {
		w, h = maxEdge, max(1, h*maxEdge/w)
	} else {
		w, h = max(1, w*maxEdge/h), maxEdge
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}
