package board

import (
	"math/rand"
	"testing"
)

// slowTransform moves one square at a time with TransformSquare, whose
// coordinate arithmetic is independent of the bit tricks.
func slowTransform(b *Board, x uint64, i int) uint64 {
	var y uint64
	for sq := 0; sq < 64; sq++ {
		if x>>sq&1 == 1 {
			y |= 1 << b.TransformSquare(sq, i)
		}
	}
	return y
}

func TestTransformSquareGeometry(t *testing.T) {
	// Exact images of named squares under the three generators, written
	// from the definition: transpose swaps column and row, mirror reverses
	// columns, flip reverses rows.
	tests := []struct {
		size int
		sq   string
		i    int
		want string
	}{
		{8, "a1", 0, "a1"},
		{8, "b1", 4, "a2"},
		{8, "b1", 2, "g1"},
		{8, "b1", 1, "b8"},
		{8, "b1", 3, "g8"},
		{8, "c2", 6, "g3"},
		{8, "c2", 5, "b6"},
		{8, "c2", 7, "g6"},
		{6, "b1", 2, "e1"},
		{6, "b1", 1, "b6"},
		{6, "a1", 3, "f6"},
		{4, "a2", 7, "c4"},
		{4, "d4", 3, "a1"},
	}
	for _, tc := range tests {
		b := MustNew(tc.size)
		sq, err := b.ParseSquare(tc.sq)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.SquareName(b.TransformSquare(sq, tc.i)); got != tc.want {
			t.Errorf("%dx%d: TransformSquare(%s, %d) = %s, want %s", tc.size, tc.size, tc.sq, tc.i, got, tc.want)
		}
	}
}

func TestTransformMatchesSquares(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(int64(n)))
		for k := 0; k < 500; k++ {
			p := randomPosition(b, rng)
			for i := 0; i < 8; i++ {
				q := b.Transform(p, i)
				if q.Occ != slowTransform(b, p.Occ, i) || q.White != slowTransform(b, p.White, i) || q.Side != p.Side {
					t.Fatalf("%dx%d: Transform(%v, %d) = %v, squares say %#x %#x", n, n, p, i, q, slowTransform(b, p.Occ, i), slowTransform(b, p.White, i))
				}
				if err := b.Valid(q); err != nil {
					t.Fatalf("%dx%d: image %d leaves the board: %v", n, n, i, err)
				}
			}
		}
	}
}

func TestTransformGroup(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		// One disc on a1, one on b1 and one on a3 breaks every symmetry.
		p := Position{Occ: 1 | 2 | 1<<16, White: 2}
		seen := map[Position]int{}
		for i := 0; i < 8; i++ {
			seen[b.Transform(p, i)] = i
		}
		if len(seen) != 8 {
			t.Fatalf("%dx%d: %d distinct images of an asymmetric position, want 8", n, n, len(seen))
		}
		if b.Transform(p, 0) != p {
			t.Errorf("%dx%d: symmetry 0 is not the identity", n, n)
		}
		for i := 0; i < 8; i++ {
			hasInverse := false
			for j := 0; j < 8; j++ {
				q := b.Transform(b.Transform(p, i), j)
				if _, ok := seen[q]; !ok {
					t.Fatalf("%dx%d: symmetry %d after %d leaves the group", n, n, j, i)
				}
				hasInverse = hasInverse || q == p
			}
			if !hasInverse {
				t.Errorf("%dx%d: symmetry %d has no inverse", n, n, i)
			}
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(int64(100 + n)))
		check := func(p Position) {
			c := b.Canonical(p)
			if b.Canonical(c) != c {
				t.Fatalf("%dx%d: Canonical not idempotent on %v", n, n, p)
			}
			isImage := false
			for i := 0; i < 8; i++ {
				q := b.Transform(p, i)
				isImage = isImage || q == c
				if b.Canonical(q) != c {
					t.Fatalf("%dx%d: image %d of %v has canonical %v, want %v", n, n, i, p, b.Canonical(q), c)
				}
				if q.Occ < c.Occ || q.Occ == c.Occ && q.White < c.White {
					t.Fatalf("%dx%d: image %d of %v is below its canonical form", n, n, i, p)
				}
				// Legal moves are geometric, so they transform with the board.
				if got, want := b.Moves(q), b.transform(b.Moves(p), i); got != want {
					t.Fatalf("%dx%d: Moves of image %d = %#x, want %#x", n, n, i, got, want)
				}
			}
			if !isImage {
				t.Fatalf("%dx%d: Canonical(%v) = %v is not an image", n, n, p, c)
			}
		}
		for k := 0; k < 300; k++ {
			check(randomPosition(b, rng))
		}
		// Symmetric positions tie on occupancy and exercise the colour
		// tie-break.
		for g := 0; g < 30; g++ {
			randomGame(b, rng, check)
		}
		check(Position{Occ: b.Mask(), White: b.Mask() & 0x5555555555555555})
	}
}

func TestCanonicalStartMoves(t *testing.T) {
	// The four opening moves are symmetric, so ply 1 has one canonical
	// position (docs/reference.md).
	for _, n := range sizes {
		b := MustNew(n)
		got, moves := b.Children(b.Start(), nil)
		if moves != 4 || len(got) != 1 {
			t.Errorf("%dx%d: start has %d moves and %d canonical children, want 4 and 1", n, n, moves, len(got))
		}
	}
}

// TestMinImage: minImage (the vector version where the build has it)
// agrees with minImageScalar on masks of every kind: random, sparse,
// with the top bit (which a signed compare would misorder) and with ties
// among any subset of the eight.
func TestMinImage(t *testing.T) {
	rng := rand.New(rand.NewSource(39))
	words := func() uint64 {
		switch rng.Intn(4) {
		case 0:
			return rng.Uint64()
		case 1:
			return rng.Uint64() & rng.Uint64() & rng.Uint64()
		case 2:
			return 1<<63 | rng.Uint64()>>rng.Intn(64)
		default:
			return uint64(rng.Intn(4)) << 62
		}
	}
	for k := 0; k < 200_000; k++ {
		var a, b [8]uint64
		for i := range a {
			a[i], b[i] = words(), words()&words()
		}
		if tied := rng.Intn(256); k%2 == 0 {
			// Make the masks of the subset tied equal, and often the least.
			v := uint64(rng.Intn(3))
			for i := range a {
				if tied>>i&1 == 1 {
					a[i], b[i] = v, 0
				}
			}
		}
		best, ties := minImage(&a, &b)
		wantBest, wantTies := minImageScalar(&a, &b)
		if best != wantBest || ties != wantTies {
			t.Fatalf("minImage(%#x, %#x) = %#x, %08b; want %#x, %08b", a, b, best, ties, wantBest, wantTies)
		}
	}
}
