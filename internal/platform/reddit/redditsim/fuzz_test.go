package redditsim

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const fuzzReddit = "Authorization: bearer tok\nUser-Agent: test:reelay:1 (by /u/someone)"

func FuzzRedditSim(f *testing.F) {
	simtest.Fuzz{NewSim: New, Account: "t2_u1",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/api/media/asset.json", fuzzReddit+"\nContent-Type: application/x-www-form-urlencoded", "filepath=v.mp4&mimetype=video%2Fmp4")
			var out redditTestLease
			simtest.DecodeInto(t, rec, &out)
			var form strings.Builder
			for _, fld := range out.Args.Fields {
				fmt.Fprintf(&form, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", fld.Name, fld.Value)
			}
			action := out.Args.Action
			if strings.HasPrefix(action, "//") {
				action = "https:" + action
			}
			return map[string]string{"upload": simtest.PathOf(t, action), "fields": form.String(), "asset": out.Asset.AssetID}
		},
		Seeds: []simtest.FuzzSeed{
			{"POST", "{upload}", simtest.FuzzMultipartType, "{fields}--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n0123456789\r\n--fz--\r\n"},
			{"POST", "/api/submit", fuzzReddit + "\nContent-Type: application/x-www-form-urlencoded", "api_type=json&kind=video&sr=golang&title=t&url=https%3A%2F%2Fsim.test%2Fs3%2Fx&video_poster_url=x&nsfw=maybe&flair_id=f"},
			{"POST", "/api/comment", fuzzReddit + "\nContent-Type: application/x-www-form-urlencoded", "api_type=json&thing_id=t1_x&text=hi"},
			{"GET", "/api/info?id=t3_a,t3_b", fuzzReddit, ""},
			{"GET", "/api/v1/me", fuzzReddit, ""},
			{"GET", "/subreddits/mine/subscriber?limit=1000&after=x", fuzzReddit, ""},
			{"GET", "/r/golang/about", fuzzReddit, ""},
			{"GET", "/r/golang/comments/abc/slug?sort=new&limit=-1", fuzzReddit, ""},
			{"GET", "/api/v1/golang/post_requirements", fuzzReddit, ""},
			{"GET", "/r/golang/api/link_flair_v2", fuzzReddit, ""},
			{"GET", "/user/someone/submitted?limit=x", fuzzReddit, ""},
			{"GET", "/ws/{asset}", "Connection: Upgrade\nUpgrade: websocket\nSec-WebSocket-Version: 13\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", ""},
		},
	}.Run(f)
}
