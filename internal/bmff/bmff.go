// Package bmff builds ISO base media file format (ISO/IEC 14496-12) boxes, the
// structure of HEIF files.
package bmff

import "encoding/binary"

// Box builds a box from its type and payload parts.
func Box(typ string, payload ...[]byte) []byte {
	n := 8
	for _, p := range payload {
		n += len(p)
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 0, n), uint32(n))
	out = append(out, typ...)
	for _, p := range payload {
		out = append(out, p...)
	}
	return out
}

// BE32 is v as 4 big-endian bytes, the way box fields are written.
func BE32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
