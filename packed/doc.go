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
// # Speeds
//
// Measured with go test -bench . ./packed/ on 2026-11-23 and 24, on a
// VM of 2 AMD EPYC (Zen 3) vCPUs at about 2 GHz shared with other work,
// so rates are per CPU second of the process (entries/cpu-s) and medians
// of six alternated runs at a load of 1.6 to 2.2; instruction counts
// (perf stat, per entry, the difference between 21 and 1 iterations of
// a benchmark) are exact. "tables" is the build without the BMI2
// instructions (-tags purego), as on a processor that lacks them:
//
//	                      instructions per entry        million a CPU second (MB/s)
//	                      v1 tables  v1 BMI2  v3 BMI2   v1 tables    v1 BMI2      v3 BMI2
//	edges, decode          361        265      232      12.8 (45)    15.8 (57)    19.6 (70)
//	keys, KeyReader.Next   359        246      220      13.3 (23)    16.7 (29)    19.8 (34)
//	keys, DecodeKeys       332        218      193      12.0 (21)    15.3 (26)    18.4 (32)
//	edges, encode          881        636      615       4.5 (16)     6.1 (22)     7.1 (26)
//	keys, encode           723        478      456       5.1 (9)      7.4 (13)     8.2 (14)
//
// On both cores, a blob per goroutine as a merge's many readers use
// them, edges decode at 141 MB/s wall with GOAMD64=v3 and BMI2 (39
// million a second) and 116 MB/s at v1. Sources decoded at about 22
// million positions a CPU second and results at 100 million words in
// the last measurement before BMI2, which they do not use.
//
// Where the time goes, an edge at v3 with BMI2 (CPU profile): the two
// gamma codes a fifth, unranking a new occupancy (one edge in five) a
// tenth, storing the decoded edge and reading it back in Next a sixth
// (a block of 8,192 decoded edges is 256 KiB, beyond the L1 cache;
// smaller blocks measured no faster), the pass of PDEP over a block
// 6 percent, and the checks that keep corrupt input from producing
// out-of-order or out-of-range entries.
//
// How it got here, each step checked against a plain reference
// decoder (decode_test.go) and under fuzzing:
//   - One loop (posDecoder.decode) decodes a block's entries, keeping
//     the bit position and the decoders' state in locals and taking each
//     entry's codes from one 64-bit peek (a cursor) by shifts; gamma
//     codes without a branch on their length; a step of unranking that
//     moves only the lowest disc skips the tables (a fifth fewer
//     instructions an edge than the first decoder, by that day's
//     measurements).
//   - The white discs are deposited by PDEP and extracted by PEXT
//     (white.go, bmi2_amd64.s) where the processor has them fast: Intel
//     from Haswell on and AMD from Zen 3 on, detected at run time, so a
//     GOAMD64=v1 binary uses them too; AMD's Zen 1 and 2 run them in
//     microcode, slower than the byte tables they replace, and keep the
//     tables. A call per entry would cost the loop its registers, so the
//     loop leaves each entry's white bits in place and one pass of PDEP
//     after it deposits the block's.
//   - A continued ref in the same blob, which every continued ref of an
//     expansion run is, is read in the loop without a call (3 percent).
//
// Against storage, the gap that remains. A sequential read of a 1 GiB
// file that is not in the page cache (dd iflag=direct, same VM,
// 2026-11-23) runs at 550 to 740 MB/s: the local disk outruns one core
// decoding edges (70 MB/s at v3) by 8 to 10 times and both cores (141
// MB/s) by 4 to 5, in packed bytes. In edges the comparison turns: the
// same disk would deliver raw 25-byte records at 22 to 30 million a
// second, against 20 million decoded on one core and 39 million on both.
// Azure documents no per-stream rate for a block blob (its target for
// one blob is "up to the storage account ingress/egress limits", reached
// with concurrent requests) and 60 MiB/s (63 MB/s) for a page blob
// (learn.microsoft.com, Scalability and performance targets for Blob
// storage): one core at v3 decodes edges faster than that (70 MB/s), and
// at v1 a little slower (57 MB/s). In a whole run, reading is a small
// part of the work: a CPU profile of the embedded pipeline through ply
// 12 (bench -plies 12 -engines embedded -profile, 2026-11-24, GOAMD64=v3
// with BMI2, 213 s of CPU) has 11 percent of the CPU in the readers of
// every kind (5.8 in decoding positions), against 24 in the writers, 18
// in sorting expansion runs and 18 in the rules (package board). Closing
// the gap with the local disk in packed bytes would take a format that
// decodes several times faster per entry, not more tuning of this one:
// what is left is spread thin over the entries' own work.
package packed
