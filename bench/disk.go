package bench

import (
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/internal/du"
)

// diskSampler follows the bytes under a directory while a run uses it,
// and keeps the largest total seen: the run's peak disk use, to within
// what it writes and deletes between two samples.
type diskSampler struct {
	dir  string
	stop chan struct{}
	done sync.WaitGroup
	peak int64
}

// sampleDisk starts sampling dir every interval.
func sampleDisk(dir string, interval time.Duration) *diskSampler {
	s := &diskSampler{dir: dir, stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.peak = max(s.peak, du.Bytes(s.dir))
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Peak stops sampling and returns the largest total seen, sampling once
// more first.
func (s *diskSampler) Peak() int64 {
	close(s.stop)
	s.done.Wait()
	return max(s.peak, du.Bytes(s.dir))
}
