package mediatest

import (
	"io"
	"sync/atomic"
)

// CountingReader counts the bytes read through it, to show how far a refusal read a body.
type CountingReader struct {
	R io.Reader
	n atomic.Int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// N is the number of bytes read so far.
func (c *CountingReader) N() int64 { return c.n.Load() }
