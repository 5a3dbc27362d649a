package dedup

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Input is one segment a bucket's merge reads: bytes [Off, Off+Len) of
// an expansion blob.
type Input struct {
	Blob     string
	Off, Len int64
}

// The inputs blob of a ply lists, for every bucket, the segments of the
// expansion blobs that its merge reads. The scan that starts the ply's
// merging writes it once from the expansion markers, so that a merge
// reads its own list rather than every marker: the markers hold a cut per
// bucket, and reading all of them in every merge would cost
// tasks x buckets^2.
//
// Layout, for B buckets and T expansion blobs:
//
//	uint32 B, uint32 T                       big-endian
//	(B+1) x uint64                           where bucket b's list starts; the last ends the blob
//	T x (uvarint length, name bytes)         the expansion blobs' names
//	per bucket: (uvarint name index, uvarint offset, uvarint length)...
//
// Its content depends only on the markers, which no longer change once
// the ply is Merging, so writing it again writes the same bytes.

func inputsHeaderLen(buckets int) int64 { return 8 + 8*int64(buckets+1) }

// maxInputsSection bounds the names section and a bucket's list, which
// are read whole: a million expansion blobs take about 50 MiB of names
// and 15 MiB of one bucket's list, and a corrupt offset must not make a
// reader allocate more.
const maxInputsSection = 1 << 26

// EncodeInputs builds a ply's inputs blob from its expansion markers.
func EncodeInputs(exps []runstore.Expansion, buckets int) []byte {
	var names []byte
	var blobs []runstore.Expansion
	for _, e := range exps {
		if e.Blob != "" {
			names = binary.AppendUvarint(names, uint64(len(e.Blob)))
			names = append(names, e.Blob...)
			blobs = append(blobs, e)
		}
	}
	head := make([]byte, 8, inputsHeaderLen(buckets))
	binary.BigEndian.PutUint32(head[0:], uint32(buckets))
	binary.BigEndian.PutUint32(head[4:], uint32(len(blobs)))
	var lists []byte
	at := inputsHeaderLen(buckets) + int64(len(names))
	for b := 0; b < buckets; b++ {
		head = binary.BigEndian.AppendUint64(head, uint64(at+int64(len(lists))))
		for i, e := range blobs {
			if off, n := e.Segment(b); n > 0 {
				lists = binary.AppendUvarint(lists, uint64(i))
				lists = binary.AppendUvarint(lists, uint64(off))
				lists = binary.AppendUvarint(lists, uint64(n))
			}
		}
	}
	head = binary.BigEndian.AppendUint64(head, uint64(at+int64(len(lists))))
	return append(append(head, names...), lists...)
}

// ReadInputs reads bucket's list from a ply's inputs blob, which splits
// the ply into buckets: three small ranged reads (header, names, list).
func ReadInputs(ctx context.Context, run *task.Run, ply, bucket, buckets int) ([]Input, error) {
	name := runstore.InputsBlobName(ply)
	in, err := readInputs(storage.BlobReaderAt(ctx, run.Blobs, name), bucket, buckets)
	if err != nil {
		return nil, fmt.Errorf("reading the inputs of bucket %d of ply %d from %s: %w", bucket, ply, name, err)
	}
	return in, nil
}

// readInputs decodes bucket's list from an inputs blob.
func readInputs(r io.ReaderAt, bucket, buckets int) ([]Input, error) {
	read := func(off, n int64) ([]byte, error) {
		buf := make([]byte, n)
		_, err := r.ReadAt(buf, off)
		return buf, err
	}
	hl := inputsHeaderLen(buckets)
	head, err := read(0, hl)
	if err != nil {
		return nil, err
	}
	if int(binary.BigEndian.Uint32(head)) != buckets || bucket < 0 || bucket >= buckets {
		return nil, fmt.Errorf("%w: inputs for %d buckets, want bucket %d of %d", ErrCorrupt, binary.BigEndian.Uint32(head), bucket, buckets)
	}
	blobs := int(binary.BigEndian.Uint32(head[4:]))
	offsetAt := func(b int) int64 { return int64(binary.BigEndian.Uint64(head[8+8*b:])) }
	first, lo, hi := offsetAt(0), offsetAt(bucket), offsetAt(bucket+1)
	if first < hl || lo < first || hi < lo || hi-lo > maxInputsSection || first-hl > maxInputsSection {
		return nil, fmt.Errorf("%w: inputs offsets %d, %d, %d", ErrCorrupt, first, lo, hi)
	}
	var names []string
	if first > hl {
		raw, err := read(hl, first-hl)
		if err != nil {
			return nil, err
		}
		for len(raw) > 0 {
			n, k := binary.Uvarint(raw)
			if k <= 0 || n > uint64(len(raw)-k) {
				return nil, fmt.Errorf("%w: inputs name %d", ErrCorrupt, len(names))
			}
			names = append(names, string(raw[k:k+int(n)]))
			raw = raw[k+int(n):]
		}
	}
	if len(names) != blobs {
		return nil, fmt.Errorf("%w: inputs hold %d names, want %d", ErrCorrupt, len(names), blobs)
	}
	if hi == lo {
		return nil, nil
	}
	list, err := read(lo, hi-lo)
	if err != nil {
		return nil, err
	}
	var out []Input
	for len(list) > 0 {
		var v [3]uint64
		for i := range v {
			x, k := binary.Uvarint(list)
			if k <= 0 {
				return nil, fmt.Errorf("%w: inputs list of bucket %d", ErrCorrupt, bucket)
			}
			v[i], list = x, list[k:]
		}
		if v[0] >= uint64(len(names)) || v[1] > 1<<40 || v[2] == 0 || v[2] > 1<<40 {
			return nil, fmt.Errorf("%w: inputs entry %v of bucket %d", ErrCorrupt, v, bucket)
		}
		out = append(out, Input{Blob: names[v[0]], Off: int64(v[1]), Len: int64(v[2])})
	}
	return out, nil
}
