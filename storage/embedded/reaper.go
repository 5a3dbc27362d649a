package embedded

import (
	"os"
	"sync"
)

// reaperQueue is how many unlinks may wait for the reaper; past it a
// caller unlinks its file itself.
const reaperQueue = 4096

// reaper unlinks the files of blob versions that were deleted or
// replaced, in the background. A version's file is unreachable once the
// store's entry for it is gone (committed, and durable under
// SurvivePowerLoss) and any reader that opened it keeps its data, so
// nothing waits on the unlink, which can hold a caller for milliseconds
// on the disk: freeing a large file's extents reads the file system's
// metadata back. A pipeline's sweep deletes a ply's expansion runs,
// 20 GB in 1,759 files at 8x8 ply 14, as its workers resolve the ply.
//
// Invariants:
//   - a path is queued only after the entry that named it is committed;
//   - a file not yet unlinked when the process dies is named by no entry,
//     so the next Open removes it (openContainer); an unlink that fails
//     leaves the file to that Open likewise;
//   - Backend.Close stops the reaper after the calls have finished and
//     before it closes the store or removes a temporary root: every
//     queued file is gone when Close returns.
type reaper struct {
	queue chan reap
	wg    sync.WaitGroup
}

// reap is a file to unlink, or, with done, a request to be told once
// every file queued before it is unlinked.
type reap struct {
	path string
	done chan struct{}
}

func newReaper() *reaper {
	r := &reaper{queue: make(chan reap, reaperQueue)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for f := range r.queue {
			if f.done != nil {
				close(f.done)
				continue
			}
			unlink(f.path)
		}
	}()
	return r
}

// remove unlinks path soon, or now when the queue is full.
func (r *reaper) remove(path string) {
	select {
	case r.queue <- reap{path: path}:
	default:
		unlink(path)
	}
}

// sync returns once every file queued before the call is unlinked.
func (r *reaper) sync() {
	done := make(chan struct{})
	r.queue <- reap{done: done}
	<-done
}

// stop unlinks what is queued and ends the reaper. remove and sync must
// not be called after it.
func (r *reaper) stop() {
	close(r.queue)
	r.wg.Wait()
}

// unlink removes a file. It may be gone already (a dropped container's
// directory is removed whole); one it fails to remove is left to the
// next Open, like a crash's (see reaper).
func unlink(path string) { _ = os.Remove(path) }
