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
// Speeds (go test -bench . ./packed/; 2026-11-23, a VM of 2 AMD EPYC
// vCPUs at about 2 GHz, shared with other work at a load average of 3 to
// 8, so rates are given per CPU second of the process, where they moved
// by a fifth between runs, and wall-clock where noted). Decoding, one
// goroutine ("serial"): edges at 16 to 22 million a CPU second, 58 to
// 78 MB of packed bytes (was 10 to 15 million, 36 to 54 MB); keys at 16
// to 20 million, 27 to 34 MB (was 15 million); sources at 35 million
// positions, 80 MB (was 29 million); results at 100 to 120 million
// words. perf stat counts 105 to 138 cycles and 390 instructions an edge
// (was 172 to 187 and 487) and 108 cycles a key (was 177); the rest is
// mostly the entries' own work (gamma codes, unranking, depositing the
// white discs) and mispredicted branches on which kind of delta comes
// next. Building with GOAMD64=v3 saves another sixth. Encoding is
// unchanged: edges at 7 to 8 million a CPU second, keys at 7 to 8
// million, sources at 16 to 19 million, results at 120 to 135 million.
//
// At a load of 3 to 4, one goroutine decoded edges at 74 to 76 MB/s wall
// (21 million a second) and two goroutines on two blobs ("parallel", as
// the merge's many readers are) at 88 to 131 MB/s. A single stream read
// with NewEdgeReaderAhead costs the same per CPU second as without, but
// gained no wall time in these runs: the goroutine woken to decode each
// block (0.4 ms of work) did not get the other core from the other
// sessions, where two goroutines that never wait did.
//
// Against storage: a sequential read of a 1 GiB file that is not in the
// page cache (dd iflag=direct, same VM) runs at 550 to 740 MB/s, so the
// local disk still outruns decoding, by 7 to 10 times for one core and
// 4 to 6 for both. Azure documents no per-stream rate for a block blob:
// its target throughput for one blob is "up to the storage account
// ingress/egress limits", reached with concurrent requests, and 60 MiB/s
// (63 MB/s) for a page blob (learn.microsoft.com, Scalability and
// performance targets for Blob storage). One core decodes edges a little
// faster than that 60 MiB/s, and delivers the edges of 400 to 525 MB/s
// of 25-byte records.
package packed
