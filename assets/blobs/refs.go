package blobs

import (
	"fmt"

	"github.com/porchlight/porchlight/engine/store"
	bolt "go.etcd.io/bbolt"
)

// Ref adds one reference to the blob inside tx.
func Ref(tx *bolt.Tx, sum string) error {
	if !ValidSum(sum) {
		return fmt.Errorf("ref blob: malformed sum %q", sum)
	}
	b := tx.Bucket(store.BucketBlobRefs)
	n := store.Btoi(b.Get([]byte(sum)))
	return b.Put([]byte(sum), store.Itob(n+1))
}

// Unref drops one reference inside tx and returns how many are left. At zero the
// count is deleted; the caller removes the file after the transaction commits.
func Unref(tx *bolt.Tx, sum string) (left uint64, err error) {
	if !ValidSum(sum) {
		return 0, fmt.Errorf("unref blob: malformed sum %q", sum)
	}
	b := tx.Bucket(store.BucketBlobRefs)
	n := store.Btoi(b.Get([]byte(sum)))
	if n <= 1 {
		return 0, b.Delete([]byte(sum))
	}
	return n - 1, b.Put([]byte(sum), store.Itob(n-1))
}

// Refs returns the blob's reference count inside tx.
func Refs(tx *bolt.Tx, sum string) uint64 {
	return store.Btoi(tx.Bucket(store.BucketBlobRefs).Get([]byte(sum)))
}

// Referenced returns the set of blobs with at least one reference, for Sweep.
func Referenced(tx *bolt.Tx) map[string]bool {
	set := map[string]bool{}
	tx.Bucket(store.BucketBlobRefs).ForEach(func(k, v []byte) error {
		if store.Btoi(v) > 0 {
			set[string(k)] = true
		}
		return nil
	})
	return set
}
