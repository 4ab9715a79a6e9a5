package tiktoksim_test

import (
	"net/http/httptest"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
)

func FuzzTikTokSim(f *testing.F) {
	simtest.Fuzz{
		NewSim: tiktoksim.New, Account: "open_1",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v2/post/publish/inbox/video/init/", simtest.FuzzJSON,
				`{"source_info":{"source":"FILE_UPLOAD","video_size":20000,"chunk_size":20000,"total_chunk_count":1}}`)
			var out struct {
				Data struct {
					PublishID string `json:"publish_id"`
					UploadURL string `json:"upload_url"`
				} `json:"data"`
			}
			simtest.DecodeInto(t, rec, &out)
			return map[string]string{"upload": simtest.PathOf(t, out.Data.UploadURL), "publish": out.Data.PublishID}
		},
		Seeds: []simtest.FuzzSeed{
			{"PUT", "{upload}", "Content-Type: video/mp4\nContent-Range: bytes 0-9/20000", "0123456789"},
			{"PUT", "{upload}", "Content-Type: video/mp4\nContent-Range: bytes 0-19999/20000", "short"},
			{"PUT", "{upload}", "Content-Type: video/quicktime\nContent-Range: bytes=0-9/x", "0123456789"},
			{"POST", "/v2/post/publish/video/init/", simtest.FuzzJSON, `{"post_info":{"title":"t #x","privacy_level":"SELF_ONLY","disable_comment":false},"source_info":{"source":"FILE_UPLOAD","video_size":30000000,"chunk_size":10000000,"total_chunk_count":3}}`},
			{"POST", "/v2/post/publish/video/init/", simtest.FuzzJSON, `{"source_info":{"source":"PULL_FROM_URL","video_url":"https://cdn.example/v.mp4"}}`},
			{"POST", "/v2/post/publish/status/fetch/", simtest.FuzzJSON, `{"publish_id":"{publish}"}`},
			{"POST", "/v2/post/publish/creator_info/query/", simtest.FuzzJSON, ``},
			{"GET", "/v2/user/info/?fields=open_id,display_name", simtest.FuzzBearer, ""},
			{"POST", "/v2/video/query/?fields=id,view_count", simtest.FuzzJSON, `{"filters":{"video_ids":["1","2"]}}`},
		},
	}.Run(f)
}
