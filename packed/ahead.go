package packed

import (
	"errors"
	"io"
	"sync"
)

// errClosed is what reading an EdgeReader after Close reports.
var errClosed = errors.New("packed: edge reader closed")

// Blocks are independent, each starting with its first entry in full, so
// an EdgeReader may decode the next blocks on other goroutines while its
// consumer works through the current one: one goroutine reads blocks in
// order, each block is decoded on a goroutine of its own, and the
// consumer takes them back in order. A fixed set of ahead+1 block buffers
// circulates between them, which bounds both the memory and the work
// done ahead.

// DefaultReadAhead is the number of blocks NewEdgeReaderAhead is given
// for the merge's readers (see AheadFor): one block decoding while the
// consumer merges the one before. A merge reads many runs at once, so
// their blocks already keep every core busy; a single long stream wants
// about one block for each core.
const DefaultReadAhead = 1

// AheadFor returns the read-ahead worth giving NewEdgeReaderAhead for
// edge blocks of size bytes: DefaultReadAhead, or 0 (no other goroutine)
// below 4 KiB, about 1100 edges and 50 microseconds of decoding, where
// the goroutines and hand-offs would cost about as much as they move.
func AheadFor(size int64) int {
	if size < 4<<10 {
		return 0
	}
	return DefaultReadAhead
}

// NewEdgeReaderAhead returns a reader of the edge blocks in r, as
// NewEdgeReader, that reads and decodes up to ahead blocks beyond the one
// its consumer is at on other goroutines (none if ahead is 0). It holds
// at most ahead+1 blocks, raw and decoded: with the default 2048 edges
// a block, about 72 KiB each. r is read from another goroutine; the
// caller must Close the reader before it is done with r.
func NewEdgeReaderAhead(r io.Reader, ahead int) *EdgeReader {
	if ahead < 1 {
		return NewEdgeReader(r)
	}
	// The reading goroutine has the stream's block reader: the consumer
	// never touches it.
	er := &EdgeReader{stream: newStream(nil, kindEdges)}
	a := &readAhead{
		blocks: make(chan *aheadBlock, ahead+1),
		free:   make(chan *aheadBlock, ahead+1),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for range ahead + 1 {
		b := &aheadBlock{bufs: takeReadBuffers(), decoded: make(chan struct{}, 1)}
		b.raw, b.edges = b.bufs.raw, b.bufs.edges
		a.all = append(a.all, b)
		a.free <- b
	}
	go a.read(blockReader{r: r, kind: kindEdges})
	er.ahead = a
	return er
}

// Close stops the reading ahead, if any, and waits for a read of the
// underlying reader in progress to return. Reading again after Close
// reports an error, unless the reader had already reached the end of its
// input. It is safe to call more than once, and on any EdgeReader.
func (r *EdgeReader) Close() error {
	if r.ahead != nil {
		r.ahead.stop()
	}
	if r.bufs != nil {
		r.bufs.give(r.blocks.buf, r.block)
		r.bufs, r.blocks.buf = nil, nil
	}
	if r.err == nil {
		r.err = errClosed
	}
	r.block, r.cur = nil, nil // so that Next fails from now on
	return nil
}

// readAhead is the state an EdgeReader shares with its reading goroutine.
type readAhead struct {
	blocks   chan *aheadBlock // read, in order; the decoding may not be done
	free     chan *aheadBlock // buffers to read the next blocks into
	quit     chan struct{}    // closed by stop
	done     chan struct{}    // closed when the reading goroutine ends
	decoding sync.WaitGroup   // the decodings under way
	all      []*aheadBlock    // every block in circulation, for stop to give back
	stopOnce sync.Once
}

// aheadBlock is one block in circulation.
type aheadBlock struct {
	bufs    *readBuffers // lent to raw and edges until stop
	raw     []byte       // the block as read, its payload within
	dec     edgeDecoder
	edges   []Edge
	off     int64 // the stream's offset after the block, for errors
	err     error // from decoding
	readErr error // from reading: io.EOF at a clean end
	decoded chan struct{}
}

// read reads blocks into free buffers and starts their decoding until
// the end of the input, an error, or stop.
func (a *readAhead) read(br blockReader) {
	defer close(a.done)
	for {
		var b *aheadBlock
		select {
		case b = <-a.free:
		case <-a.quit:
			return
		}
		br.buf = b.raw
		b.readErr = br.next(0)
		b.raw = br.buf
		if b.readErr != nil {
			b.decoded <- struct{}{}
		} else {
			b.off = br.off
			a.decoding.Add(1)
			go func(data []byte, count int) {
				defer a.decoding.Done()
				b.edges, b.err = b.dec.decode(data, count, b.edges)
				b.decoded <- struct{}{}
			}(br.data, br.count)
		}
		select {
		case a.blocks <- b:
		case <-a.quit:
			return
		}
		if b.readErr != nil {
			return
		}
	}
}

// next returns the next block, decoded, and gives the buffers of prev
// (nil at the start) back to the reading goroutine.
func (a *readAhead) next(prev *aheadBlock) *aheadBlock {
	if prev != nil {
		a.free <- prev // never blocks: there are as many places as buffers
	}
	b := <-a.blocks // the reading goroutine ends with a block that has readErr
	<-b.decoded
	return b
}

// stop ends the reading and gives the blocks' memory back once no
// goroutine touches it: the reading goroutine has ended, and so has every
// decoding it started, whether or not the consumer took its block. A
// second stop waits for the first.
func (a *readAhead) stop() {
	a.stopOnce.Do(func() {
		close(a.quit)
		<-a.done
		a.decoding.Wait()
		for _, b := range a.all {
			b.bufs.give(b.raw, b.edges)
			b.bufs, b.raw, b.edges = nil, nil, nil
		}
		a.all = nil
	})
}
