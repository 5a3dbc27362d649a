package embedded

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// stateFile is where a persistent backend keeps its queues, tables and
// blob index between processes; the blob data stays in its files.
const stateFile = "embedded-state.gob"

// snapshot is a persistent backend's state as Close saves it. Times are
// wall-clock, since each process has its own monotonic epoch.
type snapshot struct {
	Version    int
	Saved      time.Time
	Seq        uint64
	Queues     map[string]snapQueue
	Tables     map[string]map[string][]snapRow // table, partition, rows
	Containers map[string]snapContainer
}

const snapshotVersion = 1

type snapQueue struct {
	Seq      uint64
	Messages []snapMessage
}

type snapMessage struct {
	ID, Text, Receipt string
	Dequeues          int64
	Inserted          time.Time
	VisibleAt         time.Time
	Expires           time.Time // zero: never
	Seq               uint64
}

type snapRow struct {
	Key   string
	Props map[string]any
	ETag  string
}

type snapContainer struct {
	Dir   string // relative to the backend's directory
	Blobs []snapBlob
}

type snapBlob struct {
	Name string
	Path string // relative to the backend's directory
	Size int64
}

// save writes the backend's state to its directory. It runs from Close,
// after the backend stopped taking calls; blobs held in memory are written
// to files first, so the snapshot names only files.
func (b *Backend) save() error {
	s := snapshot{Version: snapshotVersion, Saved: time.Now(), Queues: map[string]snapQueue{},
		Tables: map[string]map[string][]snapRow{}, Containers: map[string]snapContainer{}}
	var err error
	b.queues.Range(func(k, v any) bool {
		q := v.(*queue)
		q.mu.Lock()
		defer q.mu.Unlock()
		sq := snapQueue{Seq: q.seq}
		for _, m := range q.heap {
			sm := snapMessage{ID: m.id, Text: m.text, Receipt: m.receipt, Dequeues: m.dequeues,
				Inserted: b.wall(m.inserted), VisibleAt: b.wall(m.visibleAt), Seq: m.seq}
			if m.expires != never {
				sm.Expires = b.wall(m.expires)
			}
			sq.Messages = append(sq.Messages, sm)
		}
		s.Queues[k.(string)] = sq
		return true
	})
	b.tables.Range(func(k, v any) bool {
		t := v.(*table)
		t.mu.RLock()
		defer t.mu.RUnlock()
		parts := map[string][]snapRow{}
		for pk, p := range t.parts {
			p.mu.RLock()
			rows := make([]snapRow, 0, len(p.rows))
			p.keys.ascend("", func(rk string) bool {
				r := p.rows[rk]
				rows = append(rows, snapRow{Key: rk, Props: r.props, ETag: r.etag})
				return true
			})
			p.mu.RUnlock()
			if len(rows) > 0 {
				parts[pk] = rows
			}
		}
		s.Tables[k.(string)] = parts
		return true
	})
	b.containers.Range(func(k, v any) bool {
		c := v.(*container)
		c.mu.Lock()
		defer c.mu.Unlock()
		sc := snapContainer{Dir: c.dir}
		for name, bl := range c.blobs {
			if bl.path == "" {
				path := b.newBlobPath(c.dir)
				if err = os.WriteFile(path, bl.data, 0o600); err != nil {
					return false
				}
				b.memUsed.Add(-bl.size)
				bl = blob{path: path, size: bl.size}
				c.blobs[name] = bl
			}
			sc.Blobs = append(sc.Blobs, snapBlob{Name: name, Path: bl.path, Size: bl.size})
		}
		s.Containers[k.(string)] = sc
		return true
	})
	if err != nil {
		return fmt.Errorf("embedded: saving blobs held in memory: %w", err)
	}
	s.Seq = b.seq.Load()
	for name, sc := range s.Containers {
		if sc.Dir, err = filepath.Rel(b.root, sc.Dir); err != nil {
			return fmt.Errorf("embedded: container %s: %w", name, err)
		}
		for i := range sc.Blobs {
			if sc.Blobs[i].Path, err = filepath.Rel(b.root, sc.Blobs[i].Path); err != nil {
				return fmt.Errorf("embedded: blob %s/%s: %w", name, sc.Blobs[i].Name, err)
			}
		}
		s.Containers[name] = sc
	}
	return writeAtomically(filepath.Join(b.root, stateFile), func(w *bufio.Writer) error { return gob.NewEncoder(w).Encode(&s) })
}

// writeAtomically writes a file through a temporary one and a rename, so
// a crash leaves the old state or the new, never part of one.
func writeAtomically(path string, write func(*bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("embedded: saving state: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("embedded: saving state: %w", err)
	}
	return nil
}

// load restores what an earlier Close saved in the backend's directory; a
// directory without saved state starts empty.
func (b *Backend) load() error {
	f, err := os.Open(filepath.Join(b.root, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded: loading state: %w", err)
	}
	defer f.Close()
	var s snapshot
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&s); err != nil {
		return fmt.Errorf("embedded: loading state from %s: %w", f.Name(), err)
	}
	if s.Version != snapshotVersion {
		return fmt.Errorf("embedded: state in %s has version %d, want %d", f.Name(), s.Version, snapshotVersion)
	}
	b.seq.Store(s.Seq)
	since := func(t time.Time) time.Duration { return t.Sub(b.epoch) }
	for name, sq := range s.Queues {
		q := newQueue()
		q.seq = sq.Seq
		for _, sm := range sq.Messages {
			m := &message{id: sm.ID, text: sm.Text, receipt: sm.Receipt, dequeues: sm.Dequeues,
				inserted: since(sm.Inserted), visibleAt: since(sm.VisibleAt), expires: never, seq: sm.Seq}
			if !sm.Expires.IsZero() {
				m.expires = since(sm.Expires)
			}
			q.byID[m.id] = m
			q.push(m)
			q.minExpires = min(q.minExpires, m.expires)
		}
		b.queues.Store(name, q)
	}
	for name, parts := range s.Tables {
		t := &table{parts: map[string]*partition{}}
		for pk, rows := range parts {
			p := &partition{rows: make(map[string]*row, len(rows))}
			for _, r := range rows {
				p.rows[r.Key] = &row{props: r.Props, etag: r.ETag}
				p.keys.insert(r.Key)
			}
			t.parts[pk] = p
		}
		b.tables.Store(name, t)
	}
	for name, sc := range s.Containers {
		c := &container{dir: filepath.Join(b.root, sc.Dir), blobs: make(map[string]blob, len(sc.Blobs))}
		for _, sb := range sc.Blobs {
			c.blobs[sb.Name] = blob{path: filepath.Join(b.root, sb.Path), size: sb.Size}
			c.names.insert(sb.Name)
		}
		b.containers.Store(name, c)
	}
	return nil
}
