// Package assets is Porchlight's asset store: uploaded images, masks, order outputs and
// exports. It keeps their bytes as content-addressed blobs on disk (package blobs),
// their records, export index and reference counts in the database through the
// store.Store interface (package store, on bbolt), and runs ingest and export jobs
// from its durable ingest queue. It also serves the signed storage addresses
// (/storage/upload/{id} and /storage/download/{id}) that the API hands out.
//
// Life of an upload: Declare records a pending asset and returns a signed upload
// address; the client PUTs the bytes (Upload streams them into a blob, hashing and
// enforcing the size limit); Confirm moves the asset to validating and queues it in
// the same transaction; an ingest worker validates the headers (format, declared
// content type, size, resolution) without decoding, then decodes the whole image to
// prove it is readable, records its size after orientation and stores a small JPEG
// thumbnail, and the asset becomes ready or failed with a code (DESIGN's ingest codes).
//
// Decisions this package makes:
//
//   - Crash safety: blob files are complete before any record points at them (temp
//     file, fsync, rename, fsync dir: blobs.Keeper.Commit, the one way a blob is
//     committed), and every state change with its queue entry and reference counts is
//     one store transaction. A job cut short by a crash is still in the ingest queue
//     and runs again from the start on the next Serve. Blobs that a crash left
//     unreferenced are swept when the service opens.
//   - Masks: any accepted image may be uploaded. Ingest recognises a mask by content,
//     the spec's white-on-transparent PNG (a PNG with an alpha channel, some
//     transparency, and white wherever it is visible); such an asset gets kind "mask"
//     and cannot be exported. The engine still validates whatever an order names as
//     its mask with codec.DecodeMask, so a white-on-black grayscale PNG uploaded as a
//     plain image works as a mask too.
//   - application/octet-stream claims no format, so it accepts any supported file
//     (it exists for camera RAW, whose media types browsers rarely know); every other
//     declared type must match what the bytes are, else content_type_mismatch.
//   - An upload over the size limit is stopped while streaming and answered 413; the
//     asset stays pending and remembers why, so confirming it fails ingest with
//     file_too_large (the spec reports over-limit files through the status call). A
//     new PUT before confirmation replaces both good and refused bytes.
//   - Failed ingest releases the uploaded bytes: a failed asset can be neither an
//     input, an export source nor downloaded.
//   - An output's id is derived from its order's id, which makes CreateOutput
//     idempotent without an index: a restarted order can never produce two outputs.
//   - Exports are deduplicated per source and normalised options (the store's export
//     index); a failed export asked for again is retried under the same id.
package assets
