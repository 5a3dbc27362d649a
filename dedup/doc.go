// Package dedup removes duplicate positions from a ply by merging sorted
// runs.
//
// A run here is a sorted run (docs/design.md, glossary), not the
// enumeration: a stream of Entry records, EntryLen bytes each, sorted by
// CompareEntries: a child position and one parent that leads to it.
// Expansion tasks write one run each, cut into buckets at the ply's
// splitters (ChooseSplitters, Cuts). Once every expansion task is done,
// each bucket is merged by one task, in one round: it reads the bucket's
// segment of every expansion run at once (Reader, Merge, a loser tree)
// and writes the bucket's merged blobs (the ply's final blobs once it is
// Final), folding each position's parents together. Scans enqueue those
// merges and notice when every bucket is merged.
//
// The article merges pairs of overlapping runs chosen from range records,
// round after round. Buckets make that planning unnecessary: segments of
// different buckets never overlap, and the buckets are sized (from samples
// of the previous ply) so that each merge writes a few merged blobs. Every
// entry is then read by exactly one merge, and the only records are one
// marker per expansion task and one per bucket.
//
// A bucket merge reads a segment of every expansion run with entries in
// its bucket, so a ply's reads grow as tasks times buckets. Two size
// rules (runstore.Sizes) keep them linear in the edges: final blobs and
// buckets grow with the ply, and a ply fed by more runs than a merge's
// fan-in gets combine levels, unless it is fed by at most twice as
// many, which is cut into a few wide buckets instead
// (runstore.Sizes.MostBuckets). Their combine tasks (CombineHandler) each
// merge one group of consecutive runs (expansion runs, or the runs of
// the level below) over one range of consecutive buckets into a run cut
// like an expansion run; the bucket merges then read one segment of each
// group's run of the last level. The scan starts the steps in turn
// (scan.go), each through a tree of its parts' first tasks; each task
// reads its own list of segments: from an inputs blob (inputs.go)
// without a combine level (one a ply, written by the scan), on the first
// level (one a group) and for the bucket merges (one a range), each
// written by the part's first task from the part's markers; from the
// markers of the runs it reads on a level above.
package dedup
