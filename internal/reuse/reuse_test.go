package reuse

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestList: a buffer put back is the next one got, as many are kept as
// were in use at once, and all are dropped once unused for Idle, not
// before, however the uses fall.
func TestList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &List[[]byte]{Idle: time.Minute}
		a, b := l.Get(), l.Get()
		l.Put(a)
		l.Put(b)
		if got := l.Len(); got != 2 {
			t.Fatalf("%d buffers kept, want the 2 in use at once", got)
		}
		if got := l.Get(); got != b {
			t.Fatal("Get did not return the last buffer put back")
		}
		time.Sleep(50 * time.Second)
		l.Put(b) // used again: the minute starts over
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if got := l.Len(); got != 2 {
			t.Fatalf("%d buffers kept 50 s after the last use, want 2", got)
		}
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if got := l.Len(); got != 0 {
			t.Fatalf("%d buffers kept a minute after the last use, want none", got)
		}
		if got := l.Get(); got == a || got == b {
			t.Fatal("Get after the drop returned an old buffer")
		}
	})
}
