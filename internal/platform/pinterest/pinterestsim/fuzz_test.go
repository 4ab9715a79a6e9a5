package pinterestsim_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzPinterestSim(f *testing.F) {
	simtest.Fuzz{NewSim: pinterestsim.New, Account: "pin_fuzz",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v5/media", simtest.FuzzJSON, `{"media_type":"video"}`)
			var out struct {
				MediaID   string            `json:"media_id"`
				UploadURL string            `json:"upload_url"`
				Params    map[string]string `json:"upload_parameters"`
			}
			simtest.DecodeInto(t, rec, &out)
			var form strings.Builder
			for k, v := range out.Params {
				fmt.Fprintf(&form, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", k, v)
			}
			return map[string]string{"media": out.MediaID, "upload": simtest.PathOf(t, out.UploadURL), "params": form.String()}
		},
		Seeds: []simtest.FuzzSeed{
			{"POST", "{upload}", simtest.FuzzMultipartType, "{params}--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n0123456789\r\n--fz--\r\n"},
			{"POST", "{upload}", simtest.FuzzMultipartType, "--fz\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nx\r\n--fz--\r\n"},
			{"GET", "/v5/media/{media}", simtest.FuzzBearer, ""},
			{"POST", "/v5/pins", simtest.FuzzJSON, `{"board_id":"1","title":"t","description":"d","link":"https://e.x","media_source":{"source_type":"video_id","media_id":"{media}","cover_image_url":"https://e.x/c.jpg","cover_image_key_frame_time":-1}}`},
			{"POST", "/v5/pins", simtest.FuzzJSON, `{"board_id":"1","media_source":{"source_type":"video_id","media_id":"{media}","cover_image_data":"!!","cover_image_content_type":"image/png"}}`},
			{"GET", "/v5/user_account", simtest.FuzzBearer, ""},
			{"GET", "/v5/boards?page_size=500&bookmark=x", simtest.FuzzBearer, ""},
			{"GET", "/v5/boards/1/pins", simtest.FuzzBearer, ""},
			{"GET", "/v5/pins/analytics?pin_ids=1,2&start_date=2026-01-01&end_date=2025-01-01&metric_types=IMPRESSION", simtest.FuzzBearer, ""},
			{"GET", "/v5/pins/1/analytics?start_date=x&end_date=y&metric_types=ALL", simtest.FuzzBearer, ""},
		},
	}.Run(f)
}
