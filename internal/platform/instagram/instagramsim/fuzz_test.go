package instagramsim_test

import (
	"testing"

	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzInstagramSim(f *testing.F) {
	const id = "17841400000000042"
	simtest.Fuzz{NewSim: instagramsim.New, Account: id, Seeds: simtest.MetaSeeds(id,
		simtest.FuzzSeed{"POST", "/v21.0/" + id + "/media", simtest.FuzzForm, "media_type=REELS&video_url=https%3A%2F%2Fcdn.example%2Fv.mp4&caption=hi+%23x&share_to_feed=true"},
		simtest.FuzzSeed{"POST", "/v21.0/" + id + "/media", simtest.FuzzJSON, `{"media_type":"REELS","upload_type":"resumable","caption":"c"}`},
		simtest.FuzzSeed{"POST", "/v21.0/" + id + "/media_publish?creation_id=123", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"GET", "/v21.0/" + id + "/content_publishing_limit?fields=quota_usage,config", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"GET", "/v21.0/" + id + "/media?fields=id,permalink&limit=-1", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"POST", "/v21.0/123/replies", simtest.FuzzForm, "message=thanks"},
	)}.Run(f)
}
