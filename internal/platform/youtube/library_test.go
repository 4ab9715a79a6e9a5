package youtube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
	"github.com/reelay/reelay/internal/provider"
)

// libraryCall is a call of the provider for a token of e's simulator.
func (e *audienceEnv) libraryCall(t *testing.T, token string) *call {
	t.Helper()
	c, err := e.p.newCall(context.Background(), &provider.Destination{BaseURL: e.BaseURL, Credentials: map[string]string{"access_token": token}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLibraryRequests: the library's requests reach the simulator below the base URL's path,
// with the channel's token, the library's own headers and system parameters, and parts as
// repeated parameters.
func TestLibraryRequests(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, _ := e.publish(t)
	if _, err := e.p.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": "tok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.Comments(context.Background(), e.channel("tok"), id); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"/youtube/v3/channels", "/youtube/v3/commentThreads", "/youtube/v3/videos"} {
		reqs := e.Requests(http.MethodGet, suffix)
		if len(reqs) == 0 {
			t.Fatalf("no request to %s", suffix)
		}
		r := reqs[0]
		q, _ := url.ParseQuery(r.Query)
		if r.Path != "/sandbox/youtube"+suffix || r.Status != http.StatusOK || r.Header.Get("Authorization") != "Bearer tok" ||
			!strings.Contains(r.Header.Get("X-Goog-Api-Client"), "gdcl/") || q.Get("alt") != "json" || q.Get("prettyPrint") != "false" {
			t.Errorf("%s: %+v", suffix, r)
		}
	}
	// The processing poll asked for both parts, each as its own parameter.
	polls := e.Requests(http.MethodGet, "/youtube/v3/videos")
	if q, _ := url.ParseQuery(polls[0].Query); strings.Join(q["part"], "|") != "status|processingDetails" || q.Get("id") != id {
		t.Errorf("videos.list query %s", polls[0].Query)
	}
}

// TestLibraryErrorsAsHandWritten makes the same failing call by hand and through the library
// (videos.list): both give the same provider.Error, for every fault the simulator has, for
// the daily quota and for a request YouTube refuses.
func TestLibraryErrorsAsHandWritten(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{DailyQuota: 2})
	tooMany := make([]string, 51)
	for i := range tooMany {
		tooMany[i] = "vid" + string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	for _, c := range []struct {
		name, token string
		ids         []string
		category    string
		transient   bool
		status      int
		retryAfter  time.Duration
	}{
		{"unavailable", "tok-down", []string{"someVideo01"}, provider.CategoryUpstreamUnavailable, true, 503, 0},
		{"token revoked", "tok-auth", []string{"someVideo01"}, provider.CategoryAuthExpired, false, 401, 0},
		{"unknown token", "tok-nobody", []string{"someVideo01"}, provider.CategoryAuthExpired, false, 401, 0},
		{"rate limited", "tok-slow", []string{"someVideo01"}, provider.CategoryRateLimited, true, 429, 10 * time.Second},
		{"51 ids", "tok", tooMany, provider.CategoryInvalidOptions, false, 400, 0},
		// acct's quota is 2 units: the calls with 51 ids are refused before any charge, the
		// next two spend both units, and the last two are over quota.
		{"within quota", "tok", []string{"someVideo01"}, "", false, 0, 0},
		{"over quota", "tok", []string{"someVideo01"}, provider.CategoryQuotaExceeded, false, 403, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var byHand struct{ Items []json.RawMessage }
			handErr := e.libraryCall(t, c.token).list("videos", "part=status,processingDetails&id="+strings.Join(c.ids, ","), &byHand)
			api, err := e.libraryCall(t, c.token).api()
			if err != nil {
				t.Fatal(err)
			}
			_, libErr := api.Videos.List([]string{"status", "processingDetails"}).Id(c.ids...).Do()
			if c.category == "" {
				if handErr != nil || libErr != nil {
					t.Fatalf("by hand: %v; library: %v", handErr, libErr)
				}
				return
			}
			if _, ok := errors.AsType[*googleapi.Error](libErr); !ok {
				t.Fatalf("the library answered %T %v", libErr, libErr)
			}
			hand, lib := providertest.AsError(t, handErr), libraryError(context.Background(), "videos.list", libErr)
			if *hand != *lib {
				t.Errorf("by hand %+v\nlibrary %+v", hand, lib)
			}
			if lib.Category != c.category || lib.Transient != c.transient || lib.Status != c.status || lib.RetryAfter != c.retryAfter || lib.Message == "" {
				t.Errorf("library error %+v", lib)
			}
		})
	}
}

// TestLibraryNoAnswer: a base URL nobody answers is a transient upstream_unavailable error
// for the library's calls too.
func TestLibraryNoAnswer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/sandbox/youtube"
	l.Close()
	p := New(Config{})
	_, err = p.Identify(context.Background(), base, map[string]string{"access_token": "tok"})
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "YouTube did not answer")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Options(ctx, base, map[string]string{"access_token": "tok"})
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "context canceled")
}

// TestUnreadableAnswer sorts the library's errors: only a failure after an answer was
// accepted (a body that does not decode) is unreadable; a reply then is not sent again.
func TestUnreadableAnswer(t *testing.T) {
	t.Parallel()
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"error answer", live, &googleapi.Error{Code: 503}, false},
		{"no answer", live, &url.Error{Op: "Get", URL: "http://x", Err: errors.New("connection refused")}, false},
		{"context over", done, context.Canceled, false},
		{"undecodable body", live, &json.SyntaxError{}, true},
		{"body over the bound", live, errAnswerTooLarge, true},
	} {
		if got := unreadableAnswer(c.ctx, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if pe := libraryError(live, "comments.list", errAnswerTooLarge); pe.Category != provider.CategoryUpstreamUnavailable || !pe.Transient ||
		!strings.Contains(pe.Message, "unreadable comments.list answer") {
		t.Errorf("unreadable: %+v", pe)
	}
}

// TestBoundedBody: an answer of exactly the bound reads whole; one byte more is an error.
func TestBoundedBody(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size    int
		wantErr error
	}{{999, nil}, {1000, nil}, {1001, errAnswerTooLarge}} {
		b := &boundedBody{rc: io.NopCloser(bytes.NewReader(make([]byte, c.size))), left: 1000}
		got, err := io.ReadAll(b)
		if !errors.Is(err, c.wantErr) || (c.wantErr == nil && len(got) != c.size) {
			t.Errorf("%d bytes: read %d, %v", c.size, len(got), err)
		}
	}
}

// TestLibraryThumbnailUploadDropsBasePath holds the reason thumbnails.set is hand-written:
// the library sends its media to /upload/... at the root of the host, not below the base
// URL's path, so the sandbox never sees it. Should a later version keep the path, this test
// fails, and thumbnails.set can move to the library.
func TestLibraryThumbnailUploadDropsBasePath(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, _ := e.publish(t)
	api, err := e.libraryCall(t, "tok").api()
	if err != nil {
		t.Fatal(err)
	}
	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 500)...)
	_, err = api.Thumbnails.Set(id).Media(bytes.NewReader(jpeg), googleapi.ContentType("image/jpeg")).Do()
	ge, ok := errors.AsType[*googleapi.Error](err)
	reqs := e.Requests(http.MethodPost, "/thumbnails/set")
	if !ok || ge.Code != http.StatusNotFound || len(reqs) != 1 || reqs[0].Path != "/upload/youtube/v3/thumbnails/set" {
		t.Fatalf("thumbnails.set through the library: %v, requests %+v", err, reqs)
	}
}

// TestMetricsHiddenLikes: a like count the owner hides stays nil, where the library's
// VideoStatistics would read it as 0 (why videos.list?part=statistics is hand-written).
func TestMetricsHiddenLikes(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{HiddenLikes: map[string]bool{"acct": true}})
	id, at := e.publish(t)
	e.Clock.Advance(time.Hour)
	got, err := e.p.Metrics(context.Background(), e.channel("tok"), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	a := sim.AudienceOf(id, at, e.Clock.Now())
	if m := got[id]; m.Likes != nil || m.Views == nil || *m.Views != a.Views || a.Views == 0 || m.Comments == nil || *m.Comments != a.Comments {
		t.Fatalf("metrics = %s, want views %d, likes nil, comments %d", show(m), a.Views, a.Comments)
	}

	api, err := e.libraryCall(t, "tok").api()
	if err != nil {
		t.Fatal(err)
	}
	list, err := api.Videos.List([]string{"statistics"}).Id(id).Do()
	if err != nil || len(list.Items) != 1 || list.Items[0].Statistics == nil {
		t.Fatalf("videos.list through the library: %+v %v", list, err)
	}
	if s := list.Items[0].Statistics; s.LikeCount != 0 || s.ViewCount != uint64(a.Views) {
		t.Fatalf("the library read likes %d, views %d: it can tell a hidden count from 0 now", s.LikeCount, s.ViewCount)
	}
}
