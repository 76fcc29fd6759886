package store

import bolt "go.etcd.io/bbolt"

// SchemaVersion reads the schema version inside tx; doctor still uses it until it
// moves onto InspectSchema.
func SchemaVersion(tx *bolt.Tx) uint64 { return schemaVersion(tx) }
