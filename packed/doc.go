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
// Later on 2026-11-23 (same VM, its host then busier: the same code
// decoded edges at 12 to 13 million a CPU second rather than 16 to 22),
// decoding was reworked: a block's entries are decoded by one loop
// (posDecoder.decode) that keeps the bit position and the decoders'
// state in locals and takes each entry's codes from one 64-bit peek (a
// cursor) by shifts; gammaBits lost a branch the compiler made of
// max(n, 1); a step of unranking that moves only the lowest disc skips
// the tables; readers hand out decoded blocks by index; DecodeKeys
// copies whole blocks; SourceReader reads from a cursor too. The format
// is unchanged. Measured side by side with the code before, both with
// today's benchmarks, which read through the readers' concrete types (runs
// alternated, the host's load moving cycle counts by up to half between
// runs, so the cycles are the least of six runs and only the
// instruction counts are exact), perf stat per entry, GOAMD64=v1:
//
//	                       instructions   cycles      GOAMD64=v3 instructions   cycles
//	edges (EdgeReader)     396 -> 358     140 -> 111  362 -> 311                148 -> 116 to 134
//	keys (KeyReader.Next)  350 -> 345     122 -> 113  321 -> 301                140 -> 81 to 92
//	keys (DecodeKeys)      368 -> 314     118 -> 101
//	sources                273 -> 232      77 -> 66   260 -> 217                 61 -> 54
//
// with 0.7 mispredicted branches an edge, as before (where two series
// of runs disagreed, both are given). In a quieter hour
// an edge took 110 to 118 cycles before and 99 to 106 after (85 to 97
// with GOAMD64=v3). The benchmarks, two alternated runs each, one
// goroutine: edges at 13.8 to 14.3 million a CPU second, 50 to 51 MB/s
// (before: 12.3 to 12.9 million, 43 to 46 MB/s), and on both cores 99 to
// 113 MB/s wall (88 to 99); keys at 13.4 to 15.1 million (12.6 to 14.4),
// DecodeKeys 13.9 to 14.6 million (13.0 to 13.2); sources 21.9 to 23.3
// million (17.8 to 18.8). That is a tenth to a quarter faster per cycle
// for edges, sources and DecodeKeys, and a few percent for keys read one
// at a time: short of the half that was asked for. What is left is
// spread thin: an edge still costs about 75 instructions of depositing
// the white discs (eight table lookups; a branch-free six-step deposit
// took fewer instructions but more cycles, its long dependent chain
// stalling at every new occupancy), 35 of unranking, 25 for the call of
// Next, and loop state the compiler keeps in memory across the calls
// that remain in the loop (unranking, codes longer than a peek).
//
// Against storage: a sequential read of a 1 GiB file that is not in the
// page cache (dd iflag=direct, same VM) runs at 550 to 740 MB/s, so the
// local disk still outruns decoding in bytes, by 11 to 15 times for one
// core on the busy host (50 MB/s of packed edges) and, scaling the
// quiet-hour rates above by the measured gain, 6 to 11 times on a quiet
// one (about 65 to 95 MB/s). In edges, the disk's raw 25-byte records
// would come at 22 to 30 million a second; one core decodes 14 million
// packed edges a CPU second on the busy host and, scaled, 18 to 27
// million on a quiet one: about the disk's raw rate, not reliably above
// it, while both cores together (99 to 113 MB/s, 28 to 31 million
// edges a second on the busy host) are. Azure documents no per-stream rate
// for a block blob: its target throughput for one blob is "up to the
// storage account ingress/egress limits", reached with concurrent
// requests, and 60 MiB/s (63 MB/s) for a page blob (learn.microsoft.com,
// Scalability and performance targets for Blob storage). At 3.6 bytes
// an edge those 63 MB/s carry 17 million edges a second (raw records:
// 2.5 million), which one core decodes about as fast as they come: on
// the busy host a little slower, on a quiet one a little faster.
package packed
