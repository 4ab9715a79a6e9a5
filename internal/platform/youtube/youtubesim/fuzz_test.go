package youtubesim

import (
	"net/http/httptest"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzYouTubeSim(f *testing.F) {
	simtest.Fuzz{
		NewSim: New, Account: "UCfuzz0000000000000000",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status",
				simtest.FuzzJSON+"\nX-Upload-Content-Type: video/mp4\nX-Upload-Content-Length: 20000", ytMeta1)
			return map[string]string{"upload": simtest.PathOf(t, rec.Header().Get("Location"))}
		},
		Seeds: []simtest.FuzzSeed{
			{"PUT", "{upload}", simtest.FuzzBearer + "\nContent-Range: bytes 0-9/20000\nContent-Type: video/mp4", "0123456789"},
			{"PUT", "{upload}", simtest.FuzzBearer + "\nContent-Range: bytes */20000", ""},
			{"PUT", "{upload}", simtest.FuzzBearer + "\nContent-Range: bytes */*", ""},
			{"POST", "{upload}", simtest.FuzzBearer + "\nContent-Range: bytes 19990-19999/20000", "0123456789"},
			{"POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", simtest.FuzzJSON + "\nX-Upload-Content-Length: -1", ytMeta1},
			{"POST", "/upload/youtube/v3/videos?uploadType=multipart&part=snippet", simtest.FuzzBearer + "\nContent-Type: multipart/related; boundary=fz", "--fz\r\nContent-Type: application/json\r\n\r\n{}\r\n--fz--"},
			{"POST", "/upload/youtube/v3/thumbnails/set?videoId=abc", simtest.FuzzBearer + "\nContent-Type: image/png", "\x89PNG\r\n\x1a\n"},
			{"GET", "/youtube/v3/videos?part=status,snippet&id=a,b", simtest.FuzzBearer, ""},
			{"GET", "/youtube/v3/channels?part=snippet&mine=true", simtest.FuzzBearer, ""},
			{"GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", simtest.FuzzBearer, ""},
			{"GET", "/youtube/v3/commentThreads?part=snippet&videoId=a&maxResults=101&pageToken=x", simtest.FuzzBearer, ""},
			{"POST", "/youtube/v3/comments?part=snippet", simtest.FuzzJSON, `{"snippet":{"parentId":"x","textOriginal":"hi"}}`},
		},
	}.Run(f)
}
