package blobs

import (
	"fmt"
	"sync"
)

// Counter changes reference counts inside one transaction of the store that keeps
// them, the transaction that changes the records holding the references (the assets
// store's transaction implements it).
type Counter interface {
	// Ref adds one reference to the blob sum.
	Ref(sum string) error
	// Unref drops one reference and returns how many are left.
	Unref(sum string) (left uint64, err error)
}

// References reads the counts outside any transaction (the assets store implements
// it).
type References interface {
	// Refs returns the blob's reference count.
	Refs(sum string) (uint64, error)
	// Referenced returns the set of blobs with at least one reference.
	Referenced() (map[string]bool, error)
}

// Keeper is a blob directory whose blobs are counted in a store: it commits new blobs
// and removes those that lose their last reference, the only places where files and
// counts must agree.
type Keeper struct {
	*Store
	refs References

	// mu is held across placing a blob file and the transaction that references it,
	// and across dropping the last reference and removing the file, so a new reference
	// can never point at a file that is being removed.
	mu sync.Mutex
}

// NewKeeper keeps the blobs of s, counted in refs.
func NewKeeper(s *Store, refs References) *Keeper {
	return &Keeper{Store: s, refs: refs}
}

// WriteError is a failure to make a blob's bytes durable or put them in place, as
// opposed to a failure of the caller's transaction.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// RemoveError is a blob file left on disk after its last reference was dropped. The
// reference is gone all the same; the next sweep removes the file.
type RemoveError struct{ Err error }

func (e *RemoveError) Error() string { return e.Err.Error() }
func (e *RemoveError) Unwrap() error { return e.Err }

// Change is what one transaction does to reference counts, as the keeper needs to
// know it: whether it referenced the blob being committed, and which blobs it left
// without any reference.
type Change struct {
	took    map[string]bool
	dropped map[string]bool
}

func newChange() *Change {
	return &Change{took: map[string]bool{}, dropped: map[string]bool{}}
}

// Ref adds a reference to the blob sum through tx.
func (c *Change) Ref(tx Counter, sum string) error {
	if !ValidSum(sum) {
		return fmt.Errorf("ref blob: malformed sum %q", sum)
	}
	if err := tx.Ref(sum); err != nil {
		return err
	}
	c.took[sum] = true
	delete(c.dropped, sum)
	return nil
}

// Unref drops a reference to the blob sum through tx; "" names no blob. A blob left
// without references is removed once the transaction has committed.
func (c *Change) Unref(tx Counter, sum string) error {
	if sum == "" {
		return nil
	}
	if !ValidSum(sum) {
		return fmt.Errorf("unref blob: malformed sum %q", sum)
	}
	left, err := tx.Unref(sum)
	if err != nil {
		return err
	}
	if left == 0 {
		c.dropped[sum] = true
		delete(c.took, sum)
	}
	return nil
}

// Commit is the one way written bytes become a blob that records reference. It makes
// w's bytes durable (outside the lock, so a long fsync holds up no other commit), then
// under the keeper's lock puts them in place under their content address and calls
// record with the blob. record runs the transaction that points a record at the blob,
// taking its reference with c.Ref (and dropping others with c.Unref), and returns that
// transaction's error. Afterwards the new blob is removed unless something references
// it (the record was gone, a concurrent call won, or the transaction failed), and once
// the transaction committed so is every blob it left without references; a file that
// cannot be removed is left to the next sweep. w is finished either way.
//
// A failure to store the bytes is a *WriteError, and then record is not called; any
// other error is record's.
func (k *Keeper) Commit(w *Writer, record func(b Blob, c *Change) error) (Blob, error) {
	defer w.Abort()
	if err := w.Close(); err != nil {
		return Blob{}, &WriteError{err}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	b, err := w.place()
	if err != nil {
		return Blob{}, &WriteError{err}
	}
	c := newChange()
	err = record(b, c)
	if err != nil || !c.took[b.Sum] {
		k.removeIfUnreferenced(b.Sum)
	}
	if err != nil {
		return Blob{}, err
	}
	k.removeDropped(c)
	return b, nil
}

// Release runs change, a transaction that drops references with c.Unref, under the
// keeper's lock, and once it returns nil removes the blobs it left without references.
// It returns change's error, or else a *RemoveError for a file that could not be
// removed.
func (k *Keeper) Release(change func(c *Change) error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := newChange()
	if err := change(c); err != nil {
		return err
	}
	if err := k.removeDropped(c); err != nil {
		return &RemoveError{err}
	}
	return nil
}

// removeDropped removes the blobs whose last reference c dropped and returns the first
// failure. Callers hold mu.
func (k *Keeper) removeDropped(c *Change) error {
	var first error
	for sum := range c.dropped {
		if err := k.Remove(sum); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// removeIfUnreferenced removes a placed blob no record took. Callers hold mu.
func (k *Keeper) removeIfUnreferenced(sum string) {
	if n, err := k.refs.Refs(sum); err == nil && n == 0 {
		k.Remove(sum)
	}
}

// SweepUnreferenced removes the temporary files and the blobs no record references,
// what a crash may have left between writing a blob and referencing it. It runs when
// the store opens, before anything writes.
func (k *Keeper) SweepUnreferenced() (removed int, err error) {
	refs, err := k.refs.Referenced()
	if err != nil {
		return 0, fmt.Errorf("read blob references: %w", err)
	}
	return k.Sweep(func(sum string) bool { return refs[sum] })
}
