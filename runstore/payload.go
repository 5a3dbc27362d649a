package runstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
)

// Payloads (backtracking sources and notices) are byte strings of any
// length, stored as rows of up to payloadProps binary properties of up to
// payloadPropBytes each. The sizes keep a row under 1 MiB and a
// transaction of payloadRowsPerBatch rows under 4 MiB once Azure has
// base64-encoded them.
const (
	payloadPropBytes    = 60000
	payloadProps        = 11
	payloadRowsPerBatch = 3
)

func payloadPropName(i int) string { return fmt.Sprintf("d%02d", i) }

// splitPayload cuts a payload into row property maps; an empty payload is
// one empty row, so that its presence still says it was written.
func splitPayload(payload []byte) []map[string]any {
	var rows []map[string]any
	for len(payload) > 0 || len(rows) == 0 {
		row := map[string]any{}
		for p := 0; p < payloadProps && len(payload) > 0; p++ {
			n := min(payloadPropBytes, len(payload))
			row[payloadPropName(p)] = payload[:n]
			payload = payload[n:]
		}
		rows = append(rows, row)
	}
	return rows
}

// appendRowParts appends one row's payload properties, in order, to
// parts; a payload is its rows' parts concatenated.
func appendRowParts(parts [][]byte, e storage.Entity) ([][]byte, error) {
	for p := 0; p < payloadProps; p++ {
		name := payloadPropName(p)
		if _, ok := e.Props[name]; !ok {
			break
		}
		b, err := storage.PropBytes(e, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		parts = append(parts, b)
	}
	return parts, nil
}

// PayloadBatches is the transactions that storing a payload of n bytes
// takes (PutSources, PutNotices): a batch of up to payloadRowsPerBatch
// of the rows splitPayload cuts it into, one at least.
func PayloadBatches(n int) int {
	rowBytes := payloadPropBytes * payloadProps
	rows := max(1, (n+rowBytes-1)/rowBytes)
	return (rows + payloadRowsPerBatch - 1) / payloadRowsPerBatch
}

// putPayload upserts a payload's rows under rowKey(i) in partition pk.
func (s *Store) putPayload(ctx context.Context, pk string, payload []byte, rowKey func(int) string) error {
	return s.putPayloads(ctx, pk, payloadPart{payload, rowKey})
}

// payloadPart is one payload of a partition and the keys of its rows.
type payloadPart struct {
	payload []byte
	rowKey  func(int) string
}

// putPayloads upserts the rows of payloads of one partition, in batches
// of payloadRowsPerBatch that may hold rows of more than one.
func (s *Store) putPayloads(ctx context.Context, pk string, parts ...payloadPart) error {
	var ops []storage.Op
	for _, part := range parts {
		for i, row := range splitPayload(part.payload) {
			ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: part.rowKey(i), Props: row}})
		}
	}
	for lo := 0; lo < len(ops); lo += payloadRowsPerBatch {
		if _, err := s.back(pk).Transact(ctx, pk, ops[lo:min(len(ops), lo+payloadRowsPerBatch)]); err != nil {
			return err
		}
	}
	return nil
}

// readPayloads reads the rows of a partition in key order and joins
// them into payloads: rows whose keys share the prefix before the first
// '-' (or the whole partition, when keys hold none) form one payload.
func (s *Store) readPayloads(ctx context.Context, pk string) ([][]byte, error) {
	_, out, err := s.readPayloadGroups(ctx, pk)
	return out, err
}

// payloadGroup is the payload that a row keyed rowKey is part of: its
// key's prefix before the first '-'. A key without a hyphen numbers a
// row of the partition's one payload, "".
func payloadGroup(rowKey string) string {
	g, _, ok := strings.Cut(rowKey, "-")
	if !ok {
		return ""
	}
	return g
}

// readPayloadGroups is readPayloads, with each payload's key prefix.
func (s *Store) readPayloadGroups(ctx context.Context, pk string) ([]string, [][]byte, error) {
	es, err := queryAll(ctx, s.back, pk, "", "")
	if err != nil {
		return nil, nil, err
	}
	var groups []string
	var out [][]byte
	var parts [][]byte // of the payload being read
	for i, e := range es {
		if parts, err = appendRowParts(parts, e); err != nil {
			return nil, nil, err
		}
		g := payloadGroup(e.RowKey)
		if i+1 < len(es) && payloadGroup(es[i+1].RowKey) == g {
			continue
		}
		// The payload's last row: joined once whole, since a final
		// blob's rows come to megabytes, which growing by appends
		// copied and cleared again and again.
		groups = append(groups, g)
		out = append(out, slices.Concat(parts...))
		parts = parts[:0]
	}
	return groups, out, nil
}

// PutSources stores the backtracking sources of one final blob: for each
// of its positions in order, the parents that lead to it; and, unless
// terminals is nil, the blob's terminal list (packed.TerminalList)
// beside them, in the same partition and, where the rows fit, the same
// transaction. The rows are upserts under keys derived from the blob, so
// a retry overwrites them.
func (s *Store) PutSources(ctx context.Context, blob string, payload, terminals []byte) error {
	parts := []payloadPart{{payload, rkPayloadRow}}
	if terminals != nil {
		parts = append(parts, payloadPart{terminals, rkTerminalsRow})
	}
	if err := s.putPayloads(ctx, pkSources(blob), parts...); err != nil {
		return fmt.Errorf("writing backtracking rows of %s: %w", blob, err)
	}
	return nil
}

// Sources reads the backtracking sources of one final blob.
func (s *Store) Sources(ctx context.Context, blob string) ([]byte, error) {
	payload, _, err := s.SourcesAndTerminals(ctx, blob)
	return payload, err
}

// SourcesAndTerminals reads the backtracking sources of one final blob,
// and its terminal list: nil when its merge wrote none (a merge of a
// release before the lists, which wrote them at a target ply only, or
// none).
// Either is nil only when its rows are absent, empty when they are
// written but empty, so the caller can tell a blob without rows. One
// query reads both.
func (s *Store) SourcesAndTerminals(ctx context.Context, blob string) (payload, terminals []byte, err error) {
	groups, ps, err := s.readPayloadGroups(ctx, pkSources(blob))
	if err != nil {
		return nil, nil, fmt.Errorf("reading backtracking rows of %s: %w", blob, err)
	}
	for i, g := range groups {
		switch g {
		case "":
			if payload = ps[i]; payload == nil {
				payload = []byte{} // written, though empty
			}
		case terminalsGroup:
			if terminals = ps[i]; terminals == nil {
				terminals = []byte{} // written, though empty
			}
		}
	}
	return payload, terminals, nil
}

// HasSources reports whether a final blob has backtracking rows.
func (s *Store) HasSources(ctx context.Context, blob string) (bool, error) {
	page, err := s.back(pkSources(blob)).Query(ctx, pkSources(blob), storage.QueryOptions{Limit: 1})
	if err != nil {
		return false, fmt.Errorf("reading backtracking rows of %s: %w", blob, err)
	}
	return len(page.Entities) > 0 || page.Next != "", nil
}

// DeleteSources deletes the backtracking rows of an orphaned blob.
func (s *Store) DeleteSources(ctx context.Context, blob string) error {
	pk := pkSources(blob)
	es, err := queryAll(ctx, s.back, pk, "", "")
	if err != nil {
		return err
	}
	ops := make([]storage.Op, len(es))
	for i, e := range es {
		ops[i] = storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: e.RowKey}, ETag: storage.AnyETag}
	}
	if err := transactAll(ctx, s.back, pk, ops); err != nil {
		return fmt.Errorf("deleting backtracking rows of %s: %w", blob, err)
	}
	return nil
}

// PutNotices stores what final blob child of ply reports to final blob
// parent of ply-1: one payload, under keys derived from the child, so a
// retry overwrites instead of adding.
func (s *Store) PutNotices(ctx context.Context, ply, child, parent int, payload []byte) error {
	rk := func(row int) string { return rkNotice(child, row) }
	if err := s.putPayload(ctx, pkNotices(ply-1, parent), payload, rk); err != nil {
		return fmt.Errorf("sending notices to ply %d blob %d: %w", ply-1, parent, err)
	}
	return nil
}

// NoticesFrom reads the notice payloads sent to final blob index of ply
// by each child blob that sent any, by the child blob's index. Read
// while the child ply is being resolved (the solve modes root and wld
// do), a payload of several rows may be half written: a caller must
// take one that does not decode as no news.
func (s *Store) NoticesFrom(ctx context.Context, ply, index int) (map[int][]byte, error) {
	groups, ps, err := s.readPayloadGroups(ctx, pkNotices(ply, index))
	if err != nil {
		return nil, fmt.Errorf("reading notices of ply %d blob %d: %w", ply, index, err)
	}
	out := make(map[int][]byte, len(ps))
	for i, g := range groups {
		child, ok := parseIndex(g, indexWidth)
		if !ok {
			return nil, fmt.Errorf("notices of ply %d blob %d: row key %q names no child blob", ply, index, g)
		}
		out[child] = ps[i]
	}
	return out, nil
}

// Notices reads the notice payloads sent to final blob index of ply, one
// per child blob that sent any.
func (s *Store) Notices(ctx context.Context, ply, index int) ([][]byte, error) {
	b, err := s.readPayloads(ctx, pkNotices(ply, index))
	if err != nil {
		return nil, fmt.Errorf("reading notices of ply %d blob %d: %w", ply, index, err)
	}
	return b, nil
}
