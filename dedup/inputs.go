package dedup

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Input is one segment a merge step reads: bytes [Off, Off+Len) of
// an expansion blob.
type Input struct {
	Blob     string
	Off, Len int64
}

// An inputs blob lists, for each task of a merge step, the segments it
// reads: for each list merge, its segment of every expansion run (or
// of every group's combined run); for each combine task, its group's
// segments of its range. The scan that starts the step writes it once
// from the markers of the step before, so that a task reads its own list
// rather than every marker: the markers hold a cut per list, and
// reading all of them in every task would cost tasks x lists^2.
//
// Layout, for L lists over T blobs:
//
//	uint32 L, uint32 T                       big-endian
//	(L+1) x uint64                           where list l starts; the last ends the blob
//	T x (uvarint length, name bytes)         the blobs' names
//	per list: (uvarint name index, uvarint offset, uvarint length)...
//
// Its content depends only on the markers, which no longer change once
// the step has started, so writing it again writes the same bytes.

func inputsHeaderLen(lists int) int64 { return 8 + 8*int64(lists+1) }

// maxInputsSection bounds the names section and a list, which are read
// whole: a million blobs take about 50 MiB of names and 15 MiB of one
// list, and a corrupt offset must not make a reader allocate more.
const maxInputsSection = 1 << 26

// EncodeInputs builds an inputs blob from each task's list of segments
// (empty segments are left out).
func EncodeInputs(lists [][]Input) []byte {
	var names []byte
	index := map[string]int{}
	for _, l := range lists {
		for _, in := range l {
			if _, ok := index[in.Blob]; !ok && in.Len > 0 {
				index[in.Blob] = len(index)
				names = binary.AppendUvarint(names, uint64(len(in.Blob)))
				names = append(names, in.Blob...)
			}
		}
	}
	head := make([]byte, 8, inputsHeaderLen(len(lists)))
	binary.BigEndian.PutUint32(head[0:], uint32(len(lists)))
	binary.BigEndian.PutUint32(head[4:], uint32(len(index)))
	var body []byte
	at := inputsHeaderLen(len(lists)) + int64(len(names))
	for _, l := range lists {
		head = binary.BigEndian.AppendUint64(head, uint64(at+int64(len(body))))
		for _, in := range l {
			if in.Len > 0 {
				body = binary.AppendUvarint(body, uint64(index[in.Blob]))
				body = binary.AppendUvarint(body, uint64(in.Off))
				body = binary.AppendUvarint(body, uint64(in.Len))
			}
		}
	}
	head = binary.BigEndian.AppendUint64(head, uint64(at+int64(len(body))))
	return append(append(head, names...), body...)
}

// BucketInputs lists each bucket's segment of every expansion run.
func BucketInputs(exps []runstore.Expansion, buckets int) [][]Input {
	lists := make([][]Input, buckets)
	for _, e := range exps {
		for b := range lists {
			if off, n := e.Cuts.Segment(b); n > 0 {
				lists[b] = append(lists[b], Input{Blob: e.Blob, Off: off, Len: n})
			}
		}
	}
	return lists
}

// CombineInputs lists each combine task's inputs in a ply with a combine
// level: task g*ranges+r reads, from each expansion run of group g, the
// bytes of range r's buckets, which lie together.
func CombineInputs(exps []runstore.Expansion, tasks, buckets, groups, ranges int) [][]Input {
	lists := make([][]Input, groups*ranges)
	for _, e := range exps {
		if len(e.Cuts) != buckets+1 || e.Task >= tasks {
			continue // no edges
		}
		g := runstore.PartOf(e.Task, tasks, groups)
		for r := range ranges {
			span := runstore.SpanOf(r, buckets, ranges)
			if lo, hi := e.Cuts[span.Lo], e.Cuts[span.Hi]; hi > lo {
				lists[g*ranges+r] = append(lists[g*ranges+r], Input{Blob: e.Blob, Off: lo, Len: hi - lo})
			}
		}
	}
	return lists
}

// MergeInputs lists each bucket's segment of every combined run, in a
// ply with a combine level.
func MergeInputs(combines []runstore.Combine, buckets, groups, ranges int) [][]Input {
	lists := make([][]Input, buckets)
	for _, c := range combines {
		if c.Index >= groups*ranges {
			continue
		}
		span := runstore.SpanOf(c.Index%ranges, buckets, ranges)
		for b := span.Lo; b < span.Hi; b++ {
			if off, n := c.Cuts.Segment(b - span.Lo); n > 0 {
				lists[b] = append(lists[b], Input{Blob: c.Blob, Off: off, Len: n})
			}
		}
	}
	return lists
}

// ReadInputs reads list i of lists from the inputs blob name: three
// small ranged reads (header, names, list).
func ReadInputs(ctx context.Context, run *task.Run, name string, i, lists int) ([]Input, error) {
	in, err := readInputs(storage.BlobReaderAt(ctx, run.Blobs, name), i, lists)
	if err != nil {
		return nil, fmt.Errorf("reading list %d of %d from %s: %w", i, lists, name, err)
	}
	return in, nil
}

// readInputs decodes list want from an inputs blob.
func readInputs(r io.ReaderAt, want, lists int) ([]Input, error) {
	read := func(off, n int64) ([]byte, error) {
		buf := make([]byte, n)
		_, err := r.ReadAt(buf, off)
		return buf, err
	}
	hl := inputsHeaderLen(lists)
	head, err := read(0, hl)
	if err != nil {
		return nil, err
	}
	if int(binary.BigEndian.Uint32(head)) != lists || want < 0 || want >= lists {
		return nil, fmt.Errorf("%w: inputs for %d lists, want list %d of %d", ErrCorrupt, binary.BigEndian.Uint32(head), want, lists)
	}
	blobs := int(binary.BigEndian.Uint32(head[4:]))
	offsetAt := func(b int) int64 { return int64(binary.BigEndian.Uint64(head[8+8*b:])) }
	first, lo, hi := offsetAt(0), offsetAt(want), offsetAt(want+1)
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
				return nil, fmt.Errorf("%w: inputs list %d", ErrCorrupt, want)
			}
			v[i], list = x, list[k:]
		}
		if v[0] >= uint64(len(names)) || v[1] > 1<<40 || v[2] == 0 || v[2] > 1<<40 {
			return nil, fmt.Errorf("%w: inputs entry %v of list %d", ErrCorrupt, v, want)
		}
		out = append(out, Input{Blob: names[v[0]], Off: int64(v[1]), Len: int64(v[2])})
	}
	return out, nil
}

// openInputs opens a reader of each input for a merge step. Each reader
// decodes its segment's next block on another goroutine while the merge
// works, so decoding uses the other cores, except past 256 readers, where
// the blocks held ahead would cost more memory (up to 290 KiB a reader)
// than they save time. closeAll closes every reader, then its stream.
func openInputs(ctx context.Context, run *task.Run, inputs []Input) (readers []*packed.EdgeReader, closeAll func(), err error) {
	readers = make([]*packed.EdgeReader, 0, len(inputs))
	streams := make([]io.Closer, 0, len(inputs))
	closeAll = func() {
		for i, r := range readers {
			r.Close() // waits for a read of its stream in progress
			streams[i].Close()
		}
	}
	for _, in := range inputs {
		rc, err := run.Blobs.Open(ctx, in.Blob, in.Off, in.Len)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("opening %s at %d: %w", in.Blob, in.Off, err)
		}
		ahead := packed.AheadFor(in.Len)
		if len(inputs) > 256 {
			ahead = 0
		}
		streams = append(streams, rc)
		readers = append(readers, packed.NewEdgeReaderAhead(rc, ahead))
	}
	return readers, closeAll, nil
}
