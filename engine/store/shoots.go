package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

// bucketShoots holds the window's shoots (schema 3).
var bucketShoots = []byte("shoots")

// Shoots is the window's shoot store on this database (core.ShootStore): shoots/.
// A shoot is one record, written whole in one transaction, so a shoot read back is
// always one the window saved.
type Shoots struct{ db *DB }

var _ core.ShootStore = (*Shoots)(nil)

// NewShoots returns the shoot store of db.
func NewShoots(db *DB) *Shoots { return &Shoots{db: db} }

// Put implements core.ShootStore.
func (s *Shoots) Put(ctx context.Context, sh core.Shoot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sh.ID == "" || sh.Owner == "" {
		return errors.New("store: a shoot needs an id and an owner")
	}
	v, err := json.Marshal(sh)
	if err != nil {
		return fmt.Errorf("encode shoot %s: %w", sh.ID, err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketShoots).Put([]byte(sh.ID), v)
	})
}

// Get implements core.ShootStore.
func (s *Shoots) Get(ctx context.Context, id string) (core.Shoot, error) {
	if err := ctx.Err(); err != nil {
		return core.Shoot{}, err
	}
	var v []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v = Copy(tx.Bucket(bucketShoots).Get([]byte(id)))
		return nil
	})
	if err != nil {
		return core.Shoot{}, err
	}
	if v == nil {
		return core.Shoot{}, core.NotFound("shoot %s not found", id)
	}
	var sh core.Shoot
	if err := json.Unmarshal(v, &sh); err != nil {
		return core.Shoot{}, fmt.Errorf("decode shoot %s: %w", id, err)
	}
	return sh, nil
}

// List implements core.ShootStore. The window keeps tens of shoots, so a scan of
// the bucket is cheaper than an owner index to keep in step.
func (s *Shoots) List(ctx context.Context, owner string) ([]core.Shoot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var raw [][]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketShoots).ForEach(func(_, v []byte) error {
			raw = append(raw, Copy(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	out := make([]core.Shoot, 0, len(raw))
	for _, v := range raw {
		var sh core.Shoot
		if err := json.Unmarshal(v, &sh); err != nil {
			return nil, fmt.Errorf("decode shoot: %w", err)
		}
		if sh.Owner == owner {
			out = append(out, sh)
		}
	}
	slices.SortFunc(out, func(a, b core.Shoot) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Delete implements core.ShootStore.
func (s *Shoots) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketShoots).Delete([]byte(id))
	})
}
