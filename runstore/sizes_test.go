package runstore

import "testing"

func TestSizesGrow(t *testing.T) {
	s := Sizes{BlobPositions: 1000, BucketBlobs: 4, GrowFrom: 3}
	for _, c := range []struct{ ply, blob, bucket int }{
		{0, 1000, 4}, {2, 1000, 4}, {3, 2000, 4}, {4, 4000, 8}, {10, 256000, 512}, {20, MaxGrownBlobPositions, MaxGrownBucketBlobs},
	} {
		if b, k := s.BlobPositionsAt(c.ply), s.BucketBlobsAt(c.ply); b != c.blob || k != c.bucket {
			t.Errorf("ply %d: %d positions a blob and %d blobs a bucket, want %d and %d", c.ply, b, k, c.blob, c.bucket)
		}
	}
	fixed := Sizes{BlobPositions: 1 << 22, BucketBlobs: 4}
	for ply := range 60 {
		if fixed.BlobPositionsAt(ply) != 1<<22 || fixed.BucketBlobsAt(ply) != 4 {
			t.Fatalf("ply %d: fixed sizes changed", ply)
		}
	}
	big := Sizes{BlobPositions: 1 << 22, BucketBlobs: 4, GrowFrom: 1}
	if big.BlobPositionsAt(5) != 1<<22 {
		t.Errorf("a base above the cap fell to %d", big.BlobPositionsAt(5))
	}
}

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		fanIn, tasks, buckets, groups, ranges int
	}{
		{0, 1000, 50, 0, 0},
		{8, 8, 50, 0, 0},
		{8, 9, 50, 3, 17},
		{8, 64, 3, 8, 3},
		{1024, 1050, 54, 33, 16},
		{1024, 1763, 79, 42, 16}, // 8x8 ply 14 with the default sizes
		{1024, 1800000, 8192, 1758, 16},
	} {
		g, r := Sizes{MergeFanIn: c.fanIn}.Levels(c.tasks, c.buckets)
		if g != c.groups || r != c.ranges {
			t.Errorf("fan-in %d, %d tasks, %d buckets: %d groups and %d ranges, want %d and %d", c.fanIn, c.tasks, c.buckets, g, r, c.groups, c.ranges)
		}
		if g > 0 && (c.tasks+g-1)/g > c.fanIn {
			t.Errorf("fan-in %d, %d tasks: groups of %d", c.fanIn, c.tasks, (c.tasks+g-1)/g)
		}
	}
}

// TestSpans checks that SpanOf cuts every count into contiguous nearly
// equal parts and that PartOf inverts it.
func TestSpans(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for parts := 1; parts <= n; parts++ {
			next := 0
			for i := range parts {
				s := SpanOf(i, n, parts)
				if s.Lo != next || s.Hi-s.Lo < n/parts || s.Hi-s.Lo > n/parts+1 {
					t.Fatalf("n=%d parts=%d: part %d is %v", n, parts, i, s)
				}
				for j := s.Lo; j < s.Hi; j++ {
					if PartOf(j, n, parts) != i {
						t.Fatalf("n=%d parts=%d: item %d is in part %d, PartOf says %d", n, parts, j, i, PartOf(j, n, parts))
					}
				}
				next = s.Hi
			}
			if next != n {
				t.Fatalf("n=%d parts=%d: parts end at %d", n, parts, next)
			}
		}
	}
}
