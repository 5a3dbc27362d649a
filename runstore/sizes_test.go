package runstore

import (
	"reflect"
	"testing"
)

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

// TestLevels: the combine levels of a ply, exactly for a few sizes (the
// default sizes at 8x8 ply 14, merged wide; the sim rehearsal's ply 10
// with 16 positions a blob, a ply of 1.8 million tasks; one level has
// one and a half times the root of the tasks in groups, at most the
// fan-in), and within the invariants for many: groups of at most the
// fan-in, the last level's groups within it too, ranges within the
// buckets, no level only for wide merges.
func TestLevels(t *testing.T) {
	for _, c := range []struct {
		fanIn, tasks, buckets int
		want                  []CombineLevel
	}{
		{0, 1000, 50, nil},
		{8, 8, 50, nil},
		{8, 9, 50, []CombineLevel{{5, 12}}},
		{8, 64, 3, []CombineLevel{{8, 3}}},
		{1024, 1050, 54, []CombineLevel{{49, 12}}},
		{1024, 1763, 79, []CombineLevel{{63, 12}}},                    // more buckets than a wide merge has
		{1024, 1763, 12, nil},                                         // 8x8 ply 14 with the default sizes: wide merges
		{1024, 2049, 12, []CombineLevel{{68, 12}}},                    // past twice the fan-in
		{64, 27347, 3461, []CombineLevel{{908, 12}, {31, 112}}},       // the rehearsal's ply 10
		{64, 3418, 436, []CombineLevel{{64, 12}}},                     // the same with 128 positions a blob
		{1024, 1800000, 8192, []CombineLevel{{14798, 12}, {122, 68}}}, // more than 1024^2
	} {
		got := Sizes{MergeFanIn: c.fanIn}.Levels(c.tasks, c.buckets)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("fan-in %d, %d tasks, %d buckets: levels %v, want %v", c.fanIn, c.tasks, c.buckets, got, c.want)
		}
	}
	for _, fanIn := range []int{2, 3, 8, 64, 1024} {
		for tasks := fanIn + 1; tasks < 50_000_000; tasks = tasks*3/2 + 1 {
			for _, buckets := range []int{1, 7, 100, 5000} {
				levels := Sizes{MergeFanIn: fanIn}.Levels(tasks, buckets)
				runs := tasks
				for k, l := range levels {
					if l.Groups < 2 || (runs+l.Groups-1)/l.Groups > fanIn && len(levels) < MaxCombineLevels || l.Ranges < min(buckets, MinRanges) || l.Ranges > buckets {
						t.Fatalf("fan-in %d, %d tasks, %d buckets: level %d of %v", fanIn, tasks, buckets, k+1, levels)
					}
					runs = l.Groups
				}
				if len(levels) == 0 {
					if tasks > wideFanIn*fanIn || buckets > MinRanges {
						t.Fatalf("fan-in %d, %d tasks, %d buckets: no level", fanIn, tasks, buckets)
					}
					continue
				}
				if runs > fanIn && len(levels) < MaxCombineLevels {
					t.Fatalf("fan-in %d, %d tasks, %d buckets: the merges read %d runs (levels %v)", fanIn, tasks, buckets, runs, levels)
				}
			}
		}
	}
}

// TestMostBuckets: a ply is cut into at most MinRanges buckets exactly
// when it is fed by more than the fan-in's tasks and at most twice
// as many, and then needs no combine level.
func TestMostBuckets(t *testing.T) {
	for _, c := range []struct{ fanIn, tasks, want int }{
		{0, 5000, MaxBuckets}, {1024, 1024, MaxBuckets}, {1024, 1025, MinRanges}, {1024, 1759, MinRanges},
		{1024, 2048, MinRanges}, {1024, 2049, MaxBuckets}, {64, 100, MinRanges}, {64, 27347, MaxBuckets},
	} {
		s := Sizes{MergeFanIn: c.fanIn}
		got := s.MostBuckets(c.tasks)
		if got != c.want {
			t.Errorf("fan-in %d, %d tasks: at most %d buckets, want %d", c.fanIn, c.tasks, got, c.want)
		}
		if got == MinRanges && s.Levels(c.tasks, got) != nil {
			t.Errorf("fan-in %d, %d tasks in wide buckets: levels %v", c.fanIn, c.tasks, s.Levels(c.tasks, got))
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
