// Package dedup removes duplicate positions from a ply by merging sorted runs.
//
// A run is a stream of Entry records, EntryLen bytes each, sorted by
// CompareEntries: a child position and one parent that leads to it. Workers
// write runs (SortEntries, Compact, Writer), merge runs whose key ranges
// overlap (Reader, Merge), and fold each position's parents together when
// they write a ply's final blobs (Grouper).
//
// Which runs to merge is decided from range records kept in a table (Record,
// Plan), following the design's "Duplicate removal" section: the article's
// age and overlap-kind priority is kept, but merges take up to fanIn runs at
// once, so that the total merge work grows like a sort (N log N) and not with
// the square of the number of runs.
package dedup
