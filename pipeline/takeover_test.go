package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// ownerBackend kills the follow-up of one ply's transition into one
// state: the storage call that makes the transition takes effect, then
// fails, as if its worker died; the owner's message is then poisoned on
// its next delivery, and the test clock jumps past the owner's lease.
type ownerBackend struct {
	storage.Backend
	ply   int
	state runstore.State
	store *runstore.Store // reads the ply record past the interference
	clock *jumpClock

	mu       sync.Mutex
	owner    string // the owner whose follow-up was killed
	poisoned string // the text of its message, once poisoned
}

func (b *ownerBackend) Queue(name string) storage.Queue {
	return onWork(name, b.Backend.Queue(name), func(q storage.Queue) storage.Queue { return ownerQueue{q, b} })
}

func (b *ownerBackend) Table(name string) storage.Table {
	t := b.Backend.Table(name)
	if strings.HasSuffix(name, "state") {
		return ownerTable{t, b}
	}
	return t
}

type ownerTable struct {
	storage.Table
	b *ownerBackend
}

// Transact fails the transaction that made the transition, once, after it
// took effect.
func (t ownerTable) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	etags, err := t.Table.Transact(ctx, pk, ops)
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil || b.owner != "" {
		return etags, err
	}
	p, perr := b.store.Ply(ctx, b.ply)
	if perr != nil || p.State != b.state {
		return etags, err
	}
	b.owner = p.Owner
	return nil, errors.New("the worker died after making the transition")
}

type ownerQueue struct {
	storage.Queue
	b *ownerBackend
}

// Dequeue poisons the killed owner's message on its next delivery, and
// moves the clock past its lease.
func (q ownerQueue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	msgs, err := q.Queue.Dequeue(ctx, max, visibility)
	b := q.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range msgs {
		if b.owner != "" && b.poisoned == "" && (&task.Task{Msg: msgs[i]}).Owner() == b.owner {
			b.poisoned = msgs[i].Text
			msgs[i].DequeueCount = 99
			b.clock.Arm(0, time.Hour)
		}
	}
	return msgs, err
}

// TestFollowUpTakenOver kills the follow-up of a ply's owned transition
// into Final (sweep and dispatch) or Resolved (the previous ply's
// resolution), and poisons the message that owns it, so that no
// redelivery will ever finish it. Once the owner's lease has run out, the
// stall nudge's scan takes the follow-up over, and the run completes
// exactly, with nothing left behind but the poisoned message.
func TestFollowUpTakenOver(t *testing.T) {
	for _, state := range []runstore.State{runstore.Final, runstore.Resolved} {
		t.Run(state.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			clock := &jumpClock{}
			wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, PollMax: 50 * time.Millisecond, Clock: clock}
			cfg := RunConfig{Name: "owner", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 1}}}
			inner := teststore.Embedded(t)
			r, err := newRun(inner, cfg.WithDefaults())
			if err != nil {
				t.Fatal(err)
			}
			be := &ownerBackend{Backend: inner, ply: 5, state: state, store: r.store, clock: clock}
			rep, err := RunLocal(ctx, be, cfg, 2, wcfg, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if be.poisoned == "" {
				t.Fatalf("the owner of ply 5's follow-up as it became %s was never poisoned", state)
			}
			checkReport4x4(t, rep, cfg.Target)
			settle(t, ctx, r, wcfg)
			got, _ := auditLines(t, ctx, r)
			want := []string{fmt.Sprintf("error: poison queue: message %q: dequeued 99 times, more than the limit of 5", be.poisoned)}
			if !slices.Equal(got, want) {
				t.Errorf("audit %q, want %q", got, want)
			}
		})
	}
}
