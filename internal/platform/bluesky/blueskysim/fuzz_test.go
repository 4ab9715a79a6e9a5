package blueskysim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/bluesky/blueskysim"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzBlueskySim(f *testing.F) {
	const account = "sbx_aa"
	simtest.Fuzz{NewSim: blueskysim.New, Account: account,
		Documented5xx: func(code int, body string) bool {
			return code == http.StatusNotImplemented && strings.Contains(body, `"error":"MethodNotImplemented"`)
		},
		Prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/xrpc/com.atproto.server.createSession", "Content-Type: application/json",
				`{"identifier":"`+sandboxtoken.BlueskyHandle(account)+`","password":"tok"}`)
			var out struct {
				AccessJwt  string `json:"accessJwt"`
				RefreshJwt string `json:"refreshJwt"`
			}
			simtest.DecodeInto(t, rec, &out)
			return map[string]string{"jwt": out.AccessJwt, "refresh": out.RefreshJwt, "did": blueskysim.DID(account)}
		},
		Seeds: []simtest.FuzzSeed{
			{"POST", "/xrpc/com.atproto.repo.createRecord", "Authorization: Bearer {jwt}\nContent-Type: application/json", `{"repo":"{did}","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post","text":"hi https://e.x","createdAt":"2026-03-01T12:00:00Z","langs":["en"],"facets":[{"index":{"byteStart":3,"byteEnd":14},"features":[{"$type":"app.bsky.richtext.facet#link","uri":"https://e.x"}]}],"embed":{"$type":"app.bsky.embed.video","video":{"$type":"blob","ref":{"$link":"bafk"},"mimeType":"video/mp4","size":10}}}}`},
			{"POST", "/xrpc/com.atproto.repo.uploadBlob", "Authorization: Bearer {jwt}\nContent-Type: video/mp4", "0123456789"},
			{"POST", "/xrpc/com.atproto.server.refreshSession", "Authorization: Bearer {refresh}", ""},
			{"GET", "/xrpc/com.atproto.server.getServiceAuth?aud=did:web:video.bsky.app&lxm=com.atproto.repo.uploadBlob&exp=99999999999", "Authorization: Bearer {jwt}", ""},
			{"POST", "/xrpc/app.bsky.video.uploadVideo?did={did}&name=v.mp4", "Authorization: Bearer {jwt}\nContent-Type: video/mp4", "0123456789"},
			{"GET", "/xrpc/app.bsky.video.getJobStatus?jobId=x", "Authorization: Bearer {jwt}", ""},
			{"GET", "/xrpc/app.bsky.video.getUploadLimits", "Authorization: Bearer {jwt}", ""},
			{"GET", "/xrpc/com.atproto.repo.getRecord?repo={did}&collection=app.bsky.feed.post&rkey=3k", "Authorization: Bearer {jwt}", ""},
			{"GET", "/xrpc/app.bsky.feed.getPosts?uris=at://{did}/app.bsky.feed.post/3k&uris=x", "Authorization: Bearer {jwt}", ""},
			{"GET", "/xrpc/app.bsky.feed.getPostThread?uri=at://{did}/app.bsky.feed.post/3k&depth=-1", "Authorization: Bearer {jwt}", ""},
			{"GET", "/xrpc/app.bsky.actor.getProfile?actor={did}", "Authorization: Bearer {jwt}", ""},
			{"POST", "/xrpc/com.atproto.server.createSession", "Content-Type: application/json", `{"identifier":1,"password":null}`},
		},
	}.Run(f)
}
