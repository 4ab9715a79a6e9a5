package media

import (
	"hash"
	"io"
	"sync"
	"sync/atomic"
)

// CopyHashed copies src to dst until src ends, as io.Copy does, while h hashes the same bytes.
// Reading, hashing and writing each run on a goroutine of their own, so that a large file
// costs the slowest of the three rather than their sum. It returns once all are done, with the
// bytes written and the error of src or, failing that, of dst (io.EOF from src is the end, not
// an error); it stops reading once a write fails. After an error h holds an unspecified prefix
// of what was read.
//
// It copies through copyBufs buffers of copyBufSize from a pool: while one is filled from src,
// the others are hashed and written. Memory per copy is their sum, whatever the size of the
// file. Large buffers matter: mime/multipart hands out at most 4 KiB a read, and a write per
// read cost 0.2 s of system time per 100 MB. A source that ends within the first buffer (a
// short video, a thumbnail, a chunk of a simulator's upload) is hashed and written from that
// buffer alone, without the other buffers and goroutines, which would overlap nothing.
func CopyHashed(dst io.Writer, src io.Reader, h hash.Hash) (int64, error) {
	first := copyBufPool.Get().(*[]byte)
	k, rerr := fill(src, *first)
	if rerr == nil {
		return copyOverlapped(dst, src, h, first, k)
	}
	defer copyBufPool.Put(first)
	h.Write((*first)[:k])
	if k > 0 {
		if _, err := dst.Write((*first)[:k]); err != nil {
			return 0, err
		}
	}
	if rerr == io.EOF {
		rerr = nil
	}
	return int64(k), rerr
}

// copyOverlapped is CopyHashed for a source longer than one buffer: first holds its first k
// bytes.
func copyOverlapped(dst io.Writer, src io.Reader, h hash.Hash, first *[]byte, k int) (int64, error) {
	type chunk struct{ slot, n int }
	var (
		bufs    [copyBufs]*[]byte
		users   [copyBufs]atomic.Int32 // goroutines still reading each buffer
		free    = make(chan int, copyBufs)
		toHash  = make(chan chunk, copyBufs)
		toWrite = make(chan chunk, copyBufs)
		written atomic.Int64
		failed  atomic.Bool // a write failed: stop reading
		werr    error       // the write's error, read once the writer has ended
		wg      sync.WaitGroup
	)
	bufs[0] = first
	for i := 1; i < len(bufs); i++ {
		bufs[i] = copyBufPool.Get().(*[]byte)
		free <- i
	}
	release := func(slot int) {
		if users[slot].Add(-1) == 0 {
			free <- slot
		}
	}
	wg.Go(func() {
		for c := range toHash {
			h.Write((*bufs[c.slot])[:c.n])
			release(c.slot)
		}
	})
	wg.Go(func() {
		for c := range toWrite {
			if !failed.Load() {
				if _, err := dst.Write((*bufs[c.slot])[:c.n]); err != nil {
					werr = err
					failed.Store(true)
				} else {
					written.Add(int64(c.n))
				}
			}
			release(c.slot)
		}
	})
	// Both goroutines only read a buffer; it is filled again once both let it go.
	users[0].Store(2)
	toHash <- chunk{0, k}
	toWrite <- chunk{0, k}
	var rerr error
	for rerr == nil && !failed.Load() {
		slot := <-free
		k, rerr = fill(src, *bufs[slot])
		if k == 0 {
			free <- slot
			continue
		}
		users[slot].Store(2)
		toHash <- chunk{slot, k}
		toWrite <- chunk{slot, k}
	}
	close(toHash)
	close(toWrite)
	wg.Wait()
	for _, b := range bufs {
		copyBufPool.Put(b)
	}
	if rerr == io.EOF {
		rerr = nil
	}
	if rerr == nil {
		rerr = werr
	}
	return written.Load(), rerr
}

const (
	copyBufSize = 256 << 10
	copyBufs    = 4
)

var copyBufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// fill reads from src until buf is full or src fails; io.EOF means src has ended. k bytes
// may have come before any error.
func fill(src io.Reader, buf []byte) (k int, err error) {
	for k < len(buf) && err == nil {
		var m int
		m, err = src.Read(buf[k:])
		k += m
	}
	return k, err
}
