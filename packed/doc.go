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
// Measured with go test -bench . ./packed/ on 2026-11-24 at 03:15 UTC, on
// a VM of 2 AMD EPYC (Zen 3) vCPUs at a load of about 1, as medians of
// three alternated runs; rates are per CPU second of the process
// (entries/cpu-s), MB/s per wall second. Instruction counts (perf stat,
// per entry, the difference between N and 1 iterations of a benchmark,
// with N large enough that the counts repeat within 2 percent) do not
// depend on the machine's load. "tables" is the build without the BMI2
// instructions (-tags purego), as on a processor that lacks them:
//
//	                      instructions per entry        million a CPU second (MB/s)
//	                      v1 tables  v1 BMI2  v3 BMI2   v1 tables    v1 BMI2      v3 BMI2
//	edges, decode          356        267      239      24.7 (90)    28.3 (103)   36.1 (131)
//	keys, KeyReader.Next   357        247      217      23.6 (42)    29.8 (53)    34.5 (61)
//	keys, DecodeKeys       331        220      191      22.5 (40)    27.4 (50)    31.0 (56)
//	edges, encode          792        559      538       8.3 (30)    13.1 (47)    13.5 (49)
//	keys, encode           655        417      398      10.9 (19)    15.8 (28)    19.2 (34)
//
// On both cores, a blob per goroutine as a merge's many readers use
// them, edges decode at 257 MB/s with GOAMD64=v3 and BMI2 (71 million a
// second) and 213 MB/s at v1; one blob read ahead on both cores
// (NewEdgeReaderAhead), 217 MB/s. The same code measured half these
// rates on 2026-11-23 and in the night after, at a load of 1.6 to 2.2
// with another session measuring, at the same cycles an entry (73 an
// edge decoded at v3): the VM's clock, not the code, so only rates taken
// at one sitting compare. Sources decoded at about 22 million positions
// a CPU second and results at 100 million words in the last measurement
// before BMI2 (under that load), which they do not use.
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
//   - Writers code each entry as it is added, rather than buffering a
//     block of entries and planning it in a second pass: 12 percent fewer
//     instructions an edge encoded (612 to 538 at v3), 4.5 percent less
//     CPU for the whole pipeline through ply 12.
//   - Tried and dropped: a layout grouped by occupancy (one rank delta
//     and a count a group, the white bits as Elias-Fano codes, a unary
//     count of refs), every field a fixed width or a unary count. Same
//     size (3.63 bytes an edge against 3.61) and no faster (212
//     instructions an edge of payload at v3 against 196): what costs is
//     the work of each entry (unranking a new occupancy one edge in five,
//     storing the edge, its ref), not the codes. A shortcut for unranking
//     steps of one (Gosper's next mask) saved nothing measurable either.
//
// Against storage, the gap that remains. A sequential read of a 1 GiB
// file that is not in the page cache (dd iflag=direct, same VM, 03:00
// UTC on 2026-11-24) runs at 590 to 690 MB/s. In packed bytes the disk
// outruns decoding: edges 131 MB/s on one core at v3 and 257 on both
// (2.3 to 2.7 times slower than the disk), keys 61 and 120 (5 to 6
// times). In entries it turns: the same disk would deliver the former
// fixed records (25 bytes an edge, 17 a key) at 24 to 28 million edges
// or 35 to 41 million keys a second, against 36 million edges and 34
// million keys decoded on one core at v3 (28 and 30 at v1) and 71 and 69
// million on both. Azure documents no per-stream rate for a block blob
// (its target for one blob is "up to the storage account ingress/egress
// limits", reached with concurrent requests) and 60 MiB/s (63 MB/s) for
// a page blob (learn.microsoft.com, Scalability and performance targets
// for Blob storage): one core decodes edges at twice that and keys at
// about that rate, both cores well above it.
//
// No compact format closes the gap with this disk in bytes: the smaller
// the blob, the faster the decoding it asks for. Keys at 1.7 bytes read
// at 650 MB/s are 380 million a second, about 14 cycles a key on the two
// cores of this VM, where the decoders spend 60 to 70 cycles an entry and
// the layout that drops every variable-length code is no faster (above).
// In a whole run, reading is a small part of the work: a CPU profile of
// the embedded pipeline through ply 12 (bench -plies 12 -engines embedded
// -profile, 2026-11-24, GOAMD64=v3 with BMI2, 213 s of CPU under load)
// has 11 percent of the CPU in the readers of every kind (5.8 in
// decoding positions), against 24 in the writers, 18 in sorting
// expansion runs and 18 in the rules (package board).
package packed
