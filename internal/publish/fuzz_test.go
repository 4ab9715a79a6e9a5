package publish_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

var fuzzNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// platformNames are the twelve platforms a request may name, as the per-platform objects do.
var platformNames = []string{"youtube", "instagram", "tiktok", "linkedin", "pinterest", "threads", "facebook",
	"bluesky", "telegram", "discord", "mastodon", "reddit"}

// clientStatus is the status the API would answer err with: an *apierr.Error's own, 413 for an
// exceeded body limit (as writeError maps it) and 500 for anything else.
func clientStatus(err error) int {
	var ae *apierr.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae.Status
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusInternalServerError
	}
}

// FuzzRequestJSON feeds arbitrary bodies to what POST /publish does with a JSON body before it
// needs the database: apierr.DecodeJSON into a publish.Request, then CheckStatic and each
// platform's EffectiveOptions, as Submit calls them. Nothing may panic, and every refusal must
// be a 4xx the contract can carry.
func FuzzRequestJSON(f *testing.F) {
	seeds := []string{
		`{"project_id":"6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11","video_url":"https://cdn.example/v.mp4","title":"Hello","caption":"A caption #go","platforms":["youtube","tiktok"]}`,
		`{"project_id":"6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11","video_url":"https://cdn.example/v.mp4","channel_ids":["a","b"],"scheduled_for":"2026-12-01T10:00:00Z","allow_duplicate":true}`,
		`{"project_id":"p","video_url":"https://x/v.mp4","youtube":{"title":"t","description":"d","privacy_status":"unlisted","made_for_kids":false,"category_id":"22"}}`,
		`{"video_url":"https://x/v.mp4","youtube":{"category_id":22},"instagram":{"caption":"c","share_to_feed":true},"tiktok":{"mode":"direct","privacy_level":"SELF_ONLY","is_aigc":true}}`,
		`{"video_url":"https://x/v.mp4","linkedin":{"commentary":"c","title":"t"},"pinterest":{"title":"t","description":"d","link":"https://e.x","board_id":"123"}}`,
		`{"video_url":"https://x/v.mp4","threads":{"text":"t"},"facebook":{"text":"t"},"bluesky":{"text":"see https://example.com/a/very/long/path"}}`,
		`{"video_url":"https://x/v.mp4","mastodon":{"text":"hi @a@example.social https://e.x","visibility":"unlisted","sensitive":true,"spoiler_text":"cw","language":"en","description":"alt"}}`,
		`{"video_url":"https://x/v.mp4","telegram":{"caption":"c"},"discord":{"content":"c"},"reddit":{"title":"t","subreddit":"golang","nsfw":false,"flair_id":"f","flair_text":"x"}}`,
		`{"caption":"line\r\nbreak\u0000","title":"\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67"}`,
		`{"platforms":"youtube"}`, `{"youtube":null}`, `{"unknown":1}`, `{} {}`, `[`, ``, `null`, `{"title":1e999}`,
		`{"project_id":"a","project_id":"b"}`, "{\"title\":\"\xff\"}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req publish.Request
		if err := apierr.DecodeJSON(bytes.NewReader(body), &req); err != nil {
			if s := clientStatus(err); s < 400 || s > 499 {
				t.Fatalf("decoding answered %d: %v", s, err)
			}
			return
		}
		for _, upload := range []bool{false, true} {
			r := req
			_, fields := r.CheckStatic(fuzzNow, upload, false)
			for _, name := range append(platformNames, r.Platforms...) {
				r.EffectiveOptions(name, &fields)
			}
			if err := fields.Err(); err != nil {
				if s := clientStatus(err); s < 400 || s > 499 {
					t.Fatalf("validation answered %d: %v", s, err)
				}
			}
		}
		publish.RequestHash("json", string(body))
	})
}

// formEnv is what ReadRequestForm needs: an account in a real SQLite store, and media
// storage in a bucket the test can list.
type formEnv struct {
	svc     *publish.Service
	bucket  *blob.Bucket
	account string
}

func newFormEnv(tb testing.TB) *formEnv {
	tb.Helper()
	st := storetest.New(tb, store.SQLite)
	bucket := memblob.OpenBucket(nil)
	ms, err := media.NewStore(bucket, nil, media.WithRegistry(publish.MediaRegistry{Store: st}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ms.Close() })
	tenant := apptest.NewTenant(tb, st, "fuzz", "first")
	return &formEnv{svc: &publish.Service{Store: st, Media: ms, Now: func() time.Time { return fuzzNow }},
		bucket: bucket, account: tenant.AccountID}
}

// blobs lists every object in storage, temporary ones included.
func (e *formEnv) blobs(tb testing.TB) []string {
	tb.Helper()
	var keys []string
	it := e.bucket.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, obj.Key)
	}
}

// tripwire remembers whether the body limit was reached.
type tripwire struct {
	r       io.Reader
	tripped bool
}

func (t *tripwire) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		t.tripped = true
	}
	return n, err
}

// multipartBody builds a form of parts (name, file name or "" for a plain field, content).
func multipartBody(boundary string, parts ...[3]string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\n", boundary)
		if p[1] != "" {
			fmt.Fprintf(&b, "Content-Disposition: form-data; name=%q; filename=%q\r\nContent-Type: application/octet-stream\r\n\r\n", p[0], p[1])
		} else {
			fmt.Fprintf(&b, "Content-Disposition: form-data; name=%q\r\n\r\n", p[0])
		}
		b.WriteString(p[2])
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

// FuzzReadForm feeds arbitrary multipart bodies, under an arbitrary boundary and body limit, to
// ReadRequestForm, the reader of the API's and the dashboard's publish forms. It must not
// panic; a refusal must be a 4xx, and 413 whenever the body limit was what stopped it; and
// once the request is over (refused, or accepted and then discarded as a refused Submit
// does) no blob may be left in storage, temporary or kept.
func FuzzReadForm(f *testing.F) {
	env := newFormEnv(f)
	small := mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10}
	mp4 := string(mediatest.MP4Bytes(f, small))
	png := string(mediatest.PNG(f, 2, 2))
	const bd = "XyZ"
	fields := [][3]string{
		{"project_id", "", "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11"},
		{"platforms", "", "youtube,tiktok"},
		{"title", "", "Hello"},
		{"caption", "", "A caption\r\n#go"},
		{"youtube", "", `{"privacy_status":"unlisted"}`},
		{"allow_duplicate", "", "true"},
	}
	f.Add(multipartBody(bd, append(fields, [3]string{"video", "v.mp4", mp4}, [3]string{"thumbnail", "t.png", png})...), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"video", "v.mp4", mp4}, [3]string{"title", "", "after the file"}), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"video", "v.mp4", mp4}), bd, uint32(len(mp4)/2))
	f.Add(multipartBody(bd, [3]string{"video", "v.mp4", mp4}, [3]string{"video", "w.mp4", mp4}), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"thumbnail", "t.png", png}, [3]string{"video", "v.mp4", png}), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"platforms", "", `["youtube"`}), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"bogus", "", "x"}), bd, uint32(0))
	f.Add(multipartBody(bd, [3]string{"video", strings.Repeat("n", 1100), mp4}), bd, uint32(0))
	f.Add([]byte("--"+bd+"\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nno end"), bd, uint32(0))
	f.Add([]byte("garbage"), "", uint32(0))
	f.Fuzz(func(t *testing.T, body []byte, boundary string, limit uint32) {
		contentType := "multipart/form-data"
		if boundary != "" {
			contentType = mime.FormatMediaType("multipart/form-data", map[string]string{"boundary": boundary})
			if contentType == "" {
				contentType = "multipart/form-data; boundary=" + boundary
			}
		}
		bound := int64(publish.MaxFormBytes)
		if limit > 0 {
			bound = int64(limit)
		}
		rec := httptest.NewRecorder()
		wire := &tripwire{r: http.MaxBytesReader(rec, io.NopCloser(bytes.NewReader(body)), bound)}
		req := httptest.NewRequest(http.MethodPost, "/v1/publish", io.NopCloser(wire))
		req.Header.Set("Content-Type", contentType)
		req.ContentLength = -1 // the declared length is refused before reading; the fuzzer tests the reading
		sub := publish.Submission{AccountID: env.account}
		err := env.svc.ReadRequestForm(req, &sub)
		if err != nil {
			if sub.Video != nil || sub.Thumbnail != nil {
				t.Fatalf("refused (%v) yet holds files", err)
			}
			s := clientStatus(err)
			if s < 400 || s > 499 {
				t.Fatalf("refused with %d: %v", s, err)
			}
			if wire.tripped && s != http.StatusRequestEntityTooLarge {
				t.Fatalf("the body limit of %d bytes was reached, yet refused with %d: %v", bound, s, err)
			}
		} else {
			// A form complete within the limit may be followed by bytes past it, which are
			// the multipart epilogue and ignored: taking the form is right.
			env.svc.Discard(sub.Video, sub.Thumbnail)
		}
		if left := env.blobs(t); len(left) > 0 {
			t.Fatalf("left in storage: %v (error %v)", left, err)
		}
	})
}

// TestReadFormBrokenBodies pins what FuzzReadForm found: a form that is malformed or ends
// early is the client's fault (400), and one stopped by the body limit is 413 even where
// mime/multipart reports the cut as a malformed header; nothing is left in storage.
func TestReadFormBrokenBodies(t *testing.T) {
	env := newFormEnv(t)
	video := string(mediatest.MP4Bytes(t, mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10}))
	cases := []struct {
		name   string
		body   string
		limit  int64
		status int
	}{
		{"field cut off", "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nno end", 0, 400},
		{"file cut off", "--b\r\nContent-Disposition: form-data; name=\"video\"; filename=\"v.mp4\"\r\n\r\n" + video[:len(video)/2], 0, 400},
		{"part header without colon", "--b\r\nContent-Disposition form-data\r\n\r\nx\r\n--b--\r\n", 0, 400},
		{"header cut by the limit", "--b\r\n" + strings.Repeat("0", 100), 40, 413},
		{"file cut by the limit", string(multipartBody("b", [3]string{"video", "v.mp4", video})), int64(len(video) / 2), 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bound := int64(publish.MaxFormBytes)
			if tc.limit > 0 {
				bound = tc.limit
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/v1/publish", http.MaxBytesReader(rec, io.NopCloser(strings.NewReader(tc.body)), bound))
			req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
			req.ContentLength = -1
			sub := publish.Submission{AccountID: env.account}
			err := env.svc.ReadRequestForm(req, &sub)
			if got := clientStatus(err); err == nil || got != tc.status {
				t.Fatalf("answered %d (%v), want %d", got, err, tc.status)
			}
			if left := env.blobs(t); len(left) > 0 {
				t.Fatalf("left in storage: %v", left)
			}
		})
	}
}
