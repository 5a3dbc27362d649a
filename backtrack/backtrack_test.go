package backtrack

import (
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

func TestDecide(t *testing.T) {
	b, w, d, u := board.BlackWins, board.WhiteWins, board.Draw, board.Unknown
	tests := []struct {
		name     string
		side     board.Color
		children int
		results  []board.Result
		want     board.Result
	}{
		{"one winning child decides at once", board.Black, 5, []board.Result{b}, b},
		{"white wins from one child", board.White, 3, []board.Result{d, w}, w},
		{"a loss alone is not enough", board.Black, 2, []board.Result{w}, u},
		{"all children lost", board.Black, 2, []board.Result{w, w}, w},
		{"all known, one draw", board.White, 3, []board.Result{b, d, b}, d},
		{"white loses everywhere", board.White, 2, []board.Result{b, b}, b},
		{"unknown children are not counted", board.Black, 2, []board.Result{w, u}, u},
		{"no children recorded", board.Black, 0, nil, u},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tl Tally
			for _, r := range tc.results {
				tl.Add(tc.side, Notice{Result: r})
			}
			if got := Decide(tc.side, tc.children, tl); got != tc.want {
				t.Errorf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTallyScore(t *testing.T) {
	s := func(b, w int) Score { return CountScore(b, w, 16) }
	d := DiffScore
	tests := []struct {
		name     string
		side     board.Color
		children int
		scores   []Score
		want     Score
	}{
		{"black takes the larger differential", board.Black, 3, []Score{s(3, 11), s(8, 6), s(7, 7)}, s(8, 6)},
		{"white takes the larger differential", board.White, 3, []Score{s(3, 11), s(8, 6), s(2, 12)}, s(2, 12)},
		// 10-5 is +6 (margin 5); 5-1 with 10 squares empty is +14 (margin 4).
		{"empty squares go to the winner", board.Black, 2, []Score{s(10, 5), s(5, 1)}, s(5, 1)},
		{"equal differentials: larger margin on the board", board.Black, 2, []Score{s(5, 3), s(6, 3)}, s(6, 3)},
		{"drawn both ways: more own discs", board.Black, 2, []Score{s(4, 4), s(5, 5)}, s(5, 5)},
		{"equal differentials: a final count first", board.White, 2, []Score{d(-10), s(3, 11)}, s(3, 11)},
		{"a solved child wins on its differential", board.White, 2, []Score{s(3, 11), d(-12)}, d(-12)},
		{"a child without a score leaves it unknown", board.Black, 2, []Score{s(9, 1), {}}, Score{}},
		{"missing children leave it unknown", board.White, 3, []Score{s(1, 9), s(2, 9)}, Score{}},
		{"a wipe-out counts", board.White, 1, []Score{s(0, 13)}, s(0, 13)},
		{"a draw is exact", board.Black, 2, []Score{d(0), d(-4)}, d(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][]Score{tc.scores, reversed(tc.scores)} {
				var tl Tally
				for _, sc := range order {
					tl.Add(tc.side, Notice{Result: board.Draw, Score: sc})
				}
				if got := tl.Score(tc.children); got != tc.want {
					t.Errorf("Score = %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

func reversed(s []Score) []Score {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func TestScores(t *testing.T) {
	b := board.MustNew(4)
	if got := TerminalScore(b, b.Start()); got != (Score{Diff: 0, Exact: true, Black: 2, White: 2}) {
		t.Errorf("TerminalScore(start) = %+v, want 2-2, a draw", got)
	}
	// docs/reference.md: the 4x4 game ends 3-11 with two squares empty,
	// a score of -10.
	if got := CountScore(3, 11, 16); got.Diff != -10 || got.Result() != board.WhiteWins {
		t.Errorf("3-11 on 4x4: %+v, want -10, white", got)
	}
	if got := CountScore(33, 30, 64); got.Diff != 4 || got.Result() != board.BlackWins {
		t.Errorf("33-30 on 8x8: %+v, want +4", got)
	}
	if got := (Score{}).Result(); got != board.Unknown {
		t.Errorf("unknown score: result %v", got)
	}
}

func TestResultsRoundTrip(t *testing.T) {
	var words []uint16
	var want []Notice
	for r := board.Unknown; r <= board.Draw; r++ {
		for _, sc := range []Score{{}, CountScore(64, 0, 64), CountScore(0, 64, 64), CountScore(3, 11, 64), CountScore(33, 31, 64),
			DiffScore(0), DiffScore(64), DiffScore(-64), DiffScore(-10),
			BoundsScore(0, 64), BoundsScore(-64, 64), BoundsScore(-64, -62), BoundsScore(-8, 30), BoundsScore(62, 64)} {
			words = append(words, Word(r, sc))
			want = append(want, Notice{Result: r, Score: sc})
		}
	}
	got, err := packed.DecodeResults(nil, packed.EncodeResults(words))
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d results back of %d: %v", len(got), len(want), err)
	}
	for i, w := range want {
		if r, sc := FromWord(got[i], 64); r != w.Result || sc != w.Score {
			t.Errorf("entry %d: %v %+v, want %v %+v", i, r, sc, w.Result, w.Score)
		}
	}
}

func TestNoticesRoundTrip(t *testing.T) {
	ns := []Notice{
		{Index: 0, Result: board.BlackWins},
		{Index: 0, Result: board.Draw, Score: CountScore(32, 32, 64)},
		{Index: 7, Result: board.WhiteWins, Score: CountScore(0, 16, 64)},
		{Index: 8, Result: board.WhiteWins, Score: DiffScore(-18)},
		{Index: 9, Result: board.Unknown, Score: BoundsScore(-64, 0)},
		{Index: 10, Result: board.BlackWins, Score: BoundsScore(4, 10)},
		{Index: 1 << 20, Result: board.Draw},
		{Index: 0xffffffff, Result: board.BlackWins, Score: CountScore(40, 24, 64)},
	}
	payload := AppendNotices(nil, ns)
	var got []Notice
	if err := DecodeNotices(payload, 64, func(n Notice) { got = append(got, n) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, ns) {
		t.Errorf("decoded %+v, want %+v", got, ns)
	}
}

func TestDecodeNoticesRejectsMalformed(t *testing.T) {
	for name, b := range map[string][]byte{
		"truncated varint":      {0x80},
		"missing result":        {0x01},
		"result out of range":   {0x00, 0x04},
		"missing score bytes":   {0x00, 0x81, 0x03},
		"score of no board":     {0x00, 0x81, 0xff, 0x3f},
		"flagged unknown score": {0x00, 0x81, 0x00, 0x00},
		"index overflows u32":   {0xff, 0xff, 0xff, 0xff, 0x1f, 0x01},
		"flagged unknown byte":  {0x00, 0x7f},
	} {
		if err := DecodeNotices(b, 64, func(Notice) {}); err == nil {
			t.Errorf("%s: no error for % x", name, b)
		}
	}
}

// FuzzDecodeNotices: notice rows come from storage, so any bytes must give
// an error or notices that encode back to the same payload.
func FuzzDecodeNotices(f *testing.F) {
	f.Add(AppendNotices(nil, []Notice{{Index: 3, Result: board.Draw, Score: CountScore(1, 2, 64)}, {Index: 9, Result: board.BlackWins, Score: DiffScore(6)}}))
	f.Add([]byte{0x00, 0x81})
	f.Fuzz(func(t *testing.T, b []byte) {
		var ns []Notice
		if err := DecodeNotices(b, 64, func(n Notice) { ns = append(ns, n) }); err != nil {
			return
		}
		var again []Notice
		if err := DecodeNotices(AppendNotices(nil, ns), 64, func(n Notice) { again = append(again, n) }); err != nil {
			t.Fatalf("re-encoded notices do not decode: %v", err)
		}
		if !slices.Equal(ns, again) {
			t.Fatalf("round trip changed %+v into %+v", ns, again)
		}
	})
}
