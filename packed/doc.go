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
// Block: "RP", version 2, kind, entry count (uint32), payload length
// (uint32), payload, CRC-32C of all before it. Payloads are bit streams,
// least significant bit first, using fixed-width fields and
// exponential-Golomb codes whose orders each block chooses for itself
// from a histogram of its values (the exact cost of every order).
//
//   - Positions (position.go): blocks share side and disc count; after
//     the first, a prefix says whether a position keeps the previous
//     occupancy (its white discs then follow as one bit per occupied
//     square), repeats the previous position (edges), or has a new
//     occupancy (the difference from the previous one, then the white
//     bits).
//   - Refs (ref.go): the first parent of a list in the block's widths,
//     the others as deltas.
//   - Edges (edges.go): position, then ref; a repeated position costs its
//     2-bit prefix and continues the ref list.
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
// version (version 1 among them) one wrapping ErrVersion; writers refuse
// unsorted input with ErrOrder.
//
// # Two versions: size against speed
//
// Version 1 (2026-11-23 to 11-25) coded a new occupancy as the delta of
// its colexicographic rank among masks of as many discs and the white
// discs under a repeated occupancy as a gamma-coded delta: the smallest
// blobs we found, but a decoder spent 60 to 70 cycles an entry on the
// variable-length codes and on unranking, and both cores of this VM
// decoded packed bytes two to six times slower than its disk reads them.
// A smaller blob asks for faster decoding to keep up, so version 2 gives
// back some of the size for speed: a few more bits a position (about 0.4
// bytes an edge and 0.6 a key), and most entries decode at a fixed length
// with a mask and a comparison, about three times as fast. Both cores now
// decode faster than the disk reads (below).
//
// # Measured sizes
//
// On 2026-11-25, on a 2-core AMD EPYC VM, for 8x8 with the pipeline's
// final blobs of 65536 positions and expansion runs of one parent blob
// cut into 64 segments (TestSizes; version 1 and the fixed-width records
// of before the format in brackets):
//
//	ply  positions  edges    expansion B/edge   keys B/pos       sources B/pos        results B/pos  final B/pos
//	 8      67245     75530  4.04 [3.50; 25]    2.57 [1.85; 17]  2.09 [4.36 uvarint]  0.001 [2]      4.66 [3.94]
//	 9     434029    517831  4.03 [3.62]        2.35 [1.71]      2.55 [5.45]          0.000          4.90 [4.26]
//	10    2958586   3564345  4.16 [3.71]        2.20 [1.62]      2.76 [5.50]          0.000          4.96 [4.38]
//
// so a position costs about 5 bytes in its final blob plus about 5 in the
// expansion runs that produced it (1.2 edges a position), against about
// 50 in fixed records. Default blocks hold 8192 edges (about 33 KiB),
// 16384 keys (38 KiB), the sources of 8192 positions (21 KiB) or 65536
// results (21 bytes when all are unknown).
//
// # Speeds
//
// Measured with go test -bench . ./packed/ on 2026-11-25 at 19:10 UTC,
// on a VM of 2 AMD EPYC (Zen 3) vCPUs, as medians of three runs
// alternated with the build of version 1; rates are MB/s of packed bytes
// per wall second and, in brackets, million entries per CPU second. This
// VM's processor counters are not available to perf today, so there are
// no instruction counts; rates taken at different sittings do not
// compare (the VM's clock has varied twofold from one day to the next).
// "tables" is the build without the BMI2 instructions (-tags purego), as
// on a processor that lacks them or runs them in microcode:
//
//	                         format version 1           format version 2
//	GOAMD64 level            v3, PDEP     tables        v3, PDEP     v1, PDEP     tables
//	edges, decode, one core  248 (68)     193 (53)      431 (107)    405 (100)    261 (64)
//	edges, both cores        496 (70)     385 (54)      844 (107)    803 (101)    519 (65)
//	edges, read ahead        399 (65)     312 (51)      616 (96)     590 (90)     418 (61)
//	keys, one core           135 (77)      96 (54)      418 (176)    379 (159)    203 (86)
//	keys, both cores         264 (78)     186 (54)      881 (192)    764 (167)    408 (89)
//	keys, DecodeKeys         141 (79)      96 (54)      479 (191)    415 (168)    205 (84)
//	edges, encode             99 (27)      81 (22)      139 (35)     136 (34)     100 (25)
//	keys, encode              65 (37)      49 (28)      110 (47)     107 (45)      73 (31)
//
// "Both cores" is a blob per goroutine on each core, as a merge's many
// readers and a worker's concurrent tasks read; "read ahead" is one blob
// read ahead on both cores (NewEdgeReaderAhead), as one merge segment is.
// GOAMD64=v1 is the default build, which finds PDEP at run time.
//
// Where the time goes, a key at v3 (CPU profile of DecodeKeys): the loop
// two thirds, of which about a quarter is spent where the branch that
// tells a new occupancy from white bits lands (taken one key in four at
// ply 9, as good as random, so often mispredicted); the PDEP pass 6
// percent; zeroing the result 5 percent; the checksum 1 percent. A loop
// that decoded both readings and chose between them without a branch was
// a fifth slower with the checks as comparisons and a third slower with
// them as borrows, and one loop for keys and edges a quarter slower on
// keys: the edge state spilled the key loop's registers.
//
// # Against the disk and the network
//
// The same VM's disk read files untouched for months at 650 to 830 MB/s
// (dd iflag=direct, a 707 MB file and three of 146 to 200 MB, the same
// hour); a file just written, or read twice, came back at 0.9 to 1.5
// GB/s from the hypervisor's cache. Version 2 on both cores decodes
// edges at 844 MB/s and keys at 881 at GOAMD64=v3, the build of the
// Makefile and the Dockerfile on such a CPU: faster than the disk, by 2
// to 35 percent. The default GOAMD64=v1 build decodes 803 and 764 MB/s,
// inside the disk's range. Read ahead, one merge segment decodes at 616
// MB/s on both cores; a merge reads many segments at once, each ahead. Without fast PDEP (the tables
// build) both cores decode 408 to 519 MB/s, slower than this disk. Azure
// documents no per-stream rate for a block blob (its target for one blob
// is "up to the storage account ingress/egress limits", reached with
// concurrent requests) and 60 MiB/s (63 MB/s) for a page blob
// (learn.microsoft.com, Scalability and performance targets for Blob
// storage): one core decodes six times that.
//
// In a whole run, reading is a small part of the work: a CPU profile of
// the embedded pipeline through ply 12 with version 1 (bench -plies 12
// -engines embedded -profile, 2026-11-24) had 11 percent of the CPU in
// the readers of every kind, against 24 in the writers, 18 in sorting
// expansion runs and 18 in the rules (package board). Version 2 took 9
// percent less CPU for the whole run to ply 12 (README, "Performance").
package packed
