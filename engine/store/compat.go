package store

import bolt "go.etcd.io/bbolt"

// Names the key service and doctor still use until they move onto their stores.
var (
	BucketKeys       = bucketKeys
	BucketKeyHashes  = bucketKeyHashes
	BucketKeySecrets = bucketKeySecrets
	BucketKeyOwners  = bucketKeyOwners
)

// SchemaVersion reads the schema version inside tx.
func SchemaVersion(tx *bolt.Tx) uint64 { return schemaVersion(tx) }
