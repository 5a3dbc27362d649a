package board

import (
	"bytes"
	"strings"
	"testing"
)

// The fuzz targets parse outside input (storage keys, queue messages, command
// lines) on every board size. Seeds live in testdata/fuzz/<FuzzName>/ and run
// with plain go test.

var fuzzBoards = []*Board{MustNew(4), MustNew(6), MustNew(8)}

func FuzzParseText(f *testing.F) {
	f.Add(MustNew(8).Start().Text())
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range fuzzBoards {
			p, err := b.ParseText(s)
			if err != nil {
				continue
			}
			if err := b.Valid(p); err != nil {
				t.Fatalf("ParseText(%q) accepted an invalid position: %v", s, err)
			}
			if p.Text() != s {
				t.Fatalf("ParseText(%q) = %v, which prints differently", s, p)
			}
			if q, err := b.DecodeKey(p.AppendKey(nil)); err != nil || q != p {
				t.Fatalf("binary round trip of %v = %v, %v", p, q, err)
			}
		}
	})
}

func FuzzDecodeKey(f *testing.F) {
	f.Add(MustNew(8).Start().AppendKey(nil))
	f.Fuzz(func(t *testing.T, k []byte) {
		for _, b := range fuzzBoards {
			p, err := b.DecodeKey(k)
			if err != nil {
				continue
			}
			if err := b.Valid(p); err != nil {
				t.Fatalf("DecodeKey(%x) accepted an invalid position: %v", k, err)
			}
			if !bytes.Equal(p.AppendKey(nil), k) {
				t.Fatalf("DecodeKey(%x) = %v, which encodes differently", k, p)
			}
			if q, err := b.ParseText(p.Text()); err != nil || q != p {
				t.Fatalf("text round trip of %v = %v, %v", p, q, err)
			}
		}
	})
}

func FuzzParseMoves(f *testing.F) {
	f.Add("f5d6c3d3c4")
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range fuzzBoards {
			p, err := b.ParseMoves(s)
			if err != nil {
				continue
			}
			if err := b.Valid(p); err != nil {
				t.Fatalf("ParseMoves(%q) reached an invalid position: %v", s, err)
			}
			// Every accepted token other than "pa" placed exactly one disc.
			tokens := strings.ReplaceAll(strings.ToLower(strings.Map(func(r rune) rune {
				if r == ' ' || r == ',' || r == '\t' || r == '\n' || r == '\r' {
					return -1
				}
				return r
			}, s)), "pa", "")
			if want := len(tokens) / 2; b.Ply(p) != want {
				t.Fatalf("ParseMoves(%q) reached ply %d, want %d", s, b.Ply(p), want)
			}
		}
	})
}

func FuzzParseSquare(f *testing.F) {
	f.Add("d4")
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range fuzzBoards {
			sq, err := b.ParseSquare(s)
			if err != nil {
				continue
			}
			if b.Mask()>>uint(sq)&1 == 0 {
				t.Fatalf("ParseSquare(%q) = %d, off the %dx%d board", s, sq, b.Size(), b.Size())
			}
			if name := b.SquareName(sq); name != strings.ToLower(s) {
				t.Fatalf("ParseSquare(%q) = %d, named %q", s, sq, name)
			}
		}
	})
}

func FuzzParseResult(f *testing.F) {
	f.Add("draw")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseResult(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("ParseResult(%q) = %v, which prints differently", s, r)
		}
	})
}
