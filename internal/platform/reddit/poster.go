package reddit

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"sync"

	"github.com/reelay/reelay/internal/provider"
)

// defaultPosterPNG is reelay's own poster for videos without a usable thumbnail (Reddit
// requires video_poster_url): a small 9:16 PNG, dark with a lighter play triangle, drawn once.
var defaultPosterPNG = sync.OnceValue(func() []byte {
	const w, h = 90, 160
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	bg := color.NRGBA{R: 0x1a, G: 0x1a, B: 0x1b, A: 0xff}
	fg := color.NRGBA{R: 0xff, G: 0x45, B: 0x00, A: 0xff}
	for y := range h {
		for x := range w {
			img.Set(x, y, bg)
		}
	}
	// A play triangle in the middle: x from 35 to 60, narrowing towards the right.
	for y := 65; y < 95; y++ {
		half := 15 - abs(y-80)
		for x := 35; x < 35+half*5/3; x++ {
			img.Set(x, y, fg)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
})

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// defaultPoster is the default poster as a provider.Media.
func defaultPoster() provider.Media {
	b := defaultPosterPNG()
	return provider.Media{
		Size: int64(len(b)), ContentType: "image/png", Width: 90, Height: 160,
		Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b[min(off, int64(len(b))):])), nil
		},
	}
}
