package tiktok

import "fmt"

// TikTok's chunk restrictions (media transfer guide): total_chunk_count = floor(video_size /
// chunk_size); each chunk 5–64 MB except the final one, which takes the trailing bytes and may
// reach 128 MB; a video under 5 MB goes whole, one over 64 MB in several chunks; 1–1000 chunks.
// The guide does not say whether MB is 10^6 or 2^20 bytes, so the plan satisfies both readings:
// chunks of at least 5 MiB and at most 64,000,000 bytes, a final chunk under 128,000,000 bytes,
// and one whole chunk only for videos of at most 64,000,000 bytes.
const (
	minChunk       = 5 << 20
	maxChunk       = 64_000_000
	maxFinalChunk  = 128_000_000
	maxChunks      = 1000
	defaultChunk   = 10_000_000 // TikTok's own worked example uses 10,000,000-byte chunks
	maxSingleChunk = maxChunk
)

// Plan is how a video is cut for FILE_UPLOAD.
type Plan struct {
	VideoSize  int64 `json:"video_size"`
	ChunkSize  int64 `json:"chunk_size"`
	ChunkCount int   `json:"total_chunk_count"`
}

// PlanChunks cuts a video of size bytes into chunks of about preferred bytes (0: 10,000,000),
// following TikTok's rules. A video that fits in fewer than two preferred chunks goes whole when
// it is at most 64,000,000 bytes, otherwise in two.
func PlanChunks(size, preferred int64) (Plan, error) {
	if size <= 0 {
		return Plan{}, fmt.Errorf("video size %d is not positive", size)
	}
	c := preferred
	if c <= 0 {
		c = defaultChunk
	}
	c = min(max(c, minChunk), maxChunk)
	if size/c < 2 {
		if size <= maxSingleChunk {
			return Plan{VideoSize: size, ChunkSize: size, ChunkCount: 1}, nil
		}
		c = size / 2 // here size < 2*maxChunk, so c ≤ maxChunk and the final chunk ≤ c+1
	}
	if size/c > maxChunks {
		c = (size + maxChunks - 1) / maxChunks
	}
	p := Plan{VideoSize: size, ChunkSize: c, ChunkCount: int(size / c)}
	if c > maxChunk || p.last() > maxFinalChunk-1 || p.ChunkCount > maxChunks {
		return Plan{}, fmt.Errorf("a video of %d bytes cannot be cut into TikTok's chunks", size)
	}
	return p, nil
}

// Range returns the first byte and the length of chunk i.
func (p Plan) Range(i int) (first, n int64) {
	first = int64(i) * p.ChunkSize
	if i == p.ChunkCount-1 {
		return first, p.VideoSize - first
	}
	return first, p.ChunkSize
}

func (p Plan) last() int64 {
	_, n := p.Range(p.ChunkCount - 1)
	return n
}

// chunkAt returns the index of the chunk that starts at byte off, or -1 when off is not a
// chunk boundary; off == VideoSize answers ChunkCount (all sent).
func (p Plan) chunkAt(off int64) int {
	if off == p.VideoSize {
		return p.ChunkCount
	}
	if off < 0 || off%p.ChunkSize != 0 || off/p.ChunkSize >= int64(p.ChunkCount) {
		return -1
	}
	return int(off / p.ChunkSize)
}
