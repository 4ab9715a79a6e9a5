package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
)

// The simulators face every test and every sandbox user, so each is fuzzed through its
// http.Handler: a request (method, target, header lines, body) read from the wire as a server
// reads it, then served by a new simulator with the memory State. A simulator must answer
// malformed input with its platform's 4xx: a panic or a 5xx fails. Simulators with multi-step
// uploads first open a session (prepare), whose URL and tokens the fuzzed request may name
// through {placeholders}, so that chunk, Content-Range and finish handling is reached too.

const fuzzTok = "tok"

var fuzzClock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// simFuzzSeed is one request: header holds "Name: value" lines.
type simFuzzSeed struct{ method, target, header, body string }

type simFuzz struct {
	newSim  func(Config) http.Handler
	account string
	// prepare runs requests before the fuzzed one and returns the placeholders' values.
	prepare func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string
	seeds   []simFuzzSeed
	// documented5xx accepts a 5xx the platform itself documents for a request (XRPC's 501
	// for a method the server does not implement).
	documented5xx func(code int, body string) bool
}

// refuseNetwork is the pull client's transport: a fuzzed video_url must not reach the network.
type refuseNetwork struct{}

func (refuseNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("fuzzing: no network")
}

// readWireRequest parses a request as net/http's server would, or reports false for bytes a
// server refuses before any handler sees them.
func readWireRequest(method, target, header string, body []byte) (*http.Request, bool) {
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: sim.test\r\n", method, target)
	for _, line := range strings.Split(header, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.EqualFold(strings.TrimSpace(name), "Host") || strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			return nil, false
		}
		for i := 0; i < len(value); i++ {
			if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, false // the server answers 400 to control characters in a field value
			}
		}
		raw.WriteString(line + "\r\n")
	}
	fmt.Fprintf(&raw, "Content-Length: %d\r\n\r\n", len(body))
	raw.Write(body)
	r, err := http.ReadRequest(bufio.NewReader(&raw))
	if err != nil || r.URL.Path == "" || r.URL.Path[0] != '/' || len(r.TransferEncoding) > 0 {
		return nil, false
	}
	r.RemoteAddr = "192.0.2.1:4711"
	return r, true
}

func (sf simFuzz) run(f *testing.F) {
	for _, s := range sf.seeds {
		f.Add(s.method, s.target, s.header, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, target, header string, body []byte) {
		h := sf.newSim(Config{BaseURL: "http://sim.test", Now: func() time.Time { return fuzzClock },
			Rand: func() float64 { return 0.99 }, State: NewMemoryState(func() time.Time { return fuzzClock }),
			PullClient: &http.Client{Transport: refuseNetwork{}},
			Accounts:   StaticAccounts{fuzzTok: {ID: sf.account, Username: "fuzzer", Behavior: Behavior{ProcessingMS: -1}}}})
		serve := func(r *http.Request) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			return rec
		}
		vars := map[string]string{}
		if sf.prepare != nil {
			vars = sf.prepare(t, func(method, target, header, body string) *httptest.ResponseRecorder {
				r, ok := readWireRequest(method, target, header, []byte(body))
				if !ok {
					t.Fatalf("prepare: unreadable request %s %s", method, target)
				}
				rec := serve(r)
				if rec.Code >= 300 {
					t.Fatalf("prepare: %s %s answered %d: %s", method, target, rec.Code, rec.Body)
				}
				return rec
			})
		}
		for k, v := range vars {
			method = strings.ReplaceAll(method, "{"+k+"}", v)
			target = strings.ReplaceAll(target, "{"+k+"}", v)
			header = strings.ReplaceAll(header, "{"+k+"}", v)
			body = bytes.ReplaceAll(body, []byte("{"+k+"}"), []byte(v))
		}
		r, ok := readWireRequest(method, target, header, body)
		if !ok {
			return
		}
		rec := serve(r)
		if rec.Code >= 500 && (sf.documented5xx == nil || !sf.documented5xx(rec.Code, rec.Body.String())) {
			t.Fatalf("%s %s answered %d: %s", method, target, rec.Code, rec.Body)
		}
	})
}

// pathOf is the path and query of an absolute URL a simulator handed out.
func pathOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		t.Fatalf("prepare: URL %q", raw)
	}
	return u.RequestURI()
}

func decodeInto(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("prepare: %v in %s", err, rec.Body)
	}
}

const (
	fuzzJSON   = "Authorization: Bearer tok\nContent-Type: application/json"
	fuzzBearer = "Authorization: Bearer tok"
	fuzzForm   = "Authorization: Bearer tok\nContent-Type: application/x-www-form-urlencoded"
)

// fuzzMultipart is a multipart body under boundary "fz" with plain fields and one file.
func fuzzMultipart(file string, fields ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", fields[i], fields[i+1])
	}
	if file != "" {
		fmt.Fprintf(&b, "--fz\r\nContent-Disposition: form-data; name=%q; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom\r\n", file)
	}
	b.WriteString("--fz--\r\n")
	return b.String()
}

const fuzzMultipartType = "Content-Type: multipart/form-data; boundary=fz"

func FuzzYouTubeSim(f *testing.F) {
	simFuzz{
		newSim: NewYouTube, account: "UCfuzz0000000000000000",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status",
				fuzzJSON+"\nX-Upload-Content-Type: video/mp4\nX-Upload-Content-Length: 20000", ytMeta1)
			return map[string]string{"upload": pathOf(t, rec.Header().Get("Location"))}
		},
		seeds: []simFuzzSeed{
			{"PUT", "{upload}", fuzzBearer + "\nContent-Range: bytes 0-9/20000\nContent-Type: video/mp4", "0123456789"},
			{"PUT", "{upload}", fuzzBearer + "\nContent-Range: bytes */20000", ""},
			{"PUT", "{upload}", fuzzBearer + "\nContent-Range: bytes */*", ""},
			{"POST", "{upload}", fuzzBearer + "\nContent-Range: bytes 19990-19999/20000", "0123456789"},
			{"POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", fuzzJSON + "\nX-Upload-Content-Length: -1", ytMeta1},
			{"POST", "/upload/youtube/v3/videos?uploadType=multipart&part=snippet", fuzzBearer + "\nContent-Type: multipart/related; boundary=fz", "--fz\r\nContent-Type: application/json\r\n\r\n{}\r\n--fz--"},
			{"POST", "/upload/youtube/v3/thumbnails/set?videoId=abc", fuzzBearer + "\nContent-Type: image/png", "\x89PNG\r\n\x1a\n"},
			{"GET", "/youtube/v3/videos?part=status,snippet&id=a,b", fuzzBearer, ""},
			{"GET", "/youtube/v3/channels?part=snippet&mine=true", fuzzBearer, ""},
			{"GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", fuzzBearer, ""},
			{"GET", "/youtube/v3/commentThreads?part=snippet&videoId=a&maxResults=101&pageToken=x", fuzzBearer, ""},
			{"POST", "/youtube/v3/comments?part=snippet", fuzzJSON, `{"snippet":{"parentId":"x","textOriginal":"hi"}}`},
		},
	}.run(f)
}

func FuzzTikTokSim(f *testing.F) {
	simFuzz{
		newSim: NewTikTok, account: "open_1",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v2/post/publish/inbox/video/init/", fuzzJSON,
				`{"source_info":{"source":"FILE_UPLOAD","video_size":20000,"chunk_size":20000,"total_chunk_count":1}}`)
			var out struct {
				Data struct {
					PublishID string `json:"publish_id"`
					UploadURL string `json:"upload_url"`
				} `json:"data"`
			}
			decodeInto(t, rec, &out)
			return map[string]string{"upload": pathOf(t, out.Data.UploadURL), "publish": out.Data.PublishID}
		},
		seeds: []simFuzzSeed{
			{"PUT", "{upload}", "Content-Type: video/mp4\nContent-Range: bytes 0-9/20000", "0123456789"},
			{"PUT", "{upload}", "Content-Type: video/mp4\nContent-Range: bytes 0-19999/20000", "short"},
			{"PUT", "{upload}", "Content-Type: video/quicktime\nContent-Range: bytes=0-9/x", "0123456789"},
			{"POST", "/v2/post/publish/video/init/", fuzzJSON, `{"post_info":{"title":"t #x","privacy_level":"SELF_ONLY","disable_comment":false},"source_info":{"source":"FILE_UPLOAD","video_size":30000000,"chunk_size":10000000,"total_chunk_count":3}}`},
			{"POST", "/v2/post/publish/video/init/", fuzzJSON, `{"source_info":{"source":"PULL_FROM_URL","video_url":"https://cdn.example/v.mp4"}}`},
			{"POST", "/v2/post/publish/status/fetch/", fuzzJSON, `{"publish_id":"{publish}"}`},
			{"POST", "/v2/post/publish/creator_info/query/", fuzzJSON, ``},
			{"GET", "/v2/user/info/?fields=open_id,display_name", fuzzBearer, ""},
			{"POST", "/v2/video/query/?fields=id,view_count", fuzzJSON, `{"filters":{"video_ids":["1","2"]}}`},
		},
	}.run(f)
}

// metaSeeds are the Graph API requests common to Instagram, Facebook and Threads.
func metaSeeds(id string, edges ...simFuzzSeed) []simFuzzSeed {
	out := []simFuzzSeed{
		{"GET", "/v21.0/" + id + "?fields=id,username&access_token=tok", "", ""},
		{"GET", "/v21.0/me/accounts?access_token=tok", "", ""},
		{"GET", "/v21.0/" + id + "/insights?metric=views,likes&period=lifetime", fuzzBearer, ""},
		{"GET", "/v21.0/" + id + "/comments?limit=5000&after=xyz", fuzzBearer, ""},
		{"POST", "/v21.0/" + id + "?hide=true", fuzzForm, "hide=maybe"},
		{"DELETE", "/v21.0/" + id, fuzzBearer, ""},
	}
	return append(out, edges...)
}

func FuzzInstagramSim(f *testing.F) {
	const id = "17841400000000042"
	simFuzz{newSim: NewInstagram, account: id, seeds: metaSeeds(id,
		simFuzzSeed{"POST", "/v21.0/" + id + "/media", fuzzForm, "media_type=REELS&video_url=https%3A%2F%2Fcdn.example%2Fv.mp4&caption=hi+%23x&share_to_feed=true"},
		simFuzzSeed{"POST", "/v21.0/" + id + "/media", fuzzJSON, `{"media_type":"REELS","upload_type":"resumable","caption":"c"}`},
		simFuzzSeed{"POST", "/v21.0/" + id + "/media_publish?creation_id=123", fuzzBearer, ""},
		simFuzzSeed{"GET", "/v21.0/" + id + "/content_publishing_limit?fields=quota_usage,config", fuzzBearer, ""},
		simFuzzSeed{"GET", "/v21.0/" + id + "/media?fields=id,permalink&limit=-1", fuzzBearer, ""},
		simFuzzSeed{"POST", "/v21.0/123/replies", fuzzForm, "message=thanks"},
	)}.run(f)
}

func FuzzFacebookSim(f *testing.F) {
	const id = "104000000000042"
	simFuzz{newSim: NewFacebook, account: id,
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v21.0/"+id+"/video_reels", fuzzForm, "upload_phase=start")
			var out struct {
				VideoID   string `json:"video_id"`
				UploadURL string `json:"upload_url"`
			}
			decodeInto(t, rec, &out)
			return map[string]string{"video": out.VideoID, "upload": pathOf(t, out.UploadURL)}
		},
		seeds: metaSeeds(id,
			simFuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\noffset: 0\nfile_size: 10", "0123456789"},
			simFuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\nfile_url: https://cdn.example/v.mp4", ""},
			simFuzzSeed{"POST", "{upload}", "Authorization: OAuth tok\noffset: -5\nfile_size: 99999999999999999999", "x"},
			simFuzzSeed{"POST", "/v21.0/" + id + "/video_reels", fuzzForm, "upload_phase=finish&video_id={video}&video_state=PUBLISHED&description=d"},
			simFuzzSeed{"GET", "/v21.0/" + id + "/video_reels?fields=id,status", fuzzBearer, ""},
			simFuzzSeed{"GET", "/v21.0/{video}/video_insights?metric=blue_reels_play_count", fuzzBearer, ""},
			simFuzzSeed{"POST", "/v21.0/{video}/comments", fuzzForm, "message=hi"},
			simFuzzSeed{"GET", "/_static/page-picture.png", "", ""},
		)}.run(f)
}

func FuzzThreadsSim(f *testing.F) {
	const id = "17841400000000077"
	simFuzz{newSim: NewThreads, account: id, seeds: metaSeeds(id,
		simFuzzSeed{"POST", "/v1.0/" + id + "/threads", fuzzForm, "media_type=VIDEO&video_url=https%3A%2F%2Fcdn.example%2Fv.mp4&text=hello"},
		simFuzzSeed{"POST", "/v1.0/" + id + "/threads?media_type=TEXT&text=hi&reply_to_id=1", fuzzBearer, ""},
		simFuzzSeed{"POST", "/v1.0/" + id + "/threads_publish?creation_id=1", fuzzBearer, ""},
		simFuzzSeed{"GET", "/v1.0/" + id + "/threads_publishing_limit?fields=quota_usage", fuzzBearer, ""},
		simFuzzSeed{"GET", "/v1.0/1/conversation?fields=text&reverse=maybe", fuzzBearer, ""},
		simFuzzSeed{"GET", "/v1.0/" + id + "/threads?since=abc&until=-1", fuzzBearer, ""},
	)}.run(f)
}

const fuzzLinkedIn = fuzzJSON + "\nLinkedIn-Version: 202601\nX-Restli-Protocol-Version: 2.0.0"

func FuzzLinkedInSim(f *testing.F) {
	simFuzz{newSim: NewLinkedIn, account: "liMember1",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
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
			decodeInto(t, rec, &out)
			if len(out.Value.UploadInstructions) == 0 {
				t.Fatalf("prepare: no upload instructions in %s", rec.Body)
			}
			return map[string]string{"video": url.PathEscape(out.Value.Video), "upload": pathOf(t, out.Value.UploadInstructions[0].UploadURL)}
		},
		seeds: []simFuzzSeed{
			{"PUT", "{upload}", "Content-Type: application/octet-stream", "0123456789"},
			{"POST", "/rest/videos?action=finalizeUpload", fuzzLinkedIn, `{"finalizeUploadRequest":{"video":"{video}","uploadToken":"","uploadedPartIds":["x"]}}`},
			{"GET", "/rest/videos/{video}", fuzzLinkedIn, ""},
			{"POST", "/rest/posts", fuzzLinkedIn, `{"author":"urn:li:person:liMember1","commentary":"hi \\(x\\) @[A](urn:li:person:1)","visibility":"PUBLIC","distribution":{"feedDistribution":"MAIN_FEED"},"content":{"media":{"id":"{video}","title":"t"}},"lifecycleState":"PUBLISHED"}`},
			{"GET", "/v2/userinfo", fuzzBearer, ""},
			{"GET", "/rest/memberCreatorPostAnalytics?q=entity&entity=(share:urn%3Ali%3Ashare%3A1)&queryType=IMPRESSION&aggregation=TOTAL", fuzzLinkedIn, ""},
			{"GET", "/rest/memberCreatorVideoAnalytics?q=entity&entity=urn%3Ali%3Augc%3A1&type=VIDEO_PLAY", fuzzLinkedIn, ""},
			{"POST", "/rest/socialActions/urn%3Ali%3Ashare%3A1/comments", fuzzLinkedIn, `{"actor":"urn:li:person:liMember1","message":{"text":"hi"}}`},
		},
	}.run(f)
}

func FuzzPinterestSim(f *testing.F) {
	simFuzz{newSim: NewPinterest, account: "pin_fuzz",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/v5/media", fuzzJSON, `{"media_type":"video"}`)
			var out struct {
				MediaID   string            `json:"media_id"`
				UploadURL string            `json:"upload_url"`
				Params    map[string]string `json:"upload_parameters"`
			}
			decodeInto(t, rec, &out)
			var form strings.Builder
			for k, v := range out.Params {
				fmt.Fprintf(&form, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", k, v)
			}
			return map[string]string{"media": out.MediaID, "upload": pathOf(t, out.UploadURL), "params": form.String()}
		},
		seeds: []simFuzzSeed{
			{"POST", "{upload}", fuzzMultipartType, "{params}--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n0123456789\r\n--fz--\r\n"},
			{"POST", "{upload}", fuzzMultipartType, "--fz\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nx\r\n--fz--\r\n"},
			{"GET", "/v5/media/{media}", fuzzBearer, ""},
			{"POST", "/v5/pins", fuzzJSON, `{"board_id":"1","title":"t","description":"d","link":"https://e.x","media_source":{"source_type":"video_id","media_id":"{media}","cover_image_url":"https://e.x/c.jpg","cover_image_key_frame_time":-1}}`},
			{"POST", "/v5/pins", fuzzJSON, `{"board_id":"1","media_source":{"source_type":"video_id","media_id":"{media}","cover_image_data":"!!","cover_image_content_type":"image/png"}}`},
			{"GET", "/v5/user_account", fuzzBearer, ""},
			{"GET", "/v5/boards?page_size=500&bookmark=x", fuzzBearer, ""},
			{"GET", "/v5/boards/1/pins", fuzzBearer, ""},
			{"GET", "/v5/pins/analytics?pin_ids=1,2&start_date=2026-01-01&end_date=2025-01-01&metric_types=IMPRESSION", fuzzBearer, ""},
			{"GET", "/v5/pins/1/analytics?start_date=x&end_date=y&metric_types=ALL", fuzzBearer, ""},
		},
	}.run(f)
}

func FuzzBlueskySim(f *testing.F) {
	const account = "sbx_aa"
	simFuzz{newSim: NewBluesky, account: account,
		documented5xx: func(code int, body string) bool {
			return code == http.StatusNotImplemented && strings.Contains(body, `"error":"MethodNotImplemented"`)
		},
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/xrpc/com.atproto.server.createSession", "Content-Type: application/json",
				`{"identifier":"`+sandboxtoken.BlueskyHandle(account)+`","password":"tok"}`)
			var out struct {
				AccessJwt  string `json:"accessJwt"`
				RefreshJwt string `json:"refreshJwt"`
			}
			decodeInto(t, rec, &out)
			return map[string]string{"jwt": out.AccessJwt, "refresh": out.RefreshJwt, "did": BlueskyDID(account)}
		},
		seeds: []simFuzzSeed{
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
	}.run(f)
}

func FuzzMastodonSim(f *testing.F) {
	png := string(mediatest.PNG(f, 2, 2))
	simFuzz{newSim: NewMastodon, account: "109000000000000001",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			image := "--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n" +
				png + "\r\n--fz--\r\n"
			rec := do("POST", "/api/v2/media", fuzzBearer+"\n"+fuzzMultipartType, image)
			var out struct {
				ID string `json:"id"`
			}
			decodeInto(t, rec, &out)
			return map[string]string{"media": out.ID}
		},
		seeds: []simFuzzSeed{
			{"POST", "/api/v2/media", fuzzBearer + "\n" + fuzzMultipartType, fuzzMultipart("file", "description", "alt", "focus", "0.5,-2")},
			{"GET", "/api/v1/media/{media}", fuzzBearer, ""},
			{"POST", "/api/v1/statuses", fuzzJSON + "\nIdempotency-Key: k", `{"status":"hi @a@b.c https://e.x","media_ids":["{media}"],"visibility":"unlisted","sensitive":true,"spoiler_text":"cw","language":"en"}`},
			{"POST", "/api/v1/statuses", fuzzForm, "status=hi&media_ids[]={media}&visibility=public&scheduled_at=2026-03-01T12:10:00Z"},
			{"POST", "/api/v1/statuses", fuzzBearer + "\n" + fuzzMultipartType, fuzzMultipart("", "status", "x", "media_ids[]", "{media}")},
			{"GET", "/api/v1/statuses?id[]=1&id[]=2", fuzzBearer, ""},
			{"GET", "/api/v1/statuses/1/context", fuzzBearer, ""},
			{"GET", "/api/v1/accounts/109000000000000001/statuses?limit=80&max_id=x", fuzzBearer, ""},
			{"GET", "/api/v1/accounts/verify_credentials", fuzzBearer, ""},
			{"GET", "/api/v2/instance", "", ""},
		},
	}.run(f)
}

func FuzzTelegramSim(f *testing.F) {
	const account = "sbx_00aa11bb22cc33dd"
	chat := strconv.FormatInt(TelegramChatID(account), 10)
	simFuzz{newSim: NewTelegram, account: account, seeds: []simFuzzSeed{
		{"POST", "/bottok/sendVideo", fuzzMultipartType, fuzzMultipart("video", "chat_id", chat, "caption", "<b>hi</b>", "parse_mode", "HTML", "supports_streaming", "true", "width", "-1")},
		{"POST", "/bottok/sendVideo", fuzzMultipartType, fuzzMultipart("video", "chat_id", "@"+account, "thumbnail", "attach://thumb")},
		{"POST", "/bottok/sendVideo", "Content-Type: application/json", `{"chat_id":` + chat + `,"video":"https://cdn.example/v.mp4","caption":"c","parse_mode":"MarkdownV2"}`},
		{"POST", "/bottok/sendVideo", "Content-Type: application/x-www-form-urlencoded", "chat_id=" + chat + "&video=BAACAgIAAx"},
		{"GET", "/bottok/sendVideo?chat_id=" + chat + "&video=x", "", ""},
		{"GET", "/bottok/getMe", "", ""},
		{"POST", "/bottok/getChat", "Content-Type: application/json", `{"chat_id":"@` + account + `"}`},
		{"GET", "/bottok/getChatMember?chat_id=" + chat + "&user_id=abc", "", ""},
	}}.run(f)
}

func FuzzDiscordSim(f *testing.F) {
	const account = "sbx_99aa11bb22cc33dd"
	channel := DiscordChannelID(account)
	payload := `{"content":"hi","username":"u","attachments":[{"id":0,"filename":"v.mp4","description":"d"}],"flags":4}`
	withFile := "--fz\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n" + payload +
		"\r\n--fz\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n0123456789\r\n--fz--\r\n"
	simFuzz{newSim: NewDiscord, account: account, seeds: []simFuzzSeed{
		{"POST", "/api/v10/webhooks/" + account + "/tok?wait=true", fuzzMultipartType, withFile},
		{"POST", "/api/webhooks/" + account + "/tok?wait=maybe&thread_id=x", "Content-Type: application/json", `{"content":"hi","embeds":[{}]}`},
		{"GET", "/api/webhooks/" + account + "/tok", "", ""},
		{"POST", "/api/v10/channels/" + channel + "/messages", "Authorization: Bot tok\n" + fuzzMultipartType, withFile},
		{"POST", "/api/v10/channels/" + channel + "/messages", "Authorization: Bot tok\nContent-Type: application/json", `{"content":"","attachments":[]}`},
		{"GET", "/api/v10/channels/" + channel + "/messages?limit=500&before=x", "Authorization: Bot tok", ""},
		{"GET", "/api/v10/channels/" + channel, "Authorization: Bot tok", ""},
		{"GET", "/api/v10/users/@me", "Authorization: Bot tok", ""},
	}}.run(f)
}

const fuzzReddit = "Authorization: bearer tok\nUser-Agent: test:reelay:1 (by /u/someone)"

func FuzzRedditSim(f *testing.F) {
	simFuzz{newSim: NewReddit, account: "t2_u1",
		prepare: func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string {
			rec := do("POST", "/api/media/asset.json", fuzzReddit+"\nContent-Type: application/x-www-form-urlencoded", "filepath=v.mp4&mimetype=video%2Fmp4")
			var out redditTestLease
			decodeInto(t, rec, &out)
			var form strings.Builder
			for _, fld := range out.Args.Fields {
				fmt.Fprintf(&form, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", fld.Name, fld.Value)
			}
			action := out.Args.Action
			if strings.HasPrefix(action, "//") {
				action = "https:" + action
			}
			return map[string]string{"upload": pathOf(t, action), "fields": form.String(), "asset": out.Asset.AssetID}
		},
		seeds: []simFuzzSeed{
			{"POST", "{upload}", fuzzMultipartType, "{fields}--fz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n0123456789\r\n--fz--\r\n"},
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
	}.run(f)
}
