// Package message is the work queue's language: the kinds of work
// message, their text form, and the parser that validates a message
// before any handler sees it.
package message

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// Kind is a work message's kind, its first character.
type Kind byte

// Message kinds. A and C follow the article; the others are ours.
const (
	KindInline       Kind = 'A' // A<ply>-<key>,<key>,...: a whole small ply, inline
	KindChunk        Kind = 'C' // C<ply>-<index>-<blob>: expand one final blob of a ply
	KindScan         Kind = 'S' // S<ply>[-<node>]: enqueue a ply's undone merge work (node 0, or one node of the scans' tree), or complete the ply
	KindCombine      Kind = 'G' // G<ply>-<index>: combine one group's segments of one range of buckets
	KindMerge        Kind = 'M' // M<ply>-<bucket>: merge one bucket of a ply into final blobs
	KindResolve      Kind = 'R' // R<ply>-<index>[-<blob>]: decide the results of one final blob (named, or read from its row)
	KindCompensation Kind = 'X' // X<ply>-<blob>: delete the blob (or a merge attempt's outputs) unless a record made it live
	KindDispatch     Kind = 'D' // D<ply>-<from>-<to>: dispatch leaves [from, to) of a Final ply
	KindBack         Kind = 'B' // B<ply>-<from>-<to>: enqueue the previous ply's resolution, leaves [from, to) of a Resolved ply
)

func (k Kind) String() string {
	switch k {
	case KindInline:
		return "inline"
	case KindChunk:
		return "chunk"
	case KindScan:
		return "scan"
	case KindCombine:
		return "combine"
	case KindMerge:
		return "merge"
	case KindResolve:
		return "resolve"
	case KindCompensation:
		return "compensation"
	case KindDispatch:
		return "dispatch"
	case KindBack:
		return "back"
	}
	return "unknown"
}

// InlineLimit is the article's limit for a ply that travels inline in one
// A message.
const InlineLimit = 1000

// Message is a parsed work message.
type Message struct {
	Kind      Kind
	Ply       int
	Positions []board.Position // A
	Index     int              // C, R: a final blob; M: a bucket; G: a combine task; D, B: the first leaf; S: a node of the scans' tree
	End       int              // D, B: the end of the leaves [Index, End) (runstore.Dispatch)
	Blob      string           // C, X; R when it names its final blob
}

// ErrBadMessage marks a message that can never be handled; it goes to the
// poison queue at once.
//
// A well-formed message naming something that does not exist is bad only
// where no redelivery can name it:
//   - any message naming a ply that has no record, or one past the run's
//     target: a ply's record exists before any of its messages is sent;
//   - C naming other than the ply's j-th final blob: final blobs never
//     change once their ply is complete;
//   - R naming a blob index the ply lacks, or arriving before the next ply
//     is resolved: R messages are sent only after that; R naming its
//     final blob outside the ply's folder (the name itself is the one
//     its row gives: the leaf that sends R reads the rows);
//   - M naming a bucket the ply lacks: a ply's bucket count is fixed
//     with its record;
//   - C and X naming a blob outside their ply's folder;
//   - D naming leaves the ply's dispatch lacks, or arriving before the
//     ply is Final, and B likewise for the back stage and Resolved: a
//     ply's leaves are fixed once it is Final, and the messages are sent
//     only after.
//
// These finish quietly instead, as redeliveries do: M naming a bucket
// already merged, and X naming a blob that is gone (an earlier delivery
// deleted it, or the writer died before uploading it).
var ErrBadMessage = errors.New("bad message")

// Badf makes an ErrBadMessage error that says what is wrong.
func Badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadMessage}, args...)...)
}

// Format renders a message.
func (m Message) Format() string {
	var b strings.Builder
	b.WriteByte(byte(m.Kind))
	fmt.Fprintf(&b, "%02d", m.Ply)
	switch m.Kind {
	case KindInline:
		b.WriteByte('-')
		for i, p := range m.Positions {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.Text())
		}
	case KindChunk:
		fmt.Fprintf(&b, "-%d-%s", m.Index, m.Blob)
	case KindResolve:
		fmt.Fprintf(&b, "-%d", m.Index)
		if m.Blob != "" {
			b.WriteString("-" + m.Blob)
		}
	case KindCombine, KindMerge:
		fmt.Fprintf(&b, "-%d", m.Index)
	case KindScan:
		if m.Index > 0 {
			fmt.Fprintf(&b, "-%d", m.Index)
		}
	case KindDispatch, KindBack:
		fmt.Fprintf(&b, "-%d-%d", m.Index, m.End)
	case KindCompensation:
		b.WriteString("-" + m.Blob)
	}
	return b.String()
}

// Origin is where a run's plies count from: its board and its start
// position (the board's usual start, or any other a run is seeded with).
// Ply n of the run holds the positions with n more discs than the start.
type Origin struct {
	Board *board.Board
	Start board.Position
}

// StandardOrigin counts plies from the board's usual start.
func StandardOrigin(b *board.Board) Origin { return Origin{Board: b, Start: b.Start()} }

// Ply is the run's ply of a position: discs placed since the start.
func (o Origin) Ply(p board.Position) int { return p.Discs() - o.Start.Discs() }

// LastPly is the ply of a full board: no game from the start goes further.
func (o Origin) LastPly() int { return o.Board.Size()*o.Board.Size() - o.Start.Discs() }

// ParseMessage parses and validates a work message of a run that starts
// at o. It never panics; every error wraps ErrBadMessage and says what is
// wrong.
func ParseMessage(o Origin, text string) (Message, error) {
	b := o.Board
	if len(text) > storage.MaxMessageBytes {
		return Message{}, Badf("message of %d bytes is over the 64 KiB limit", len(text))
	}
	if !utf8.ValidString(text) {
		return Message{}, Badf("message %q is not valid UTF-8 text", Clip(text))
	}
	if len(text) < 3 {
		return Message{}, Badf("message %q is too short", Clip(text))
	}
	m := Message{Kind: Kind(text[0])}
	ply, err := strconv.Atoi(text[1:3])
	if err != nil || text[1] < '0' || text[1] > '9' || text[2] < '0' || text[2] > '9' {
		return Message{}, Badf("message %q: the ply must be two digits", Clip(text))
	}
	m.Ply = ply
	if ply > o.LastPly() {
		return Message{}, Badf("message %q: ply %d is past the end of a %dx%d game", Clip(text), ply, b.Size(), b.Size())
	}
	rest := text[3:]
	switch m.Kind {
	case KindScan:
		// Node 0, the scan every release sends, is S<ply>; a node past
		// it (runstore.MessagesScanNodes) is S<ply>-<node>.
		if rest == "" {
			return m, nil
		}
		n, err := index(strings.TrimPrefix(rest, "-"))
		if !strings.HasPrefix(rest, "-") || err != nil || n == 0 {
			return Message{}, Badf("scan message %q: expected S<ply> or S<ply>-<node> with a node from 1", Clip(text))
		}
		m.Index = n
		return m, nil
	case KindInline, KindChunk, KindCombine, KindMerge, KindResolve, KindCompensation, KindDispatch, KindBack:
	default:
		return Message{}, Badf("message %q: unknown kind %q", Clip(text), text[0])
	}
	if !strings.HasPrefix(rest, "-") {
		return Message{}, Badf("message %q: expected '-' after the ply", Clip(text))
	}
	rest = rest[1:]
	switch m.Kind {
	case KindInline:
		if rest == "" {
			return Message{}, Badf("inline message %q holds no positions", Clip(text))
		}
		parts := strings.Split(rest, ",")
		if len(parts) > InlineLimit {
			return Message{}, Badf("inline message holds %d positions, over the limit of %d", len(parts), InlineLimit)
		}
		m.Positions = make([]board.Position, len(parts))
		for i, s := range parts {
			p, err := b.ParseText(s)
			if err != nil {
				return Message{}, Badf("inline message position %d: %v", i, err)
			}
			if o.Ply(p) != ply {
				return Message{}, Badf("inline message position %d has %d discs, not ply %d", i, p.Discs(), ply)
			}
			m.Positions[i] = p
		}
	case KindChunk:
		idx, blob, ok := strings.Cut(rest, "-")
		n, err := index(idx)
		if !ok || err != nil {
			return Message{}, Badf("chunk message %q: expected C<ply>-<index>-<blob>", Clip(text))
		}
		if err := validPlyBlob(ply, blob); err != nil {
			return Message{}, Badf("chunk message %q: %v", Clip(text), err)
		}
		m.Index, m.Blob = n, blob
	case KindResolve:
		// Releases before the blob was named send R<ply>-<index>; the
		// handler then reads the final blob's row.
		idx, blob, named := strings.Cut(rest, "-")
		n, err := index(idx)
		if err != nil {
			return Message{}, Badf("resolve message %q: expected R<ply>-<index>[-<blob>]", Clip(text))
		}
		if named {
			if err := validPlyBlob(ply, blob); err != nil {
				return Message{}, Badf("resolve message %q: %v", Clip(text), err)
			}
		}
		m.Index, m.Blob = n, blob
	case KindMerge, KindCombine:
		n, err := index(rest)
		if err != nil {
			return Message{}, Badf("%s message %q: expected %c<ply>-<index>", m.Kind, Clip(text), m.Kind)
		}
		m.Index = n
	case KindDispatch, KindBack:
		from, to, ok := strings.Cut(rest, "-")
		lo, err1 := index(from)
		hi, err2 := index(to)
		if !ok || err1 != nil || err2 != nil || lo >= hi {
			return Message{}, Badf("%s message %q: expected %c<ply>-<from>-<to> with from below to", m.Kind, Clip(text), m.Kind)
		}
		m.Index, m.End = lo, hi
	case KindCompensation:
		// The handler decides liveness from this ply's records, so a
		// blob of another ply would look orphaned and be deleted.
		if err := validPlyBlob(ply, rest); err != nil {
			return Message{}, Badf("compensation message %q: %v", Clip(text), err)
		}
		m.Blob = rest
	}
	return m, nil
}

// index parses an item's index: decimal digits, at most 1<<30.
func index(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("%q is no index", s)
	}
	return n, nil
}

// validPlyBlob checks a blob name that must lie in a ply's folder.
func validPlyBlob(ply int, name string) error {
	if err := storage.ValidBlobName(name); err != nil {
		return err
	}
	if dir := runstore.PlyFolder(ply); !strings.HasPrefix(name, dir) {
		return fmt.Errorf("blob %q is not in ply %d's folder %s", Clip(name), ply, dir)
	}
	return nil
}

// Clip shortens text for logs and errors.
func Clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
