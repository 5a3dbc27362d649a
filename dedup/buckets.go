package dedup

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Buckets cut a ply's key space at its splitters: bucket k holds the
// positions p with splitters[k-1] <= p < splitters[k]. Every expansion
// task cuts its sorted output at the same splitters, so each bucket is
// merged on its own, in one round, from one segment of every expansion
// blob.

// ChooseSplitters picks the next ply's splitters from sample positions of
// this ply (spread evenly over its final blobs): it expands the samples
// and takes quantiles of their distinct children, aiming at buckets of
// about bucketBlobs final blobs. positions is the ply's size. The
// estimate counts a child once per parent, so it errs towards smaller
// buckets. There are at most most buckets (runstore.Sizes.MostBuckets).
func ChooseSplitters(b *board.Board, samples []board.Position, positions int64, blobPositions, bucketBlobs, most int) []board.Position {
	var kids []board.Position
	buf := make([]board.Position, 0, 32)
	distinct := 0
	for _, p := range samples {
		buf, _ = b.Children(p, buf[:0])
		distinct += len(buf)
		kids = append(kids, buf...)
	}
	if len(samples) == 0 || len(kids) == 0 {
		return nil
	}
	estimate := float64(positions) * float64(distinct) / float64(len(samples))
	buckets := int(math.Ceil(estimate / (float64(bucketBlobs) * float64(blobPositions))))
	slices.SortFunc(kids, board.Compare)
	kids = slices.Compact(kids)
	buckets = min(buckets, len(kids), most)
	if buckets <= 1 {
		return nil
	}
	out := make([]board.Position, 0, buckets-1)
	for k := 1; k < buckets; k++ {
		s := kids[k*len(kids)/buckets]
		if len(out) == 0 || board.Compare(out[len(out)-1], s) < 0 {
			out = append(out, s)
		}
	}
	return out
}

// EncodeSplitters packs splitters as consecutive position keys.
func EncodeSplitters(ps []board.Position) []byte {
	out := make([]byte, 0, len(ps)*board.KeyLen)
	for _, p := range ps {
		out = p.AppendKey(out)
	}
	return out
}

// DecodeSplitters reads what EncodeSplitters wrote, and checks that the
// splitters ascend strictly.
func DecodeSplitters(b *board.Board, data []byte) ([]board.Position, error) {
	if len(data)%board.KeyLen != 0 {
		return nil, fmt.Errorf("%w: splitters of %d bytes are not whole %d-byte keys", ErrCorrupt, len(data), board.KeyLen)
	}
	out := make([]board.Position, 0, len(data)/board.KeyLen)
	for i := 0; i < len(data); i += board.KeyLen {
		p, err := b.DecodeKey(data[i : i+board.KeyLen])
		if err != nil {
			return nil, fmt.Errorf("%w: splitter %d: %w", ErrCorrupt, i/board.KeyLen, err)
		}
		if len(out) > 0 && board.Compare(out[len(out)-1], p) >= 0 {
			return nil, fmt.Errorf("%w: splitter %d does not ascend", ErrOrder, i/board.KeyLen)
		}
		out = append(out, p)
	}
	return out, nil
}

// ReadSplitters reads the splitters of a ply from its splitters blob.
func ReadSplitters(ctx context.Context, run *task.Run, ply int) ([]board.Position, error) {
	name := runstore.SplittersBlobName(ply)
	data, err := run.Blobs.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading the splitters of ply %d: %w", ply, err)
	}
	s, err := DecodeSplitters(run.Board, data)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", name, err)
	}
	return s, nil
}
