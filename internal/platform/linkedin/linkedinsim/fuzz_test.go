package linkedinsim_test

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/reelay/reelay/internal/platform/linkedin/linkedinsim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const fuzzLinkedIn = simtest.FuzzJSON + "\nLinkedIn-Version: 202601\nX-Restli-Protocol-Version: 2.0.0"

func FuzzLinkedInSim(f *testing.F) {
	simtest.Fuzz{NewSim: linkedinsim.New, Account: "liMember1",
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/rest/videos?action=initializeUpload", fuzzLinkedIn,
				`{"initializeUploadRequest":{"owner":"urn:li:person:liMember1","fileSizeBytes":80000}}`)
			var out struct {
				Value struct {
					Video              string `json:"video"`
					UploadInstructions []struct {
						UploadURL string `json:"uploadUrl"`
					} `json:"uploadInstructions"`
				} `json:"value"`
			}
			simtest.DecodeInto(t, rec, &out)
			if len(out.Value.UploadInstructions) == 0 {
				t.Fatalf("Prepare: no upload instructions in %s", rec.Body)
			}
			return map[string]string{"video": url.PathEscape(out.Value.Video), "upload": simtest.PathOf(t, out.Value.UploadInstructions[0].UploadURL)}
		},
		Seeds: []simtest.FuzzSeed{
			{"PUT", "{upload}", "Content-Type: application/octet-stream", "0123456789"},
			{"POST", "/rest/videos?action=finalizeUpload", fuzzLinkedIn, `{"finalizeUploadRequest":{"video":"{video}","uploadToken":"","uploadedPartIds":["x"]}}`},
			{"GET", "/rest/videos/{video}", fuzzLinkedIn, ""},
			{"POST", "/rest/posts", fuzzLinkedIn, `{"author":"urn:li:person:liMember1","commentary":"hi \\(x\\) @[A](urn:li:person:1)","visibility":"PUBLIC","distribution":{"feedDistribution":"MAIN_FEED"},"content":{"media":{"id":"{video}","title":"t"}},"lifecycleState":"PUBLISHED"}`},
			{"GET", "/v2/userinfo", simtest.FuzzBearer, ""},
			{"GET", "/rest/memberCreatorPostAnalytics?q=entity&entity=(share:urn%3Ali%3Ashare%3A1)&queryType=IMPRESSION&aggregation=TOTAL", fuzzLinkedIn, ""},
			{"GET", "/rest/memberCreatorVideoAnalytics?q=entity&entity=urn%3Ali%3Augc%3A1&type=VIDEO_PLAY", fuzzLinkedIn, ""},
			{"POST", "/rest/socialActions/urn%3Ali%3Ashare%3A1/comments", fuzzLinkedIn, `{"actor":"urn:li:person:liMember1","message":{"text":"hi"}}`},
		},
	}.Run(f)
}
