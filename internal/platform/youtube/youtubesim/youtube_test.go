package youtubesim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/store/storetest"
)

type ytEnv struct {
	t     *testing.T
	base  string // the simulator's base URL, below a /sandbox/youtube mount
	addr  string
	rec   *sim.Recorder
	clock *clocktest.Clock
	spool string // where upload requests spool what they receive
}

var ytTestAccounts = sim.StaticAccounts{
	"tok-alice":  {ID: "alice", Username: "Alice"},
	"tok-bob":    {ID: "bob", Username: "Bob"},
	"tok-down":   {ID: "down", Behavior: sim.Behavior{Fail: sim.FailUnavailable, ProcessingMS: -1}},
	"tok-authx":  {ID: "authx", Behavior: sim.Behavior{Fail: sim.FailAuth, ProcessingMS: -1}},
	"tok-slow":   {ID: "slow", Behavior: sim.Behavior{Fail: sim.FailRateLimit, ProcessingMS: -1}},
	"tok-reject": {ID: "reject", Behavior: sim.Behavior{Fail: sim.FailReject, ProcessingMS: 1000}},
	"tok-dflt":   {ID: "dflt", Behavior: sim.Behavior{ProcessingMS: -1}},
	"tok-q2000":  {ID: "q2000", Behavior: sim.Behavior{ProcessingMS: -1, DailyQuotaUnits: ptr(2000)}},
	"tok-noq":    {ID: "noq", Behavior: sim.Behavior{ProcessingMS: -1, DailyQuotaUnits: ptr(-1)}},
}

func ptr[T any](v T) *T { return &v }

func newYTEnv(t *testing.T, opt Options) *ytEnv {
	t.Helper()
	clock := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	rec := &sim.Recorder{}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/sandbox/youtube"
	opt.SpoolDir = t.TempDir()
	h := NewWith(sim.Config{BaseURL: base, Accounts: ytTestAccounts, Recorder: rec, Now: clock.Now}, opt)
	mux := http.NewServeMux()
	mux.Handle("/sandbox/youtube/", http.StripPrefix("/sandbox/youtube", h))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &ytEnv{t: t, base: base, addr: srv.Listener.Addr().String(), rec: rec, clock: clock, spool: opt.SpoolDir}
}

// do sends a request to a path below the base URL (or an absolute URL) and returns the
// answer with its body read.
func (e *ytEnv) do(method, target, token string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	e.t.Helper()
	if !strings.HasPrefix(target, "http") {
		target = e.base + target
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

const ytMeta1 = `{"snippet":{"title":"My short","description":"A description #shorts","categoryId":"22"},"status":{"privacyStatus":"unlisted","selfDeclaredMadeForKids":false}}`

// start opens a resumable session and returns its URI.
func (e *ytEnv) start(token string, size int64, meta string) string {
	e.t.Helper()
	hdr := map[string]string{"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Type": "video/mp4"}
	if size >= 0 {
		hdr["X-Upload-Content-Length"] = strconv.FormatInt(size, 10)
	}
	resp, body := e.do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", token, hdr, []byte(meta))
	if resp.StatusCode != 200 {
		e.t.Fatalf("start: %d %s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, e.base+"/upload/youtube/v3/videos?") || !strings.Contains(loc, "upload_id=") {
		e.t.Fatalf("Location = %q", loc)
	}
	return loc
}

func (e *ytEnv) put(session, token, contentRange string, chunk []byte) (*http.Response, []byte) {
	e.t.Helper()
	return e.do("PUT", session, token, map[string]string{"Content-Range": contentRange, "Content-Type": "video/mp4"}, chunk)
}

// ytTestVideo returns a valid MP4 of exactly n bytes (n ≥ 10,000): a 2-second 1080×1920
// video, padded.
func ytTestVideo(t *testing.T, n int) []byte {
	t.Helper()
	b := mediatest.MP4Bytes(t, mediatest.Options{Size: int64(n)})
	if len(b) != n {
		t.Fatalf("test video of %d bytes, want %d", len(b), n)
	}
	return b
}

func ytSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ytErrorOf checks Google's error shape and returns the code and first reason.
func ytErrorOf(t *testing.T, body []byte) (int, string, string) {
	t.Helper()
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Errors  []struct {
				Domain  string `json:"domain"`
				Reason  string `json:"reason"`
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == 0 || e.Error.Message == "" || len(e.Error.Errors) != 1 ||
		e.Error.Errors[0].Domain == "" || e.Error.Errors[0].Reason == "" || e.Error.Errors[0].Message == "" {
		t.Fatalf("not a Google error body: %s", body)
	}
	return e.Error.Code, e.Error.Errors[0].Domain, e.Error.Errors[0].Reason
}

type ytListed struct {
	Items []struct {
		ID      string `json:"id"`
		Snippet struct {
			Title, Description, CategoryID, ChannelID string
		} `json:"snippet"`
		Status struct {
			UploadStatus, PrivacyStatus, RejectionReason, FailureReason string
			SelfDeclaredMadeForKids                                     *bool
		} `json:"status"`
		ProcessingDetails struct {
			ProcessingStatus   string
			ProcessingProgress *struct{ PartsTotal, PartsProcessed, TimeLeftMs string }
		} `json:"processingDetails"`
	} `json:"items"`
}

func (e *ytEnv) list(token, id string) ytListed {
	e.t.Helper()
	resp, body := e.do("GET", "/youtube/v3/videos?part=snippet,status,processingDetails&id="+id, token, nil, nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("videos.list: %d %s", resp.StatusCode, body)
	}
	var l ytListed
	if err := json.Unmarshal(body, &l); err != nil {
		e.t.Fatal(err)
	}
	return l
}

func TestYouTubeResumableUpload(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	video := ytTestVideo(t, 3*ytChunkQuantum+1234)
	size := len(video)
	sess := e.start("tok-dflt", int64(size), ytMeta1)

	// Nothing received yet: 308 without Range.
	resp, _ := e.put(sess, "tok-dflt", fmt.Sprintf("bytes */%d", size), nil)
	if resp.StatusCode != 308 || resp.Header.Get("Range") != "" {
		t.Fatalf("empty status query: %d Range=%q", resp.StatusCode, resp.Header.Get("Range"))
	}
	// Two chunks of 256 KiB, then the status query reports them.
	for i := 0; i < 2; i++ {
		a, b := i*ytChunkQuantum, (i+1)*ytChunkQuantum
		resp, body := e.put(sess, "tok-dflt", fmt.Sprintf("bytes %d-%d/%d", a, b-1, size), video[a:b])
		if resp.StatusCode != 308 || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", b-1) {
			t.Fatalf("chunk %d: %d Range=%q %s", i, resp.StatusCode, resp.Header.Get("Range"), body)
		}
	}
	resp, _ = e.put(sess, "tok-dflt", fmt.Sprintf("bytes */%d", size), nil)
	if resp.StatusCode != 308 || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", 2*ytChunkQuantum-1) {
		t.Fatalf("status query: %d Range=%q", resp.StatusCode, resp.Header.Get("Range"))
	}
	// The last chunk (any size) completes the upload: 201 with the video resource.
	a := 2 * ytChunkQuantum
	resp, body := e.put(sess, "tok-dflt", fmt.Sprintf("bytes %d-%d/%d", a, size-1, size), video[a:])
	if resp.StatusCode != 201 {
		t.Fatalf("last chunk: %d %s", resp.StatusCode, body)
	}
	var v struct {
		ID      string `json:"id"`
		Snippet struct{ Title string }
		Status  struct{ UploadStatus, PrivacyStatus string }
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.ID) != 11 || v.Snippet.Title != "My short" ||
		v.Status.UploadStatus != "uploaded" || v.Status.PrivacyStatus != "unlisted" {
		t.Fatalf("video resource: %s", body)
	}
	// A later status query gets the same answer.
	resp, body = e.put(sess, "tok-dflt", fmt.Sprintf("bytes */%d", size), nil)
	if resp.StatusCode != 201 || !strings.Contains(string(body), v.ID) {
		t.Fatalf("status query after completion: %d %s", resp.StatusCode, body)
	}
	snap := e.rec.Snapshot(nil)
	if len(snap.Uploads) != 1 || snap.Uploads[0] != (sim.Upload{Account: "dflt", Bytes: int64(size), SHA256: ytSHA(video)}) {
		t.Fatalf("uploads = %+v", snap.Uploads)
	}

	// Processing: uploaded/processing until the default 2 s are over, then processed/succeeded.
	l := e.list("tok-dflt", v.ID)
	if len(l.Items) != 1 || l.Items[0].Status.UploadStatus != "uploaded" || l.Items[0].ProcessingDetails.ProcessingStatus != "processing" ||
		l.Items[0].ProcessingDetails.ProcessingProgress == nil || l.Items[0].ProcessingDetails.ProcessingProgress.TimeLeftMs != "2000" {
		t.Fatalf("while processing: %+v", l)
	}
	if len(e.rec.Snapshot(nil).Published) != 0 {
		t.Fatal("published before processing ended")
	}
	e.clock.Advance(2 * time.Second)
	l = e.list("tok-dflt", v.ID)
	if l.Items[0].Status.UploadStatus != "processed" || l.Items[0].ProcessingDetails.ProcessingStatus != "succeeded" {
		t.Fatalf("after processing: %+v", l)
	}
	pub := e.rec.Snapshot(nil).Published
	if len(pub) != 1 || pub[0].ID != v.ID || pub[0].SHA256 != ytSHA(video) || pub[0].Text != "My short" || pub[0].Account != "dflt" ||
		pub[0].URL != "https://www.youtube.com/shorts/"+v.ID {
		t.Fatalf("published = %+v", pub)
	}
	// Another account sees the unlisted video, without processingDetails; a private one it
	// would not see.
	l = e.list("tok-bob", v.ID)
	if len(l.Items) != 1 || l.Items[0].ProcessingDetails.ProcessingStatus != "" || l.Items[0].Status.SelfDeclaredMadeForKids != nil {
		t.Fatalf("seen by another account: %+v", l)
	}
}

// TestYouTubeClientLibraryDialect replays what google.golang.org/api's resumable upload sends:
// no X-Upload-Content-Length, chunks by POST with "bytes a-b/*" and X-GUploader-No-308, and
// the total announced by an empty final request when the size is a multiple of the chunk.
func TestYouTubeClientLibraryDialect(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	video := ytTestVideo(t, 2*ytChunkQuantum)
	sess := e.start("tok-alice", -1, ytMeta1)
	for i := 0; i < 2; i++ {
		a, b := i*ytChunkQuantum, (i+1)*ytChunkQuantum
		resp, body := e.do("POST", sess, "tok-alice", map[string]string{
			"Content-Range": fmt.Sprintf("bytes %d-%d/*", a, b-1), "X-GUploader-No-308": "yes", "Content-Type": "video/mp4",
		}, video[a:b])
		if resp.StatusCode != 200 || resp.Header.Get("X-HTTP-Status-Code-Override") != "308" || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", b-1) {
			t.Fatalf("chunk %d: %d %v %s", i, resp.StatusCode, resp.Header, body)
		}
	}
	resp, body := e.do("POST", sess, "tok-alice", map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", len(video)), "X-GUploader-No-308": "yes"}, nil)
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"youtube#video"`) {
		t.Fatalf("final: %d %s", resp.StatusCode, body)
	}

	// uploadType=multipart: the metadata and the media in one multipart/related body.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	p, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
	p.Write([]byte(ytMeta1))
	small := ytTestVideo(t, 12000)
	p, _ = mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"video/mp4"}})
	p.Write(small)
	mw.Close()
	resp, body = e.do("POST", "/upload/youtube/v3/videos?uploadType=multipart&part=snippet,status", "tok-alice",
		map[string]string{"Content-Type": "multipart/related; boundary=" + mw.Boundary()}, buf.Bytes())
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"My short"`) {
		t.Fatalf("multipart insert: %d %s", resp.StatusCode, body)
	}
	up := e.rec.Snapshot(nil).Uploads
	if len(up) != 2 || up[0].SHA256 != ytSHA(video) || up[1].SHA256 != ytSHA(small) {
		t.Fatalf("uploads = %+v", up)
	}
}

func TestYouTubeStrictness(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	meta := func(title, desc, cat, privacy string) string {
		b, _ := json.Marshal(map[string]any{
			"snippet": map[string]any{"title": title, "description": desc, "categoryId": cat},
			"status":  map[string]any{"privacyStatus": privacy},
		})
		return string(b)
	}
	startURL := "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status"
	jsonHdr := map[string]string{"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Length": "600000", "X-Upload-Content-Type": "video/mp4"}
	for _, c := range []struct {
		name, target, token, body string
		hdr                       map[string]string
		code                      int
		reason                    string
	}{
		{"missing auth", startURL, "", ytMeta1, jsonHdr, 401, "required"},
		{"unknown token", startURL, "tok-nobody", ytMeta1, jsonHdr, 401, "authError"},
		{"title too long", startURL, "tok-alice", meta(strings.Repeat("é", 101), "", "22", "public"), jsonHdr, 400, "invalidTitle"},
		{"title of 100 characters is fine", startURL, "tok-alice", meta(strings.Repeat("é", 100), "", "22", "public"), jsonHdr, 200, ""},
		{"empty title", startURL, "tok-alice", meta("  ", "", "22", "public"), jsonHdr, 400, "invalidTitle"},
		{"no snippet", startURL, "tok-alice", `{"status":{"privacyStatus":"public"}}`, jsonHdr, 400, "invalidTitle"},
		{"title with <", startURL, "tok-alice", meta("a <b> title", "", "22", "public"), jsonHdr, 400, "invalidTitle"},
		{"description over 5000 bytes", startURL, "tok-alice", meta("t", strings.Repeat("é", 2501), "22", "public"), jsonHdr, 400, "invalidDescription"},
		{"description with >", startURL, "tok-alice", meta("t", "1 > 0", "22", "public"), jsonHdr, 400, "invalidDescription"},
		{"unknown privacy", startURL, "tok-alice", meta("t", "", "22", "friends"), jsonHdr, 400, "invalidVideoMetadata"},
		{"unknown category", startURL, "tok-alice", meta("t", "", "99", "public"), jsonHdr, 400, "invalidCategoryId"},
		{"category not assignable", startURL, "tok-alice", meta("t", "", "42", "public"), jsonHdr, 400, "invalidCategoryId"},
		{"publishAt without private", startURL, "tok-alice", `{"snippet":{"title":"t"},"status":{"privacyStatus":"public","publishAt":"2030-01-01T00:00:00Z"}}`, jsonHdr, 400, "invalidPublishAt"},
		{"not a video type", startURL, "tok-alice", ytMeta1, map[string]string{"Content-Type": "application/json", "X-Upload-Content-Type": "image/png"}, 400, "badContent"},
		{"bad JSON", startURL, "tok-alice", `{"snippet":`, jsonHdr, 400, "parseError"},
		{"no part", "/upload/youtube/v3/videos?uploadType=resumable", "tok-alice", ytMeta1, jsonHdr, 400, "required"},
		{"unknown part", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,bogus", "tok-alice", ytMeta1, jsonHdr, 400, "unknownPart"},
		{"no uploadType", "/upload/youtube/v3/videos?part=snippet", "tok-alice", ytMeta1, jsonHdr, 400, "badRequest"},
		{"zero length", startURL, "tok-alice", ytMeta1, map[string]string{"Content-Type": "application/json", "X-Upload-Content-Length": "0"}, 400, "mediaBodyRequired"},
		{"insert on the metadata path", "/youtube/v3/videos?part=snippet", "tok-alice", ytMeta1, jsonHdr, 400, "wrongUrlForUpload"},
		{"list without filter", "/youtube/v3/videos?part=status", "tok-alice", "", nil, 400, "missingRequiredParameter"},
		{"unknown path", "/youtube/v3/nothing", "tok-alice", "", nil, 404, "notFound"},
	} {
		method := "POST"
		if c.body == "" {
			method = "GET"
		}
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		resp, got := e.do(method, c.target, c.token, c.hdr, body)
		if resp.StatusCode != c.code {
			t.Errorf("%s: %d, want %d: %s", c.name, resp.StatusCode, c.code, got)
			continue
		}
		if c.reason == "" {
			continue
		}
		if code, _, reason := ytErrorOf(t, got); code != c.code || reason != c.reason {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, reason, c.code, c.reason)
		}
		if c.code == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
	}

	// Chunk rules, on one session of 600000 bytes.
	video := ytTestVideo(t, 600000)
	sess := e.start("tok-alice", int64(len(video)), ytMeta1)
	for _, c := range []struct {
		name, token, contentRange string
		chunk                     []byte
		code                      int
		reason                    string
	}{
		{"chunk not a multiple of 256 KiB", "tok-alice", "bytes 0-99999/600000", video[:100000], 400, "badRequest"},
		{"chunk that skips bytes", "tok-alice", "bytes 262144-524287/600000", video[262144:524288], 400, "badRequest"},
		{"total other than announced", "tok-alice", "bytes 0-262143/700000", video[:262144], 400, "badRequest"},
		{"range past the end", "tok-alice", "bytes 0-600000/600000", video[:262144], 400, "badRequest"},
		{"unparsable Content-Range", "tok-alice", "bytes=0-262143", video[:262144], 400, "badRequest"},
		{"status query with a body", "tok-alice", "bytes */600000", video[:10], 400, "badRequest"},
		{"another account's session", "tok-bob", "bytes 0-262143/600000", video[:262144], 403, "forbidden"},
		{"no credentials on the session", "", "bytes 0-262143/600000", video[:262144], 401, "required"},
	} {
		resp, got := e.put(sess, c.token, c.contentRange, c.chunk)
		if resp.StatusCode != c.code {
			t.Errorf("%s: %d, want %d: %s", c.name, resp.StatusCode, c.code, got)
			continue
		}
		if code, _, reason := ytErrorOf(t, got); reason != c.reason || code != c.code {
			t.Errorf("%s: %s, want %s", c.name, reason, c.reason)
		}
	}
	// None of that moved the session.
	if resp, _ := e.put(sess, "tok-alice", "bytes */600000", nil); resp.StatusCode != 308 || resp.Header.Get("Range") != "" {
		t.Fatalf("session moved: %d %q", resp.StatusCode, resp.Header.Get("Range"))
	}
	// An unknown session is 404.
	if resp, _ := e.put(e.base+"/upload/youtube/v3/videos?uploadType=resumable&upload_id=nope", "tok-alice", "bytes */600000", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown session: %d", resp.StatusCode)
	}
	if n := len(e.rec.Snapshot(nil).Uploads); n != 0 {
		t.Fatalf("%d uploads recorded", n)
	}
}

// TestYouTubePartialChunk cuts a chunk off mid-body: the session keeps what arrived, rounded
// down to 256 KiB.
func TestYouTubePartialChunk(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	video := ytTestVideo(t, 3*ytChunkQuantum)
	sess := e.start("tok-alice", int64(len(video)), ytMeta1)
	u, _ := url.Parse(sess)

	conn, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	sent := ytChunkQuantum + 40000 // of a 2×256 KiB chunk
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-alice\r\nContent-Type: video/mp4\r\nContent-Range: bytes 0-%d/%d\r\nContent-Length: %d\r\n\r\n",
		u.RequestURI(), e.addr, 2*ytChunkQuantum-1, len(video), 2*ytChunkQuantum)
	if _, err := conn.Write(video[:sent]); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, conn)
	conn.Close()

	resp, _ := e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", len(video)), nil)
	if resp.StatusCode != 308 || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", ytChunkQuantum-1) {
		t.Fatalf("after a cut chunk: %d Range=%q", resp.StatusCode, resp.Header.Get("Range"))
	}
	a := ytChunkQuantum
	resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes %d-%d/%d", a, len(video)-1, len(video)), video[a:])
	if resp.StatusCode != 201 {
		t.Fatalf("resume: %d %s", resp.StatusCode, body)
	}
	if up := e.rec.Snapshot(nil).Uploads; len(up) != 1 || up[0].SHA256 != ytSHA(video) {
		t.Fatalf("uploads = %+v", up)
	}
}

// TestYouTubeConcurrentChunks: a chunk whose body is still arriving when another request on the
// session moves it on is answered as if it had come after that request, and keeps nothing.
func TestYouTubeConcurrentChunks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		other     func(video []byte) (string, []byte) // the other request's Content-Range and body
		wantOther int
		want      int    // the slow chunk's answer
		wantRange string // the session's, after both
		uploads   int
	}{
		{"the other completes the upload", func(v []byte) (string, []byte) {
			return fmt.Sprintf("bytes 0-%d/%d", len(v)-1, len(v)), v
		}, 201, 201, "", 1},
		{"the other keeps a chunk", func(v []byte) (string, []byte) {
			return fmt.Sprintf("bytes 0-%d/%d", ytChunkQuantum-1, len(v)), v[:ytChunkQuantum]
		}, 308, 400, fmt.Sprintf("bytes=0-%d", ytChunkQuantum-1), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newYTEnv(t, Options{})
			video := ytTestVideo(t, 3*ytChunkQuantum)
			sess := e.start("tok-alice", int64(len(video)), ytMeta1)
			u, _ := url.Parse(sess)
			conn, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-alice\r\nContent-Type: video/mp4\r\nContent-Range: bytes 0-%d/%d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
				u.RequestURI(), e.addr, 2*ytChunkQuantum-1, len(video), 2*ytChunkQuantum)
			if _, err := conn.Write(video[:ytChunkQuantum]); err != nil {
				t.Fatal(err)
			}
			// While the slow chunk's body arrives, the other request goes through.
			time.Sleep(50 * time.Millisecond)
			cr, body := c.other(video)
			if resp, b := e.put(sess, "tok-alice", cr, body); resp.StatusCode != c.wantOther {
				t.Fatalf("the other request: %d %s", resp.StatusCode, b)
			}
			if _, err := conn.Write(video[ytChunkQuantum : 2*ytChunkQuantum]); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.want {
				t.Fatalf("the slow chunk: %d %s, want %d", resp.StatusCode, b, c.want)
			}
			if c.want == 400 {
				if _, _, reason := ytErrorOf(t, b); reason != "badRequest" {
					t.Errorf("the slow chunk: %s", b)
				}
			}
			resp, b = e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", len(video)), nil)
			if c.wantRange != "" && (resp.StatusCode != 308 || resp.Header.Get("Range") != c.wantRange) {
				t.Errorf("the session after both: %d Range=%q, want %s", resp.StatusCode, resp.Header.Get("Range"), c.wantRange)
			}
			if n := len(e.rec.Snapshot(nil).Uploads); n != c.uploads {
				t.Errorf("%d uploads recorded", n)
			}
		})
	}
}

func TestYouTubeSessionExpiry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ttl  time.Duration
		wait time.Duration
		code int
	}{
		{"default week, still alive", 0, 7*24*time.Hour - time.Minute, 308},
		{"default week, expired", 0, 7 * 24 * time.Hour, 404},
		{"configured hour, expired", time.Hour, 61 * time.Minute, 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newYTEnv(t, Options{SessionTTL: c.ttl})
			video := ytTestVideo(t, 2*ytChunkQuantum)
			sess := e.start("tok-alice", int64(len(video)), ytMeta1)
			if resp, _ := e.put(sess, "tok-alice", fmt.Sprintf("bytes 0-%d/%d", ytChunkQuantum-1, len(video)), video[:ytChunkQuantum]); resp.StatusCode != 308 {
				t.Fatalf("chunk: %d", resp.StatusCode)
			}
			e.clock.Advance(c.wait)
			resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", len(video)), nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status query: %d, want %d: %s", resp.StatusCode, c.code, body)
			}
			if c.code == 404 {
				ytErrorOf(t, body)
			}
		})
	}
}

// TestYouTubeAbandonedSessionForgotten: between its requests a session keeps what it received
// in blob storage, nothing in the process; once the session expires, and not before, it is
// among the expired records whose blobs housekeeping deletes, and all of its blobs are below
// its prefix.
func TestYouTubeAbandonedSessionForgotten(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clock := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
			db, blobs := storetest.New(t, d), memblob.OpenBucket(nil)
			e, sw, process := newYTProcesses(t, db.SimState(clock.Now), blobs, clock, ytTestAccounts, Options{SessionTTL: time.Hour})
			sw.set(process())
			// Two chunks' worth: more than a spool keeps in memory, so it went through a file.
			video := ytTestVideo(t, 3*ytChunkQuantum)
			sess := e.start("tok-alice", int64(len(video)), ytMeta1)
			if resp, _ := e.put(sess, "tok-alice", fmt.Sprintf("bytes 0-%d/%d", 2*ytChunkQuantum-1, len(video)), video[:2*ytChunkQuantum]); resp.StatusCode != 308 {
				t.Fatalf("chunk: %d", resp.StatusCode)
			}
			u, _ := url.Parse(sess)
			key := ytKey(ytSessionKind, u.Query().Get("upload_id"))
			expired := func() bool {
				t.Helper()
				keys, err := db.ExpiredSimRecords(context.Background(), clock.Now(), 100)
				if err != nil {
					t.Fatal(err)
				}
				return slices.Contains(keys, key)
			}
			for _, step := range []struct {
				wait    time.Duration
				code    int
				expired bool
			}{
				{30 * time.Minute, 308, false},
				{29 * time.Minute, 308, false},
				{2 * time.Minute, 404, true}, // 61 minutes: expired
			} {
				e.clock.Advance(step.wait)
				if resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", len(video)), nil); resp.StatusCode != step.code {
					t.Fatalf("status query: %d %s, want %d", resp.StatusCode, body, step.code)
				}
				if entries, err := os.ReadDir(e.spool); err != nil || len(entries) != 0 {
					t.Fatalf("%d spooled files between requests (%v), want none", len(entries), err)
				}
				if got := expired(); got != step.expired {
					t.Fatalf("among the expired records: %v, want %v", got, step.expired)
				}
				if n := simtest.BlobCount(t, blobs); n == 0 {
					t.Fatal("the bytes received left blob storage before housekeeping")
				}
			}
			if err := sim.DeleteBlobs(context.Background(), blobs, key); err != nil {
				t.Fatal(err)
			}
			if n := simtest.BlobCount(t, blobs); n != 0 {
				t.Errorf("%d blobs left outside the session's prefix", n)
			}
		})
	}
}

// TestYouTubeProcessingEndsUnread: a video whose processing ended is published, and counts on
// its channel, at the next request of its account even if nobody reads the video again; another
// account's requests leave it as it is.
func TestYouTubeProcessingEndsUnread(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	video := ytTestVideo(t, 12000)
	sess := e.start("tok-dflt", int64(len(video)), ytMeta1)
	if resp, body := e.put(sess, "tok-dflt", fmt.Sprintf("bytes 0-%d/%d", len(video)-1, len(video)), video); resp.StatusCode != 201 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	videoCount := func(token string) string {
		t.Helper()
		resp, body := e.do("GET", "/youtube/v3/channels?part=statistics&mine=true", token, nil, nil)
		var c struct {
			Items []struct{ Statistics struct{ VideoCount string } }
		}
		if err := json.Unmarshal(body, &c); err != nil || resp.StatusCode != 200 || len(c.Items) != 1 {
			t.Fatalf("channels.list: %d %s", resp.StatusCode, body)
		}
		return c.Items[0].Statistics.VideoCount
	}
	published := func() int { return len(e.rec.Snapshot(nil).Published) }
	e.clock.Advance(time.Second)
	if n, c := published(), videoCount("tok-dflt"); n != 0 || c != "0" {
		t.Fatalf("still processing: %d published, videoCount %s", n, c)
	}
	e.clock.Advance(time.Second) // the 2 s are over
	videoCount("tok-alice")
	if n := published(); n != 0 {
		t.Fatalf("%d published by another account's request", n)
	}
	if c := videoCount("tok-dflt"); c != "1" || published() != 1 {
		t.Fatalf("after a request of its account: videoCount %s, published %+v", c, e.rec.Snapshot(nil).Published)
	}
}

func TestYouTubeQuota(t *testing.T) {
	t.Parallel()
	upload := func(e *ytEnv, token string) (*http.Response, []byte) {
		return e.do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", token,
			map[string]string{"Content-Type": "application/json", "X-Upload-Content-Length": "1000"}, []byte(ytMeta1))
	}
	quotaExceeded := func(t *testing.T, what string, resp *http.Response, body []byte) string {
		t.Helper()
		if code, domain, reason := ytErrorOf(t, body); resp.StatusCode != 403 || code != 403 || domain != "youtube.quota" || reason != "quotaExceeded" {
			t.Fatalf("%s: %d %s", what, resp.StatusCode, body)
		}
		return string(body)
	}
	categories := func(e *ytEnv, token string) (*http.Response, []byte) {
		return e.do("GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", token, nil, nil)
	}
	t.Run("units", func(t *testing.T) {
		t.Parallel()
		// Uploads are charged to their own bucket: a general quota of 2 units still lets one
		// start, and two 1-unit calls spend it.
		e := newYTEnv(t, Options{DailyQuota: 2})
		e.start("tok-alice", 1000, ytMeta1)
		for range 2 {
			if resp, body := categories(e, "tok-alice"); resp.StatusCode != 200 {
				t.Fatalf("within quota: %d %s", resp.StatusCode, body)
			}
		}
		resp, body := categories(e, "tok-alice")
		msg := quotaExceeded(t, "over quota", resp, body)
		// The message says that the quota is simulated, when it resets (midnight Pacific Time:
		// 07:00 UTC in March's daylight time) and how to change it.
		for _, want := range []string{"exceeded your", "reelay's sandbox simulates YouTube's daily quota: 2 units for this channel, of which 0 are left; this call costs 1",
			"resets at midnight Pacific Time, 2026-03-11T07:00:00Z (in 19h0m0s)", "sandbox_behavior.daily_quota_units"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %s lacks %q", msg, want)
			}
		}
		// A spent general quota leaves the upload bucket usable.
		e.start("tok-alice", 1000, ytMeta1)
		// Quota is per account, and comes back after midnight Pacific Time.
		if resp, body := categories(e, "tok-bob"); resp.StatusCode != 200 {
			t.Fatalf("another account: %d %s", resp.StatusCode, body)
		}
		e.clock.Advance(24 * time.Hour)
		if resp, body := categories(e, "tok-alice"); resp.StatusCode != 200 {
			t.Fatalf("the next day: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("the upload bucket", func(t *testing.T) {
		t.Parallel()
		// 100 uploads a day by default, far more than the six that 1,600 units an upload
		// allowed out of 10,000; the 101st is refused and the general quota is untouched.
		e := newYTEnv(t, Options{})
		for range 100 {
			e.start("tok-alice", 1000, ytMeta1)
		}
		resp, body := upload(e, "tok-alice")
		msg := quotaExceeded(t, "the 101st upload", resp, body)
		for _, want := range []string{"exceeded your", "videos.insert quota bucket: 100 uploads a day", "resets at midnight Pacific Time, 2026-03-11T07:00:00Z (in 19h0m0s)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %s lacks %q", msg, want)
			}
		}
		if resp, body := categories(e, "tok-alice"); resp.StatusCode != 200 {
			t.Fatalf("the general quota after 100 uploads: %d %s", resp.StatusCode, body)
		}
		e.clock.Advance(24 * time.Hour)
		e.start("tok-alice", 1000, ytMeta1)
	})
	t.Run("a channel's own general quota", func(t *testing.T) {
		t.Parallel()
		// sandbox_behavior.daily_quota_units is the general quota: 2,000 units no longer
		// stop a second upload, and a channel without a quota still has the upload bucket.
		e := newYTEnv(t, Options{InsertQuota: 8})
		for range 8 {
			e.start("tok-q2000", 1000, ytMeta1)
			e.start("tok-noq", 1000, ytMeta1)
		}
		resp, body := upload(e, "tok-noq")
		quotaExceeded(t, "past the upload bucket", resp, body)
	})
	t.Run("uploads per day", func(t *testing.T) {
		t.Parallel()
		e := newYTEnv(t, Options{DailyUploads: 1, DailyQuota: -1})
		e.start("tok-alice", 1000, ytMeta1)
		resp, body := e.do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", "tok-alice",
			map[string]string{"Content-Type": "application/json", "X-Upload-Content-Length": "1000"}, []byte(ytMeta1))
		if code, domain, reason := ytErrorOf(t, body); resp.StatusCode != 400 || code != 400 || domain != "youtube.video" || reason != "uploadLimitExceeded" {
			t.Fatalf("over the cap: %d %s", resp.StatusCode, body)
		}
	})
}

func TestYouTubeFaultsAndOutcomes(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{})
	for _, c := range []struct {
		token, reason string
		code          int
		retryAfter    string
	}{
		{"tok-down", "backendError", 503, ""},
		{"tok-authx", "authError", 401, ""},
		{"tok-slow", "rateLimitExceeded", 429, "10"},
	} {
		resp, body := e.do("GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", c.token, nil, nil)
		if code, _, reason := ytErrorOf(t, body); resp.StatusCode != c.code || code != c.code || reason != c.reason || resp.Header.Get("Retry-After") != c.retryAfter {
			t.Errorf("%s: %d %s Retry-After=%q", c.token, resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
	}

	upload := func(token string, video []byte) string {
		sess := e.start(token, int64(len(video)), ytMeta1)
		resp, body := e.put(sess, token, fmt.Sprintf("bytes 0-%d/%d", len(video)-1, len(video)), video)
		if resp.StatusCode != 201 {
			t.Fatalf("upload: %d %s", resp.StatusCode, body)
		}
		var v struct{ ID string }
		json.Unmarshal(body, &v)
		return v.ID
	}
	rejected := upload("tok-reject", ytTestVideo(t, 12000))
	notVideo := upload("tok-alice", bytes.Repeat([]byte("not a video "), 1000))
	tooLong := upload("tok-alice", mediatest.MP4Bytes(t, mediatest.Options{Duration: 15*time.Minute + time.Second}))
	landscape := upload("tok-alice", mediatest.MP4Bytes(t, mediatest.Options{Width: 1920, Height: 1080}))
	e.clock.Advance(2 * time.Second)
	if l := e.list("tok-reject", rejected); l.Items[0].Status.UploadStatus != "rejected" || l.Items[0].Status.RejectionReason == "" ||
		l.Items[0].ProcessingDetails.ProcessingStatus != "terminated" {
		t.Errorf("reject: %+v", l)
	}
	if l := e.list("tok-alice", notVideo); l.Items[0].Status.UploadStatus != "failed" || l.Items[0].Status.FailureReason != "invalidFile" {
		t.Errorf("not a video: %+v", l)
	}
	if l := e.list("tok-alice", tooLong); l.Items[0].Status.UploadStatus != "rejected" || l.Items[0].Status.RejectionReason != "length" {
		t.Errorf("over 15 minutes: %+v", l)
	}
	if pub := e.rec.Snapshot(nil).Published; len(pub) != 1 || pub[0].URL != "https://www.youtube.com/watch?v="+landscape {
		t.Errorf("published = %+v", pub)
	}
	if up := e.rec.Snapshot(nil).Uploads; len(up) != 4 {
		t.Errorf("uploads = %+v", up)
	}
}

func TestYouTubeThumbnailsAndCategories(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{MaxThumbnailBytes: 1000})
	video := ytTestVideo(t, 12000)
	sess := e.start("tok-alice", int64(len(video)), ytMeta1)
	_, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes 0-%d/%d", len(video)-1, len(video)), video)
	var v struct{ ID string }
	json.Unmarshal(body, &v)

	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 200)...)
	for _, c := range []struct {
		name, id, token, ctype string
		img                    []byte
		code                   int
		reason                 string
	}{
		{"unknown video", "nope", "tok-alice", "image/jpeg", jpeg, 404, "videoNotFound"},
		{"another account's video", v.ID, "tok-bob", "image/jpeg", jpeg, 403, "forbidden"},
		{"not an image", v.ID, "tok-alice", "image/jpeg", []byte("hello"), 400, "invalidImage"},
		{"too large", v.ID, "tok-alice", "image/jpeg", append(jpeg, make([]byte, 1000)...), 413, "uploadTooLarge"},
		{"wrong type", v.ID, "tok-alice", "image/webp", jpeg, 400, "badContent"},
		{"empty", v.ID, "tok-alice", "image/png", []byte{}, 400, "mediaBodyRequired"},
		{"a JPEG", v.ID, "tok-alice", "image/jpeg", jpeg, 200, ""},
	} {
		resp, got := e.do("POST", "/upload/youtube/v3/thumbnails/set?uploadType=media&videoId="+c.id, c.token, map[string]string{"Content-Type": c.ctype}, c.img)
		if resp.StatusCode != c.code {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, got)
			continue
		}
		if c.reason != "" {
			if _, _, reason := ytErrorOf(t, got); reason != c.reason {
				t.Errorf("%s: reason %s, want %s", c.name, reason, c.reason)
			}
		} else if !strings.Contains(string(got), "youtube#thumbnailSetResponse") {
			t.Errorf("%s: %s", c.name, got)
		}
	}

	resp, body := e.do("GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", "tok-alice", nil, nil)
	var cats struct {
		Items []struct {
			ID      string
			Snippet struct {
				Title      string
				Assignable bool
			}
		}
	}
	if err := json.Unmarshal(body, &cats); err != nil || resp.StatusCode != 200 {
		t.Fatalf("categories: %d %s", resp.StatusCode, body)
	}
	found := map[string]bool{}
	for _, c := range cats.Items {
		found[c.ID] = c.Snippet.Assignable
	}
	if !found["22"] || found["42"] || len(cats.Items) != len(ytCategories) {
		t.Errorf("categories = %+v", cats.Items)
	}
	resp, body = e.do("GET", "/youtube/v3/videoCategories?part=snippet", "tok-alice", nil, nil)
	if _, _, reason := ytErrorOf(t, body); resp.StatusCode != 400 || reason != "missingRequiredParameter" {
		t.Errorf("categories without filter: %d %s", resp.StatusCode, body)
	}
}

func TestYouTubeChannelsMine(t *testing.T) {
	t.Parallel()
	e := newYTEnv(t, Options{DailyQuota: 2, NoChannel: map[string]bool{"bob": true}})
	type channels struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind    string `json:"kind"`
			ID      string `json:"id"`
			Snippet *struct {
				Title      string `json:"title"`
				CustomURL  string `json:"customUrl"`
				Thumbnails map[string]struct {
					URL           string `json:"url"`
					Width, Height int
				} `json:"thumbnails"`
			} `json:"snippet"`
		} `json:"items"`
	}
	get := func(query, token string) (*http.Response, []byte, channels) {
		t.Helper()
		resp, body := e.do("GET", "/youtube/v3/channels?"+query, token, nil, nil)
		var c channels
		if resp.StatusCode == 200 {
			if err := json.Unmarshal(body, &c); err != nil {
				t.Fatal(err)
			}
		}
		return resp, body, c
	}

	resp, body, c := get("part=snippet&mine=true", "tok-alice")
	if resp.StatusCode != 200 || c.Kind != "youtube#channelListResponse" || len(c.Items) != 1 {
		t.Fatalf("mine: %d %s", resp.StatusCode, body)
	}
	ch := c.Items[0]
	if ch.Kind != "youtube#channel" || !strings.HasPrefix(ch.ID, "UC") || len(ch.ID) != 24 || ch.Snippet == nil ||
		ch.Snippet.Title != "Alice" || ch.Snippet.CustomURL != "@alice" ||
		ch.Snippet.Thumbnails["default"].URL == "" || ch.Snippet.Thumbnails["default"].Width != 88 {
		t.Fatalf("channel: %s", body)
	}
	// The channel is the one its videos name as snippet.channelId.
	if want := ytChannelOf(sim.Account{ID: "alice"}).ID; ch.ID != want {
		t.Fatalf("channel id %s, want %s", ch.ID, want)
	}
	// Only the parts asked for.
	if _, body, c := get("part=id&mine=true", "tok-alice"); len(c.Items) != 1 || c.Items[0].Snippet != nil {
		t.Fatalf("part=id: %s", body)
	}

	// A Google account without a channel: no items, and no uploads.
	if resp, body, c := get("part=snippet&mine=true", "tok-bob"); resp.StatusCode != 200 || c.Items == nil || len(c.Items) != 0 {
		t.Fatalf("no channel: %d %s", resp.StatusCode, body)
	}
	resp, body = e.do("POST", "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status", "tok-bob",
		map[string]string{"Content-Type": "application/json", "X-Upload-Content-Length": "1000"}, []byte(ytMeta1))
	if code, _, reason := ytErrorOf(t, body); resp.StatusCode != 401 || code != 401 || reason != "youtubeSignupRequired" {
		t.Fatalf("insert without a channel: %d %s", resp.StatusCode, body)
	}

	for _, c := range []struct {
		name, method, query, token string
		status                     int
		reason                     string
	}{
		{"no part", "GET", "mine=true", "tok-alice", 400, "required"},
		{"unknown part", "GET", "part=snippet,processingDetails&mine=true", "tok-alice", 400, "unknownPart"},
		{"no filter", "GET", "part=snippet", "tok-alice", 400, "missingRequiredParameter"},
		{"two filters", "GET", "part=snippet&mine=true&id=UCx", "tok-alice", 400, "incompatibleParameters"},
		{"not a boolean", "GET", "part=snippet&mine=yes", "tok-alice", 400, "invalidBoolean"},
		{"wrong method", "POST", "part=snippet&mine=true", "tok-alice", 405, "httpMethodNotAllowed"},
		{"no token", "GET", "part=snippet&mine=true", "", 401, "required"},
		{"unknown token", "GET", "part=snippet&mine=true", "tok-nobody", 401, "authError"},
		{"auth fault", "GET", "part=snippet&mine=true", "tok-authx", 401, "authError"},
		{"unavailable", "GET", "part=snippet&mine=true", "tok-down", 503, "backendError"},
	} {
		resp, body := e.do(c.method, "/youtube/v3/channels?"+c.query, c.token, nil, nil)
		if code, _, reason := ytErrorOf(t, body); resp.StatusCode != c.status || code != c.status || reason != c.reason {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}

	// Each call costs 1 unit: alice spent her 2.
	resp, body = e.do("GET", "/youtube/v3/channels?part=snippet&mine=true", "tok-alice", nil, nil)
	if _, _, reason := ytErrorOf(t, body); resp.StatusCode != 403 || reason != "quotaExceeded" {
		t.Fatalf("over quota: %d %s", resp.StatusCode, body)
	}
}

// TestQuantumHash: after a chunk's bytes are hashed, the hash can be taken back to any whole
// number of quanta among the last ones, and then equals the hash of the data up to there.
func TestQuantumHash(t *testing.T) {
	const q = ytChunkQuantum
	data := make([]byte, 20*q+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	prefix := []byte("before the chunk")
	for _, tt := range []struct {
		name  string
		wrote int   // bytes of data hashed
		kept  int64 // rewind to
		ok    bool
	}{
		{"nothing kept", q / 2, 0, true},
		{"one quantum", q + 5, q, true},
		{"the last quantum", 20*q + 100, 20 * q, true},
		{"the oldest state kept", 20*q + 100, (21 - quantumStates) * q, true},
		{"older than the states kept", 20*q + 100, (20 - quantumStates) * q, false},
		{"not a whole quantum", 3 * q, q + 1, false},
		{"past what was hashed", q, 2 * q, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := sha256.New()
			h.Write(prefix)
			qh, err := newQuantumHash(h)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < tt.wrote; off += 100_003 { // pieces across quantum boundaries
				qh.Write(data[off:min(off+100_003, tt.wrote)])
			}
			err = qh.rewind(tt.kept)
			if (err == nil) != tt.ok {
				t.Fatalf("rewind(%d) = %v, want ok %v", tt.kept, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			want := sha256.Sum256(append(append([]byte{}, prefix...), data[:tt.kept]...))
			if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
				t.Fatalf("after rewind(%d): %x, want %x", tt.kept, got, want)
			}
		})
	}
}
