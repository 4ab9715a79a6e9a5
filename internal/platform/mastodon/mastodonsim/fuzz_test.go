package mastodonsim_test

import (
	"net/http/httptest"
	"testing"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/mastodon/mastodonsim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzMastodonSim(f *testing.F) {
	png := string(mediatest.PNG(f, 2, 2))
	simtest.Fuzz{NewSim: mastodonsim.New, Account: "109000000000000001",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			image := "--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n" +
				png + "\r\n--fz--\r\n"
			rec := do("POST", "/api/v2/media", simtest.FuzzBearer+"\n"+simtest.FuzzMultipartType, image)
			var out struct {
				ID string `json:"id"`
			}
			simtest.DecodeInto(t, rec, &out)
			return map[string]string{"media": out.ID}
		},
		Seeds: []simtest.FuzzSeed{
			{"POST", "/api/v2/media", simtest.FuzzBearer + "\n" + simtest.FuzzMultipartType, simtest.FuzzMultipart("file", "description", "alt", "focus", "0.5,-2")},
			{"GET", "/api/v1/media/{media}", simtest.FuzzBearer, ""},
			{"POST", "/api/v1/statuses", simtest.FuzzJSON + "\nIdempotency-Key: k", `{"status":"hi @a@b.c https://e.x","media_ids":["{media}"],"visibility":"unlisted","sensitive":true,"spoiler_text":"cw","language":"en"}`},
			{"POST", "/api/v1/statuses", simtest.FuzzForm, "status=hi&media_ids[]={media}&visibility=public&scheduled_at=2026-03-01T12:10:00Z"},
			{"POST", "/api/v1/statuses", simtest.FuzzBearer + "\n" + simtest.FuzzMultipartType, simtest.FuzzMultipart("", "status", "x", "media_ids[]", "{media}")},
			{"GET", "/api/v1/statuses?id[]=1&id[]=2", simtest.FuzzBearer, ""},
			{"GET", "/api/v1/statuses/1/context", simtest.FuzzBearer, ""},
			{"GET", "/api/v1/accounts/109000000000000001/statuses?limit=80&max_id=x", simtest.FuzzBearer, ""},
			{"GET", "/api/v1/accounts/verify_credentials", simtest.FuzzBearer, ""},
			{"GET", "/api/v2/instance", "", ""},
		},
	}.Run(f)
}
