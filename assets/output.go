package assets

import (
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	bolt "go.etcd.io/bbolt"
)

// outputNamespace derives output ids from order ids (UUID version 5).
var outputNamespace = uuid.MustParse("6c0b7f2e-3f5a-4d1e-9a57-2b8f0e4c9d11")

// OutputID is the id the output of order orderID has (or will have).
func OutputID(orderID string) string {
	return uuid.NewSHA1(outputNamespace, []byte(orderID)).String()
}

// CreateOutput stores the result of owner's order orderID, written by write in the
// delivery format (jpeg, png or webp), as a ready output asset. The bytes are durable
// before the record that points at them commits. It is idempotent per order: when the
// order already has an output, that one is returned and write is not called.
func (s *Service) CreateOutput(owner, orderID, format string, write func(w io.Writer) error) (core.Asset, error) {
	t, ok := exportTypes[format]
	if !ok {
		return core.Asset{}, core.Invalid("format", "%q is not one of jpeg, png, webp", format)
	}
	if owner == "" || orderID == "" {
		return core.Asset{}, errors.New("create output: owner and order are required")
	}
	id := OutputID(orderID)
	if a, found, err := s.existingOutput(owner, orderID, id); found || err != nil {
		return a, err
	}
	w, err := s.blobs.Create(0)
	if err != nil {
		return core.Asset{}, fmt.Errorf("create output of order %s: %w", orderID, err)
	}
	defer w.Abort()
	if err := write(w); err != nil {
		return core.Asset{}, fmt.Errorf("create output of order %s: %w", orderID, err)
	}
	if err := w.Close(); err != nil {
		return core.Asset{}, fmt.Errorf("create output of order %s: %w", orderID, err)
	}
	s.blobMu.Lock()
	b, err := w.Commit()
	if err != nil {
		s.blobMu.Unlock()
		return core.Asset{}, fmt.Errorf("create output of order %s: %w", orderID, err)
	}
	info, perr := s.probeBlob(b)
	if perr == nil && info.Format != format {
		perr = fmt.Errorf("the bytes are %s, not %s", info.Format, format)
	}
	if perr != nil {
		s.removeIfUnreferenced(b.Sum)
		s.blobMu.Unlock()
		return core.Asset{}, fmt.Errorf("create output of order %s: the written file is not a valid image: %w", orderID, perr)
	}
	now := s.cfg.Now().UTC()
	r := &record{Asset: core.Asset{
		ID: id, Owner: owner, Kind: core.AssetOutput, Filename: "order-" + orderID + t.ext,
		ContentType: t.mime, Status: core.AssetReady, Format: format,
		Width: info.Width, Height: info.Height, Size: b.Size, SHA256: b.Sum,
		OrderID: orderID, CreatedAt: now, UpdatedAt: now,
	}}
	created := false
	var existing core.Asset
	err = s.db.Update(func(tx *bolt.Tx) error {
		old, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if old != nil { // a concurrent call won
			existing = old.Asset
			return nil
		}
		if err := blobs.Ref(tx, b.Sum); err != nil {
			return err
		}
		created = true
		return putRecord(tx, r)
	})
	if !created {
		s.removeIfUnreferenced(b.Sum)
	}
	s.blobMu.Unlock()
	if err != nil {
		return core.Asset{}, fmt.Errorf("create output of order %s: %w", orderID, err)
	}
	if !created {
		if existing.Owner != owner || existing.OrderID != orderID {
			return core.Asset{}, core.Conflict("output id of order %s is taken by another asset", orderID)
		}
		return existing, nil
	}
	s.changed(r.Asset)
	return r.Asset, nil
}

func (s *Service) existingOutput(owner, orderID, id string) (core.Asset, bool, error) {
	var a core.Asset
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil || r == nil {
			return err
		}
		if r.Owner != owner || r.OrderID != orderID {
			return core.Conflict("output id of order %s is taken by another asset", orderID)
		}
		a, found = r.Asset, true
		return nil
	})
	return a, found, err
}

func (s *Service) probeBlob(b blobs.Blob) (codec.Info, error) {
	f, err := s.blobs.Open(b.Sum)
	if err != nil {
		return codec.Info{}, err
	}
	defer f.Close()
	return codec.Probe(f, b.Size)
}
