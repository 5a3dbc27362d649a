package dedup

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Input is one segment a merge step reads: bytes [Off, Off+Len) of
// an expansion blob.
type Input struct {
	Blob     string
	Off, Len int64
}

// An inputs blob lists, for each task of a merge step, the segments it
// reads: for each bucket merge, its segment of every expansion run (or
// of every group's combined run of its range); for each combine task of
// a group, the group's segments of its range. It is written once from
// the markers of the step before, so that a task reads its own list
// rather than every marker: the markers hold a cut per list, and
// reading all of them in every task would cost tasks x lists^2.
//
// A task reads its list's part of the blob only: the lists are cut into
// parts of consecutive lists (the buckets of one range, say) that read
// the same blobs, and each part has a names section of its own, so a
// list's read is its index entry, its part's names and its entries:
// four small ranged reads, whatever the number of lists.
//
// Layout (version 2), for L lists:
//
//	"RVI2", uint32 L                          magic, then big-endian
//	L x 4 x uint64                            list l's names section [lo, hi), then its entries [lo, hi)
//	per part: names (uvarint length, name bytes)..., then per list of the
//	part: entries (uvarint name index, uvarint offset, uvarint length)...
//
// Version 1 (written before parts existed) began with uint32 L instead
// of the magic, and had one names section for all lists (readInputsV1).
// Its content depends only on the markers, which no longer change once
// the step has started, so writing it again writes the same bytes.

// inputsMagic opens a version 2 inputs blob. As a version 1 list count
// it would be over a billion lists, more than any ply has.
const inputsMagic = "RVI2"

// inputsEntryLen is the length of one list's index entry.
const inputsEntryLen = 32

// maxInputsName bounds a name in an inputs blob, Azure's limit on a blob
// name, so that a corrupt length makes a reader fail, not allocate.
const maxInputsName = 1024

// EncodeInputs builds an inputs blob from each task's list of segments
// (empty segments are left out), the lists cut into parts consecutive
// parts (runstore.SpanOf) that share a names section.
func EncodeInputs(lists [][]Input, parts int) []byte {
	parts = max(1, min(parts, len(lists)))
	head := append(make([]byte, 0, 8+inputsEntryLen*len(lists)), inputsMagic...)
	head = binary.BigEndian.AppendUint32(head, uint32(len(lists)))
	var body []byte
	at := func() uint64 { return uint64(8 + inputsEntryLen*len(lists) + len(body)) }
	for part := range parts {
		span := runstore.SpanOf(part, len(lists), parts)
		namesLo := at()
		index := map[string]int{}
		for _, l := range lists[span.Lo:span.Hi] {
			for _, in := range l {
				if _, ok := index[in.Blob]; !ok && in.Len > 0 {
					index[in.Blob] = len(index)
					body = binary.AppendUvarint(body, uint64(len(in.Blob)))
					body = append(body, in.Blob...)
				}
			}
		}
		namesHi := at()
		for _, l := range lists[span.Lo:span.Hi] {
			lo := at()
			for _, in := range l {
				if in.Len > 0 {
					body = binary.AppendUvarint(body, uint64(index[in.Blob]))
					body = binary.AppendUvarint(body, uint64(in.Off))
					body = binary.AppendUvarint(body, uint64(in.Len))
				}
			}
			for _, v := range []uint64{namesLo, namesHi, lo, at()} {
				head = binary.BigEndian.AppendUint64(head, v)
			}
		}
	}
	return append(head, body...)
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

// CombineInputs lists the inputs of a group's combine tasks in a ply
// with a combine level, from the group's expansion markers: the task of
// range r reads, from each of the group's expansion runs, the bytes of
// range r's buckets, which lie together.
func CombineInputs(group []runstore.Expansion, buckets, ranges int) [][]Input {
	lists := make([][]Input, ranges)
	for _, e := range group {
		if len(e.Cuts) != buckets+1 {
			continue // no edges
		}
		for r := range ranges {
			span := runstore.SpanOf(r, buckets, ranges)
			if lo, hi := e.Cuts[span.Lo], e.Cuts[span.Hi]; hi > lo {
				lists[r] = append(lists[r], Input{Blob: e.Blob, Off: lo, Len: hi - lo})
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

// ReadInputs reads list i of lists from the inputs blob name: four
// small ranged reads (see EncodeInputs).
func ReadInputs(ctx context.Context, run *task.Run, name string, i, lists int) ([]Input, error) {
	in, err := readInputs(func(off, n int64) (io.ReadCloser, error) { return run.Blobs.Open(ctx, name, off, n) }, i, lists)
	if err != nil {
		return nil, fmt.Errorf("reading list %d of %d from %s: %w", i, lists, name, err)
	}
	return in, nil
}

// openRange opens n bytes of an inputs blob from off.
type openRange func(off, n int64) (io.ReadCloser, error)

// readAll reads n bytes from off whole, for the small fixed-size parts.
func (open openRange) readAll(off, n int64) ([]byte, error) {
	rc, err := open(off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, n)
	_, err = io.ReadFull(rc, buf)
	return buf, err
}

// stream calls each until n bytes from off are decoded, reading them as
// a stream: a section is never held whole beside what it decodes to,
// and a corrupt length runs into the blob's end rather than into an
// allocation.
func (open openRange) stream(off, n int64, each func(r *bufio.Reader) error) error {
	rc, err := open(off, n)
	if err != nil {
		return err
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: n}
	br := bufio.NewReaderSize(lr, inputBufferFor(n))
	for lr.N > 0 || br.Buffered() > 0 {
		if err := each(br); err != nil {
			return err
		}
	}
	return nil
}

// readInputs decodes list want from an inputs blob of either version.
func readInputs(open openRange, want, lists int) ([]Input, error) {
	head, err := open.readAll(0, 8)
	if err != nil {
		return nil, err
	}
	if string(head[:4]) != inputsMagic {
		return readInputsV1(readerAt(open), want, lists)
	}
	if int(binary.BigEndian.Uint32(head[4:])) != lists || want < 0 || want >= lists {
		return nil, fmt.Errorf("%w: inputs for %d lists, want list %d of %d", ErrCorrupt, binary.BigEndian.Uint32(head[4:]), want, lists)
	}
	entry, err := open.readAll(8+inputsEntryLen*int64(want), inputsEntryLen)
	if err != nil {
		return nil, err
	}
	var at [4]int64
	for i := range at {
		at[i] = int64(binary.BigEndian.Uint64(entry[8*i:]))
	}
	if first := 8 + inputsEntryLen*int64(lists); at[0] < first || at[1] < at[0] || at[2] < first || at[3] < at[2] {
		return nil, fmt.Errorf("%w: inputs list %d at %v", ErrCorrupt, want, at)
	}
	if at[3] == at[2] {
		return nil, nil
	}
	var names []string
	err = open.stream(at[0], at[1]-at[0], func(r *bufio.Reader) error {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > maxInputsName {
			return fmt.Errorf("%w: inputs name %d of list %d", ErrCorrupt, len(names), want)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return fmt.Errorf("%w: inputs name %d of list %d: %w", ErrCorrupt, len(names), want, err)
		}
		names = append(names, string(name))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Input
	err = open.stream(at[2], at[3]-at[2], func(r *bufio.Reader) error {
		var v [3]uint64
		for i := range v {
			if v[i], err = binary.ReadUvarint(r); err != nil {
				return fmt.Errorf("%w: inputs list %d: %w", ErrCorrupt, want, err)
			}
		}
		if v[0] >= uint64(len(names)) || v[1] > 1<<40 || v[2] == 0 || v[2] > 1<<40 {
			return fmt.Errorf("%w: inputs entry %v of list %d", ErrCorrupt, v, want)
		}
		out = append(out, Input{Blob: names[v[0]], Off: int64(v[1]), Len: int64(v[2])})
		return nil
	})
	return out, err
}

// readerAt reads an inputs blob by ranges, for version 1.
type readerAt openRange

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	rc, err := r(off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.ReadFull(rc, p)
}

// maxInputsSection bounds the names section and a list of a version 1
// inputs blob, which are read whole, so that a corrupt offset does not
// make a reader allocate more.
const maxInputsSection = 1 << 26

// readInputsV1 decodes list want from a version 1 inputs blob:
//
//	uint32 L, uint32 T                       big-endian
//	(L+1) x uint64                           where list l starts; the last ends the blob
//	T x (uvarint length, name bytes)         the blobs' names
//	per list: (uvarint name index, uvarint offset, uvarint length)...
//
// Inputs blobs of a ply that was merging when its run's workers were
// upgraded are of this version.
func readInputsV1(r io.ReaderAt, want, lists int) ([]Input, error) {
	read := func(off, n int64) ([]byte, error) {
		buf := make([]byte, n)
		_, err := r.ReadAt(buf, off)
		return buf, err
	}
	hl := 8 + 8*int64(lists+1)
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

// inputBuffer is the buffer of each input's stream, read whole at a
// time: a block reader reads a block's header and then its payload, two
// system calls a block of about 8 KiB on the embedded backend, which
// reads files with pread. A call that fills the buffer serves about two
// blocks, a quarter of the calls (and a PVM guest's system calls are
// dear), for 16 KiB a reader: 28 MiB for a merge of 1,759 runs. A
// shorter segment gets a buffer of its own length: in runs of small
// blobs most segments are a few hundred bytes, and 16 KiB each was a
// tenth of all the bytes such a run allocated.
const inputBuffer = 16 << 10

// inputBufferFor is the buffer for a segment of n bytes.
func inputBufferFor(n int64) int { return int(min(inputBuffer, max(n, 16))) }

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
		readers = append(readers, packed.NewEdgeReaderAhead(bufio.NewReaderSize(rc, inputBufferFor(in.Len)), ahead))
	}
	return readers, closeAll, nil
}
