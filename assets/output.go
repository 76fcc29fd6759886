package assets

import (
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
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
	var r *record
	created := false
	var existing core.Asset
	_, err = s.blobs.Commit(w, func(b blobs.Blob, c *blobs.Change) error {
		info, err := s.probeBlob(b)
		if err == nil && info.Format != format {
			err = fmt.Errorf("the bytes are %s, not %s", info.Format, format)
		}
		if err != nil {
			return fmt.Errorf("the written file is not a valid image: %w", err)
		}
		now := s.cfg.Now().UTC()
		r = &record{Asset: core.Asset{
			ID: id, Owner: owner, Kind: core.AssetOutput, Filename: "order-" + orderID + t.ext,
			ContentType: t.mime, Status: core.AssetReady, Format: format,
			Width: info.Width, Height: info.Height, Size: b.Size, SHA256: b.Sum,
			OrderID: orderID, CreatedAt: now, UpdatedAt: now,
		}}
		return s.store.Update(func(tx store.Tx) error {
			old, err := tx.Get(id)
			if err != nil {
				return err
			}
			if old != nil { // a concurrent call won
				existing = old.Asset
				return nil
			}
			if err := c.Ref(tx, b.Sum); err != nil {
				return err
			}
			created = true
			return tx.Put(r)
		})
	})
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
	r, err := s.getRecord(id)
	if err != nil || r == nil {
		return core.Asset{}, false, err
	}
	if r.Owner != owner || r.OrderID != orderID {
		return core.Asset{}, false, core.Conflict("output id of order %s is taken by another asset", orderID)
	}
	return r.Asset, true, nil
}

func (s *Service) probeBlob(b blobs.Blob) (codec.Info, error) {
	f, err := s.blobs.Open(b.Sum)
	if err != nil {
		return codec.Info{}, err
	}
	defer f.Close()
	return codec.Probe(f, b.Size)
}
