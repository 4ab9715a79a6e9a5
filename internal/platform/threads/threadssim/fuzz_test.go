package threadssim_test

import (
	"testing"

	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/threads/threadssim"
)

func FuzzThreadsSim(f *testing.F) {
	const id = "17841400000000077"
	simtest.Fuzz{NewSim: threadssim.New, Account: id, Seeds: simtest.MetaSeeds(id,
		simtest.FuzzSeed{"POST", "/v1.0/" + id + "/threads", simtest.FuzzForm, "media_type=VIDEO&video_url=https%3A%2F%2Fcdn.example%2Fv.mp4&text=hello"},
		simtest.FuzzSeed{"POST", "/v1.0/" + id + "/threads?media_type=TEXT&text=hi&reply_to_id=1", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"POST", "/v1.0/" + id + "/threads_publish?creation_id=1", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"GET", "/v1.0/" + id + "/threads_publishing_limit?fields=quota_usage", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"GET", "/v1.0/1/conversation?fields=text&reverse=maybe", simtest.FuzzBearer, ""},
		simtest.FuzzSeed{"GET", "/v1.0/" + id + "/threads?since=abc&until=-1", simtest.FuzzBearer, ""},
	)}.Run(f)
}
