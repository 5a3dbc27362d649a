// Package packed is the compact storage format of the pipeline's blobs:
// sorted runs of edges, the keys of final blobs, their backtracking
// sources and their results. Every blob is a sequence of checksummed
// blocks (block.go); each block stores its first entry in full and the
// rest as deltas, so any block boundary is a valid place to start reading
// and a run cut into segments at block boundaries (EdgeWriter.EndSegment)
// reads back one segment at a time from its byte range.
//
// # Layout
//
// Block: "RP", version 1, kind, entry count (uint32), payload length
// (uint32), payload, CRC-32C of all before it. Payloads are bit streams,
// least significant bit first, using fixed-width fields and
// exponential-Golomb codes whose orders each block chooses for itself
// from a histogram of its values (the exact cost of every order).
//
//   - Positions (position.go): blocks share side and disc count; the
//     occupancy is coded as the delta of its colexicographic rank among
//     masks of that disc count (rank.go), the white discs as one bit per
//     occupied square, or as a delta of those bits when the occupancy
//     repeats.
//   - Refs (ref.go): the first parent of a list in the block's widths,
//     the others as deltas.
//   - Edges (edges.go): position, then ref; a repeated position costs two
//     zero deltas and continues the ref list.
//   - Keys (keys.go, keyindex.go): strictly increasing positions, then an
//     index block (first key, offset and first position number of every
//     key block) and a 32-byte footer, so that a reader finds any
//     position by number or by key with two small ranged reads plus the
//     block.
//   - Sources (sources.go): per position, the number of parents, then
//     their refs.
//   - Results (results.go): runs of equal result words, or plain 16-bit
//     words where that is smaller.
//
// Corrupt input (bad magic, checksum, truncation, out-of-range or
// out-of-order entries) is an error wrapping ErrCorrupt, an unknown
// version one wrapping ErrVersion; writers refuse unsorted input with
// ErrOrder.
//
// # Measured sizes and speeds
//
// On 2026-11-23, on a 2-core AMD EPYC VM, for 8x8 with the pipeline's
// final blobs of 65536 positions and expansion runs of one parent blob
// cut into 64 segments (TestSizes; today's fixed-width formats in
// brackets):
//
//	ply  positions  edges    expansion B/edge  keys B/pos  sources B/pos     results B/pos  final B/pos
//	 8      67245     75530  3.50 [25]         1.85 [17]   2.09 [4.36 uvarint]  0.001 [2]   3.94
//	 9     434029    517831  3.62              1.71        2.55 [5.45]          0.000       4.26
//	10    2958586   3564345  3.71              1.62        2.76 [5.50]          0.000       4.38
//
// so a position costs about 4.4 bytes in its final blob plus about 4.5 in
// the expansion runs that produced it (1.2 edges a position), against
// about 50 today. Generic compression does not pay on top: flate at
// level 9 saves 1.5 to 3 percent. Default blocks hold 8192 edges (about
// 30 KiB), 16384 keys (28 KiB), the sources of 8192 positions (21 KiB)
// or 65536 results (21 bytes when all are unknown).
//
// Speeds (go test -bench . ./packed/, same VM, its load average 10 to
// 16 at the time, so reported per CPU second of the process; wall-clock
// rates were a fifth to a half of these, and even CPU rates moved by a
// third between runs): edges decode at 8 to 12 million a CPU second and
// encode at 4.5 to 7 million; keys decode at 8 to 12 million and encode
// at 4.6 to 6.8 million; sources decode at 15 to 28 million positions and
// encode at 10 to 14 million; results at 50 to 120 million words. An edge
// decode at 10 million a second reads only about 36 MB/s of packed bytes,
// but delivers the edges of 250 MB/s of today's 25-byte records: a single
// core decodes faster than one blob stream downloads today's format, not
// faster than a local disk reads the packed one. Blocks are independent,
// so decoding several at once is the way to more.
package packed
