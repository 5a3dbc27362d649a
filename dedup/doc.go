// Package dedup removes duplicate positions from a ply by merging sorted
// runs.
//
// A run is a stream of Entry records, EntryLen bytes each, sorted by
// CompareEntries: a child position and one parent that leads to it.
// Expansion tasks write one run each, cut into buckets at the ply's
// splitters (ChooseSplitters, Cuts). Once every expansion task is done,
// each bucket is merged by one task, in one round: it reads the bucket's
// segment of every expansion run at once (Reader, Merge, a loser tree)
// and writes the bucket's final blobs, folding each position's parents
// together. Scans enqueue those merges and notice when every bucket is
// merged.
//
// The article merges pairs of overlapping runs chosen from range records,
// round after round. Buckets make that planning unnecessary: segments of
// different buckets never overlap, and the buckets are sized (from samples
// of the previous ply) so that each merge writes a few final blobs. Every
// entry is then read by exactly one merge, and the only records are one
// marker per expansion task and one per bucket.
package dedup
