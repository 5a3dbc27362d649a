// Package runstore is the only code that reads or writes a run's table
// rows. Every row the pipeline keeps has a typed Go struct here, with its
// encoding next to it; callers use named queries and transitions, never
// partition or row keys.
//
// A run named R keeps two tables. R+"state" holds the control rows:
//
//	partition   row key                 row
//	run         config                  Config: the run's settings
//	run         done                    Done: the run is complete
//	plies       NN (ply)                Ply: where the ply stands (its lifecycle)
//	workers     worker id               WorkerStats: one process's transactions
//	rNN         s<bucket>-<task>        Run: an expansion segment
//	rNN         s<bucket>-o<claim>-<k>  Run: a merge output
//	rNN         m<task>-<batch>         expansion batch marker (idempotent batches)
//	rNN         d<task>                 Expansion: one expansion task is done
//	rNN         c<bucket>               a bucket has nothing left to merge
//	rNN         nbuckets                how many buckets hold runs
//	rNN         x<claim>                MergeStats: one merge committed
//	fNN         <index>                 Final: one final blob of a complete ply
//	vNN         d<index>                Resolution: one final blob is resolved
//
// R+"backtrack" holds the backtracking data, one partition per final blob:
//
//	s<ply>-<blob>   <row>               sources: each position's parents
//	n<ply>-<index>  <child>-<row>       notices: results reported by children
//
// Everything that grows with the run (runs, final blobs, resolutions,
// backtracking payloads) is rows in partitions of its own or blobs, never
// one entity or property, so no size limit of Azure caps a run.
package runstore
