// Package runstore is the only code that reads or writes a run's table
// rows. Every row the pipeline keeps has a typed Go struct here, with its
// encoding next to it; callers use named queries and transitions, never
// partition or row keys.
//
// A run named R keeps two kinds of table, one of each on each storage
// account that holds them: R+"state", R+"state2", ... and R+"backtrack",
// R+"backtrack2", ...; a partition lives in the table a hash of its key
// picks (Store.state, Store.back), but for the control partitions run,
// plies and workers, which live in R+"state" on the first account. The
// state tables hold:
//
//	partition   row key                 row
//	run         config                  Config: the run's settings
//	run         done                    Done: the run is complete
//	plies       NN (ply)                Ply: where the ply stands (lifecycle.go)
//	workers     worker id               WorkerStats: one process's transactions, CPU time and processor time held
//	rNN         d<task>                 Expansion: one expansion task is done: its
//	                                    blob of sorted edges and the bucket cuts
//	rNN         e<level><node>          64 expansion tasks (or nodes) are done
//	rNN         a<task>                 Combine: one combine task is done: its blob
//	                                    of sorted edges and the bucket cuts
//	rNN         b<level><node>          64 combine tasks (or nodes) are done
//	rNN         s<bucket>-<attempt>-<k> Run: output k of a bucket's merge attempt
//	rNN         c<bucket>               BucketMerge: a bucket is merged, and which
//	                                    attempt's outputs count
//	rNN         k<level><node>          64 buckets (or nodes) are merged
//	rNN         w<leaf>                 Dispatch: a leaf of the ply's dispatch is done
//	rNN         x<group>                64 dispatch leaves are done
//	rNN         y<leaf>                 Dispatch: a leaf of the ply's back stage is done
//	rNN         z<group>                64 back leaves are done
//	fNN         <index>                 Final: one final blob of a complete ply
//	vNN         d<index>                Resolution: one final blob is resolved
//	vNN         e<level><node>          64 final blobs (or nodes) are resolved
//
// The backtracking tables hold the backtracking data, one partition per
// final blob:
//
//	s<ply>-<blob>   <row>               sources: each position's parents
//	n<ply>-<index>  <child>-<row>       notices: results reported by children
//
// The e, b and k rows are the nodes of each stage's completion tree
// (completion.go), in the partitions of the markers they count; runs
// seeded before the tree keep one level of them, e<group>, b<group> and
// k<group>, in the base partitions rNN and vNN.
//
// Every <task>, <node>, <group>, <bucket> and <index> above, and the indexes in
// blob names, is written in a code that sorts in index order to any
// size and reads the seven-digit (six for buckets) keys of earlier runs
// as they are (keys.go).
//
// The settings row (Config) and the ply records (Ply) record their
// version and are migrated from older versions as they are read
// (schema.go). The other rows have no version: the few properties that
// older releases did not write are read as optional, next to each row's
// decoding.
//
// The markers (d, a, c, w, y in rNN and d in vNN, with their group markers)
// belong to the ply's stages: only Stage (stage.go) reads or adds them.
//
// Everything that grows with the run (runs, final blobs, resolutions,
// backtracking payloads) is rows in partitions of its own or blobs, never
// one entity or property, so no size limit of Azure caps a run.
package runstore
