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
//   - Terminal lists (terminals.go): not blocks, a small record of a
//     final blob's terminal positions and their indexes, stored beside
//     its sources.
//
// Corrupt input (bad magic, checksum, truncation, out-of-range or
// out-of-order entries) is an error wrapping ErrCorrupt, an unknown
// version (version 1 among them) one wrapping ErrVersion; writers refuse
// unsorted input with ErrOrder.
//
// # Two versions: size against speed
//
// Version 1 coded a new occupancy as the delta of its colexicographic
// rank among masks of as many discs, and the white discs under a repeated
// occupancy as a gamma-coded delta: the smallest blobs we found, but the
// decoder spent most of its time on the variable-length codes and on
// unranking, and decoded slower than a local disk reads. A smaller blob
// asks for faster decoding to keep up, so version 2 gives back some of
// the size for speed: a few more bits a position, and most entries decode
// at a fixed length with a mask and a comparison. The white discs under
// an occupancy are scattered and gathered with PDEP and PEXT where the
// processor has them (found at run time), and with tables otherwise or
// under -tags purego.
//
// The key loop keeps one branch, which tells a new occupancy from white
// bits and is often mispredicted. Decoding both readings and choosing
// between them without a branch, or one loop for keys and edges, measured
// slower: the extra work, or the edge state spilling the key loop's
// registers, cost more than the mispredictions.
//
// Default blocks hold 2048 edges, 16384 keys, the sources of 8192
// positions, or 65536 results.
//
// # Sizes and speeds
//
// TestSizes prints the bytes per edge and per position of each blob kind
// for 8x8 plies 8 to 10, and the benchmarks (go test -bench . ./packed/)
// measure encoding and decoding on one core, on every core and read
// ahead. docs/performance.md holds the current figures, with the machine
// and date of each, and compares them with a disk and with Azure's rates.
package packed
