package apierr

import (
	"strings"
	"testing"
)

// BenchmarkDecodeJSON decodes a publish-sized request (a caption of 2,000 characters, three
// platform objects), to weigh the checks of CheckJSON against the decoding itself.
func BenchmarkDecodeJSON(b *testing.B) {
	type platform struct {
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	}
	type request struct {
		ProjectID string    `json:"project_id"`
		VideoURL  string    `json:"video_url"`
		Caption   string    `json:"caption"`
		Platforms []string  `json:"platforms"`
		YouTube   *platform `json:"youtube"`
		TikTok    *platform `json:"tiktok"`
		Bluesky   *platform `json:"bluesky"`
	}
	obj := `{"title":"Launch day","description":"` + strings.Repeat("Café ☕ ", 100) + `","tags":["a","b","c"]}`
	body := `{"project_id":"0b7f6f3e-3a6b-4f6e-9a59-3f0d2b1c4e5a","video_url":"https://example.com/clip.mp4",` +
		`"caption":"` + strings.Repeat("Cold brew, sixteen hours. ", 77) + `","platforms":["youtube","tiktok","bluesky"],` +
		`"youtube":` + obj + `,"tiktok":` + obj + `,"bluesky":` + obj + `}`
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r request
		if err := DecodeJSON(strings.NewReader(body), &r); err != nil {
			b.Fatal(err)
		}
	}
}
