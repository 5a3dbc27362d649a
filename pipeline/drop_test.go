package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// TestDropAfterACrashAtEveryCall: a Drop of a seeded run (three queue
// shards, tables on two accounts) that dies at any of its storage calls,
// before or after the call is performed, can be made again on the run
// reopened, and leaves nothing; or, if it died past the drop of the
// table that holds the run's configuration (the last), the run is gone
// already and nothing is left either.
func TestDropAfterACrashAtEveryCall(t *testing.T) {
	ctx := context.Background()
	cfg := RunConfig{Name: "dropped", Config: runstore.Config{Board: 4, Target: 6, QueueShards: 3, Accounts: 2}}
	seeded := func() storage.Backend {
		be := teststore.Embedded(t)
		if _, err := Seed(ctx, be, cfg); err != nil {
			t.Fatal(err)
		}
		return be
	}
	// The calls of a Drop that does not die.
	be := seeded()
	counter := faulty.New(be, faulty.Config{})
	r, err := OpenRun(ctx, counter, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	opened := counter.Calls()
	if err := r.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	calls := counter.Calls() - opened
	if left, err := Remains(ctx, be, r.Config); err != nil || len(left) > 0 {
		t.Fatalf("%v left after a Drop (%v)", left, err)
	}
	if calls < 11 {
		t.Fatalf("a Drop made %d calls, want one for each of its 3+3 queue shards, poison queue, container and 4 tables", calls)
	}
	for k := int64(1); k <= calls; k++ {
		for _, mode := range []faulty.Mode{faulty.CrashBefore, faulty.CrashAfter} {
			be := seeded()
			dying := faulty.New(be, faulty.Config{Mode: mode, At: opened + k})
			r, err := OpenRun(ctx, dying, cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Drop(ctx); !errors.Is(err, faulty.ErrCrashed) {
				t.Fatalf("%s at call %d of the Drop: %v, want the crash", mode, k, err)
			}
			again, err := OpenRun(ctx, be, cfg.Name)
			switch {
			case errors.Is(err, ErrNoRun):
				if k < calls-1 {
					t.Errorf("%s at call %d of %d: the run's configuration went before the rest", mode, k, calls)
				}
			case err != nil:
				t.Fatalf("%s at call %d: reopening: %v", mode, k, err)
			default:
				if err := again.Drop(ctx); err != nil {
					t.Fatalf("%s at call %d: dropping again: %v", mode, k, err)
				}
			}
			if left, err := Remains(ctx, be, r.Config); err != nil || len(left) > 0 {
				t.Errorf("%s at call %d of the Drop, then dropped again: %v left (%v)", mode, k, left, err)
			}
		}
	}
}
