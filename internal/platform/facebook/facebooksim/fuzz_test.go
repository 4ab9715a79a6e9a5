package facebooksim_test

import (
	"net/http/httptest"
	"testing"

	"github.com/reelay/reelay/internal/platform/facebook/facebooksim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzFacebookSim(f *testing.F) {
	const id = "104000000000042"
	simtest.Fuzz{NewSim: facebooksim.New, Account: id,
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v21.0/"+id+"/video_reels", simtest.FuzzForm, "upload_phase=start")
			var out struct {
				VideoID   string `json:"video_id"`
				UploadURL string `json:"upload_url"`
			}
			simtest.DecodeInto(t, rec, &out)
			return map[string]string{"video": out.VideoID, "upload": simtest.PathOf(t, out.UploadURL)}
		},
		Seeds: simtest.MetaSeeds(id,
			simtest.FuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\noffset: 0\nfile_size: 10", "0123456789"},
			simtest.FuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\nfile_url: https://cdn.example/v.mp4", ""},
			simtest.FuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\noffset: -5\nfile_size: 99999999999999999999", "x"},
			simtest.FuzzSeed{"POST", "/v21.0/" + id + "/video_reels", simtest.FuzzForm, "upload_phase=finish&video_id={video}&video_state=PUBLISHED&description=d"},
			simtest.FuzzSeed{"GET", "/v21.0/" + id + "/video_reels?fields=id,status", simtest.FuzzBearer, ""},
			simtest.FuzzSeed{"GET", "/v21.0/{video}/video_insights?metric=blue_reels_play_count", simtest.FuzzBearer, ""},
			simtest.FuzzSeed{"POST", "/v21.0/{video}/comments", simtest.FuzzForm, "message=hi"},
			simtest.FuzzSeed{"GET", "/_static/page-picture.png", "", ""},
		)}.Run(f)
}
