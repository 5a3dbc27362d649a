package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
)

// DefaultBucketChildren is External's default number of children a
// bucket file is meant to hold: about 4 million. A Go map sized for that
// many takes about 200 MiB (its tables are rounded up to powers of two),
// which bounds the count's memory with the bucket files' buffers.
const DefaultBucketChildren = 4 << 20

// External is the yardstick's counterpart on disk: an independent, plain
// hash-bucket external enumerator, the counter that issue 39 measures the
// pipeline's CPU against. For each ply it reads the last ply's file,
// appends every canonical child to one of several bucket files chosen by
// a hash of the child, then drops each bucket's duplicates with a Go map
// and appends the distinct positions to the next ply's file. It shares
// nothing with the pipeline but package board, which generates the
// children exactly as for the yardstick, so that generation costs the
// same in both. It counts forward only: positions, terminal positions
// and edges per ply; every result is unknown.
type External struct {
	// Dir holds the ply and bucket files while a count runs; it must
	// exist. A count that succeeds removes every file it made there.
	Dir string
	// BucketChildren is the number of children a bucket file is meant to
	// hold (default DefaultBucketChildren). One bucket's distinct
	// positions are what the count holds in memory at a time.
	BucketChildren int
}

// recordSize is a position's size on disk: Occ and White (little-endian),
// then Side.
const recordSize = 17

// fileBuffer is each open file's buffer. Smaller than the 1 MiB that
// would make its writes cheaper still, so that the few hundred bucket
// files of ply 13 buffer under 100 MiB.
const fileBuffer = 256 << 10

// Enumerate counts the plies 0 to target of b.
func (e External) Enumerate(b *board.Board, target int) (_ *report.Report, err error) {
	perBucket := e.BucketChildren
	if perBucket <= 0 {
		perBucket = DefaultBucketChildren
	}
	rows := make([]report.Ply, target+1)
	start := b.Canonical(b.Start())
	rows[0] = report.Ply{Positions: 1, Unknown: 1}
	if b.Terminal(start) {
		rows[0].Terminal = 1
	}
	w, err := createRecords(e.plyPath(0))
	if err != nil {
		return nil, err
	}
	w.put(start)
	if err := w.close(); err != nil {
		return nil, fmt.Errorf("writing ply 0: %w", err)
	}
	for n := 0; n < target; n++ {
		// The children are estimated from the last expansion's moves per
		// position, which grows slowly from ply to ply; a bucket that
		// comes out larger than meant only makes its map larger.
		branching := 1.0
		if n > 0 {
			branching = float64(rows[n].Edges) / float64(rows[n-1].Positions)
		}
		buckets := max(1, int(float64(rows[n].Positions)*branching/float64(perBucket)+0.5))
		edges, sizes, err := e.expand(b, n, buckets)
		if err != nil {
			return nil, fmt.Errorf("expanding ply %d: %w", n, err)
		}
		// Its children are all in the buckets: the ply is no longer needed.
		if err := os.Remove(e.plyPath(n)); err != nil {
			return nil, fmt.Errorf("removing ply %d: %w", n, err)
		}
		row, err := e.dedup(b, n+1, sizes)
		if err != nil {
			return nil, fmt.Errorf("merging the buckets of ply %d: %w", n+1, err)
		}
		row.Ply, row.Edges, row.Unknown = n+1, edges, row.Positions
		rows[n+1] = row
	}
	if err := os.Remove(e.plyPath(target)); err != nil {
		return nil, fmt.Errorf("removing ply %d: %w", target, err)
	}
	return &report.Report{
		Board: b.Size(), TargetPly: target, Complete: true, Engine: EngineExternal,
		Root: board.Unknown.String(), Plies: rows,
	}, nil
}

func (e External) plyPath(n int) string { return filepath.Join(e.Dir, fmt.Sprintf("ply-%02d", n)) }

func (e External) bucketPath(i int) string {
	return filepath.Join(e.Dir, fmt.Sprintf("bucket-%05d", i))
}

// expand reads ply n and appends the canonical children of each of its
// positions to the bucket files. It returns the edges (the moves of
// ply n's positions) and the children in each bucket.
func (e External) expand(b *board.Board, n, buckets int) (edges int64, sizes []int64, err error) {
	ws := make([]*recordWriter, 0, buckets)
	defer func() {
		for _, w := range ws {
			if cerr := w.close(); err == nil && cerr != nil {
				err = fmt.Errorf("writing a bucket: %w", cerr)
			}
		}
	}()
	for i := range buckets {
		w, err := createRecords(e.bucketPath(i))
		if err != nil {
			return 0, nil, err
		}
		ws = append(ws, w)
	}
	sizes = make([]int64, buckets)
	kids := make([]board.Position, 0, 32)
	err = eachRecord(e.plyPath(n), func(p board.Position) {
		var moves int
		kids, moves = b.Children(p, kids[:0])
		edges += int64(moves)
		for _, k := range kids {
			i := bucketOf(k, buckets)
			ws[i].put(k)
			sizes[i]++
		}
	})
	return edges, sizes, err
}

// dedup writes ply n from the bucket files: each bucket's distinct
// positions, found with a map, the same for every bucket of the ply and
// cleared between them. It counts the positions and terminal positions
// and removes each bucket once read.
func (e External) dedup(b *board.Board, n int, sizes []int64) (row report.Ply, err error) {
	w, err := createRecords(e.plyPath(n))
	if err != nil {
		return row, err
	}
	defer func() {
		if cerr := w.close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing ply %d: %w", n, cerr)
		}
	}()
	seen := make(map[board.Position]struct{}, slices.Max(sizes))
	for i := range sizes {
		clear(seen)
		err := eachRecord(e.bucketPath(i), func(p board.Position) {
			// One map operation a child, not a look-up and then an insert.
			n := len(seen)
			if seen[p] = struct{}{}; len(seen) == n {
				return
			}
			w.put(p)
			row.Positions++
			if b.Terminal(p) {
				row.Terminal++
			}
		})
		if err != nil {
			return row, err
		}
		if err := os.Remove(e.bucketPath(i)); err != nil {
			return row, fmt.Errorf("removing a bucket: %w", err)
		}
	}
	return row, nil
}

// bucketOf spreads positions over n buckets: a hash of the whole position
// (murmur3's 64-bit finalizer of its words folded together), scaled to n
// by its high bits.
func bucketOf(p board.Position, n int) int {
	h := p.Occ ^ bits.RotateLeft64(p.White, 32) ^ uint64(p.Side)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// recordWriter appends positions to a file, buffered.
type recordWriter struct {
	f   *os.File
	w   *bufio.Writer
	rec [recordSize]byte
}

func createRecords(path string) (*recordWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Base(path), err)
	}
	return &recordWriter{f: f, w: bufio.NewWriterSize(f, fileBuffer)}, nil
}

// put appends p. A write error stays with the buffered writer, and close
// returns it.
func (w *recordWriter) put(p board.Position) {
	binary.LittleEndian.PutUint64(w.rec[0:], p.Occ)
	binary.LittleEndian.PutUint64(w.rec[8:], p.White)
	w.rec[16] = byte(p.Side)
	w.w.Write(w.rec[:])
}

func (w *recordWriter) close() error {
	err := w.w.Flush()
	return errors.Join(err, w.f.Close())
}

// eachRecord calls fn with each position of a file, in order.
func eachRecord(path string, fn func(board.Position)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, fileBuffer)
	var rec [recordSize]byte
	for {
		if _, err := io.ReadFull(r, rec[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Base(path), err)
		}
		fn(board.Position{
			Occ:   binary.LittleEndian.Uint64(rec[0:]),
			White: binary.LittleEndian.Uint64(rec[8:]),
			Side:  board.Color(rec[16]),
		})
	}
}
