package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// publishBody is a request to the tenant's project with a video at ms.
func publishBody(tn tenant, ms *mediaServer, extra map[string]any) map[string]any {
	b := map[string]any{"project_id": tn.ProjectID, "video_url": ms.URL + "/clip.mp4", "title": "Clip",
		"tiktok": map[string]any{"mode": "direct"}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestIdempotencyKey(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		body := publishBody(e.a, ms, nil)
		key := map[string]string{"Idempotency-Key": "order-42"}

		// Identical requests in parallel: one post, one upload per platform.
		const n = 6
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body, Header: key})
				if r.Code != http.StatusOK {
					t.Errorf("publish %d: %d %s", i, r.Code, r.Body)
					return
				}
				ids[i] = r.JSON["post_id"].(string)
			}()
		}
		wg.Wait()
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Fatalf("one key gave several posts: %v", ids)
			}
		}
		e.waitPost(e.a, ids[0], 10*time.Second, statusIs("published"))
		for _, p := range []string{"youtube", "instagram", "tiktok"} {
			if up, _ := e.introspect(e.a, p); len(up) != 1 {
				t.Errorf("%s received %d uploads for one idempotency key", p, len(up))
			}
		}
		// A replay says so.
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body, Header: key})
		if r.Code != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || r.JSON["post_id"] != ids[0] {
			t.Errorf("replay: %d %v %s", r.Code, r.Header, r.Body)
		}
		// The same key with another body is a conflict.
		other := publishBody(e.a, ms, map[string]any{"title": "Another"})
		if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: other, Header: key}); r.Code != http.StatusConflict || r.errCode() != "idempotency_conflict" {
			t.Errorf("reused key: %d %s", r.Code, r.Body)
		}
		// Keys are per account.
		e.defaultChannels(e.b)
		if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.b.Key, Body: publishBody(e.b, ms, nil), Header: key}); r.Code != http.StatusOK || r.JSON["post_id"] == ids[0] {
			t.Errorf("bob's request with alice's key: %d %s", r.Code, r.Body)
		}
		if u := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key}); u.JSON["posts_this_month"] != float64(1) {
			t.Errorf("replays spent allowance: %s", u.Body)
		}
	})
}

func TestDuplicatePost(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	e.defaultChannels(e.a)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	first := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, nil)})
	if first.Code != http.StatusOK {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	dup := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, nil)})
	if dup.Code != http.StatusConflict || dup.errCode() != "duplicate_post" || dup.JSON["post_id"] != first.JSON["post_id"] {
		t.Fatalf("duplicate: %d %s", dup.Code, dup.Body)
	}
	// Another text is another post; so is an explicit allow_duplicate.
	if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"caption": "new words"})}); r.Code != http.StatusOK {
		t.Errorf("other text: %d %s", r.Code, r.Body)
	}
	if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"allow_duplicate": true})}); r.Code != http.StatusOK || r.JSON["post_id"] == first.JSON["post_id"] {
		t.Errorf("allow_duplicate: %d %s", r.Code, r.Body)
	}
}

func TestAllowanceAndSuspension(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		one := 1
		limit := &one
		if _, err := e.st.UpdateAccount(ctx, e.a.AccountID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		// A dry run spends nothing.
		if r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: publishBody(e.a, ms, nil)}); r.Code != http.StatusOK || r.JSON["dry_run"] != true {
			t.Fatalf("dry run: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, nil)}); r.Code != http.StatusOK {
			t.Fatalf("first post: %d %s", r.Code, r.Body)
		}
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"caption": "second"})})
		if r.Code != http.StatusForbidden || r.errCode() != "monthly_limit_reached" {
			t.Fatalf("over the limit: %d %s", r.Code, r.Body)
		}
		if ms.hits.Load() != 2 { // the dry run and the first post; the refused one downloads nothing
			t.Errorf("downloads: %d", ms.hits.Load())
		}
		u := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key})
		if u.JSON["posts_this_month"] != float64(1) || u.JSON["monthly_post_limit"] != float64(1) {
			t.Errorf("usage: %s", u.Body)
		}
		yes := true
		if _, err := e.st.UpdateAccount(ctx, e.a.AccountID, store.AccountUpdate{Suspended: &yes}); err != nil {
			t.Fatal(err)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, nil)}); r.Code != http.StatusForbidden || r.errCode() != "account_suspended" {
			t.Errorf("suspended: %d %s", r.Code, r.Body)
		}
	})
}

func TestScheduledPost(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"scheduled_for": at.Format(time.RFC3339Nano)})})
		if r.Code != http.StatusOK || r.JSON["status"] != "scheduled" || r.JSON["success"] != true {
			t.Fatalf("schedule: %d %s", r.Code, r.Body)
		}
		id := r.JSON["post_id"].(string)
		if up, _ := e.introspect(e.a, "youtube"); len(up) != 0 {
			t.Fatalf("uploaded before its time: %v", up)
		}
		p := e.waitPost(e.a, id, 15*time.Second, statusIs("published"))
		published, _ := time.Parse(time.RFC3339Nano, p["published_at"].(string))
		// Fired at its time, not before; the bound is generous for a shared machine.
		if published.Before(at) || published.Sub(at) > 6*time.Second {
			t.Errorf("scheduled for %s, published at %s", at, published)
		}
	})
}

func TestCancelAndReschedule(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		soon := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"scheduled_for": soon})})
		id := r.JSON["post_id"].(string)
		c := e.do(req{Method: "DELETE", Path: "/api/v1/posts/" + id, Key: e.a.Key})
		if c.Code != http.StatusOK || c.JSON["status"] != "canceled" {
			t.Fatalf("cancel: %d %s", c.Code, c.Body)
		}
		if u := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key}); u.JSON["posts_this_month"] != float64(0) {
			t.Errorf("cancel did not refund: %s", u.Body)
		}
		if again := e.do(req{Method: "DELETE", Path: "/api/v1/posts/" + id, Key: e.a.Key}); again.Code != http.StatusConflict {
			t.Errorf("second cancel: %d %s", again.Code, again.Body)
		}
		if other := e.do(req{Method: "DELETE", Path: "/api/v1/posts/" + id, Key: e.b.Key}); other.Code != http.StatusNotFound {
			t.Errorf("cancel by another tenant: %d", other.Code)
		}

		// A rescheduled post fires at its new time only, with its new text.
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"scheduled_for": soon, "caption": "v1"})})
		id2 := r.JSON["post_id"].(string)
		later := time.Now().Add(4 * time.Second).UTC()
		p := e.do(req{Method: "PATCH", Path: "/api/v1/posts/" + id2, Key: e.a.Key, Body: map[string]any{
			"scheduled_for": later.Format(time.RFC3339Nano), "caption": "v2", "youtube": map[string]any{"privacy_status": "private"}}})
		if p.Code != http.StatusOK || p.JSON["caption"] != "v2" || p.JSON["status"] != "scheduled" {
			t.Fatalf("patch: %d %s", p.Code, p.Body)
		}
		// Without its title, YouTube's is derived from the caption, as publishing derives it.
		untitled := e.do(req{Method: "PATCH", Path: "/api/v1/posts/" + id2, Key: e.a.Key, Body: map[string]any{"title": ""}})
		if untitled.Code != http.StatusOK || derivedOf(untitled.JSON["publish_results"], "youtube")["title"] != "caption_first_line" {
			t.Errorf("patch removing the title: %d %s", untitled.Code, untitled.Body)
		}
		time.Sleep(2500 * time.Millisecond) // past the old time
		if up, _ := e.introspect(e.a, "youtube"); len(up) != 0 {
			t.Fatalf("fired at the old time: %v", up)
		}
		done := e.waitPost(e.a, id2, 15*time.Second, statusIs("published"))
		published, _ := time.Parse(time.RFC3339Nano, done["published_at"].(string))
		if published.Before(later) {
			t.Errorf("published at %s, before its new time %s", published, later)
		}
		_, pubs := e.introspect(e.a, "youtube")
		if len(pubs) != 1 || pubs[0]["text"] != "v2" {
			t.Fatalf("youtube published: %v", pubs)
		}
		if late := e.do(req{Method: "PATCH", Path: "/api/v1/posts/" + id2, Key: e.a.Key, Body: map[string]any{"caption": "v3"}}); late.Code != http.StatusConflict {
			t.Errorf("patch after firing: %d %s", late.Code, late.Body)
		}
	})
}

func TestPlatformFaults(t *testing.T) {
	// A step makes one to three calls, each failing half the time here: with 30 attempts a
	// step fails for good less than once in a thousand runs.
	eachApp(t, func(t *testing.T, e *env) {
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		flaky, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0, "fail": "flaky", "fail_rate": 0.5})
		reject, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"fail": "reject"})
		expired, _ := e.sandboxChannel(e.a, "instagram", map[string]any{"fail": "auth"})

		// A platform that fails transiently half the time: published after retries.
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{flaky}})})
		if r.Code != http.StatusOK {
			t.Fatalf("flaky: %d %s", r.Code, r.Body)
		}
		e.waitPost(e.a, r.JSON["post_id"].(string), 20*time.Second, statusIs("published"))
		if up, _ := e.introspect(e.a, "youtube"); len(up) != 1 {
			t.Errorf("flaky platform got %d complete uploads, want 1", len(up))
		}

		// Rejected and expired: both fail with the platform's message; none succeeded and the
		// causes are upstream, so 502 with the same body.
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{reject, expired}, "caption": "faults"})})
		if r.Code != http.StatusBadGateway || r.JSON["status"] != "failed" || r.JSON["success"] != false {
			t.Fatalf("all failed: %d %s", r.Code, r.Body)
		}
		categories := map[string]string{}
		for _, x := range r.JSON["platforms"].([]any) {
			d := x.(map[string]any)
			if d["error"] == nil || d["success"] != false {
				t.Errorf("failed destination without its message: %v", d)
			}
			categories[d["platform"].(string)], _ = d["error_category"].(string)
		}
		if categories["tiktok"] != "media_rejected" || categories["instagram"] != "auth_expired" {
			t.Errorf("categories: %v", categories)
		}
		ch := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID, Key: e.a.Key})
		for _, x := range ch.JSON["channels"].([]any) {
			c := x.(map[string]any)
			want := "active"
			if c["id"] == expired {
				want = "reauth_required"
			}
			if c["status"] != want {
				t.Errorf("channel %s (%s): status %v, want %s", c["id"], c["platform"], c["status"], want)
			}
		}
	}, func(c *config.Config) { c.RetryAttempts, c.RetryBaseDelay = 30, time.Millisecond })
}

func TestRetryFailedDestinations(t *testing.T) {
	// A process serves /metrics only when told how (REELAY_METRICS_TOKEN here).
	e := newAppEnv(t, store.SQLite, func(c *config.Config) { c.RetryAttempts, c.MetricsToken = 2, "retry-test-metrics-token" })
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	ok, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
	down, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"fail": "unavailable"})
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok, down}})})
	id := r.JSON["post_id"].(string)
	p := e.waitPost(e.a, id, 15*time.Second, statusIs("partially_published"))
	for _, x := range p["publish_results"].([]any) {
		d := x.(map[string]any)
		if d["platform"] == "tiktok" && d["error_category"] != "upstream_unavailable" {
			t.Errorf("unavailable platform: %v", d)
		}
	}
	// The workers counted the steps by outcome and the settled destinations by status and
	// error category, and /metrics serves the counts.
	e.waitMetrics(
		`reelay_destinations_settled_total{error_category="",platform="youtube",status="published"} 1`,
		`reelay_destinations_settled_total{error_category="upstream_unavailable",platform="tiktok",status="failed"} 1`,
		// Two attempts of the failing step, as RetryAttempts says.
		`reelay_publish_steps_total{outcome="transient_error",platform="tiktok"} 2`,
		`reelay_publish_step_duration_seconds_count{platform="youtube"}`,
	)
	rt := e.do(req{Method: "POST", Path: "/api/v1/posts/" + id + "/retry", Key: e.a.Key})
	if rt.Code != http.StatusOK {
		t.Fatalf("retry: %d %s", rt.Code, rt.Body)
	}
	e.waitPost(e.a, id, 15*time.Second, statusIs("partially_published"))
	// The published destination was not sent again.
	if up, _ := e.introspect(e.a, "youtube"); len(up) != 1 {
		t.Errorf("retry re-sent a published destination: %d uploads", len(up))
	}
	// Nothing failed: nothing to retry.
	r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok}, "caption": "fine"})})
	if rt := e.do(req{Method: "POST", Path: "/api/v1/posts/" + r.JSON["post_id"].(string) + "/retry", Key: e.a.Key}); rt.Code != http.StatusConflict {
		t.Errorf("retry without failures: %d %s", rt.Code, rt.Body)
	}
}

// waitMetrics waits until /metrics has every line of want: a destination is counted just
// after its status is stored, so a count may trail the post's status by a moment.
func (e *env) waitMetrics(want ...string) {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		scrape := req{Method: "GET", Path: "/metrics"}
		if e.cfg != nil && e.cfg.MetricsToken != "" {
			scrape.Header = map[string]string{"Authorization": "Bearer " + e.cfg.MetricsToken}
		}
		body := string(e.do(scrape).Body)
		missing := slices.IndexFunc(want, func(w string) bool { return !strings.Contains(body, w) })
		if missing < 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("metrics lack %s:\n%s", want[missing], body)
		}
	}
}

// TestMediaLinks: a signed link serves the stored video, in ranges, as the platforms fetch it;
// a forged or unsigned one is refused. On S3 the bytes come from the bucket in range reads.
func TestMediaLinks(t *testing.T) {
	eachBlobStore(t, func(t *testing.T, blob func(*config.Config)) {
		e := newAppEnv(t, store.SQLite, blob)
		e.defaultChannels(e.a)
		mp4 := video(t, 5)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, nil)})
		if r.Code != http.StatusOK {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		link, err := e.app.Media.SignedURL(media.KeyForSHA256(sha(mp4)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(link)
		got := e.do(req{Method: "GET", Path: u.RequestURI(), Header: map[string]string{"Range": "bytes=1000-1999"}})
		if got.Code != http.StatusPartialContent || !bytes.Equal(got.Body, mp4[1000:2000]) || got.Header.Get("Content-Type") != "video/mp4" {
			t.Errorf("signed link, a range: %d %q, %d bytes", got.Code, got.Header.Get("Content-Type"), len(got.Body))
		}
		if whole := e.do(req{Method: "GET", Path: u.RequestURI()}); whole.Code != http.StatusOK || !bytes.Equal(whole.Body, mp4) {
			t.Errorf("signed link, the whole video: %d, %d bytes of %d", whole.Code, len(whole.Body), len(mp4))
		}
		q := u.Query()
		q.Set("sig", "AAAA")
		if bad := e.do(req{Method: "GET", Path: u.Path + "?" + q.Encode()}); bad.Code != http.StatusForbidden {
			t.Errorf("forged link: %d", bad.Code)
		}
		if bare := e.do(req{Method: "GET", Path: u.Path}); bare.Code != http.StatusForbidden {
			t.Errorf("unsigned link: %d", bare.Code)
		}
	})
}

// TestMastodonOptions: the mastodon object's extension (visibility, content warning,
// language, alt text) reaches what the destination is sent; a bad value is a 400 naming it,
// before anything is stored.
func TestMastodonOptions(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	ch, _ := e.sandboxChannel(e.a, "mastodon", map[string]any{"processing_ms": 0})
	mastodon := map[string]any{"visibility": "unlisted", "spoiler_text": "Spoilers", "language": "de", "description": "A cat on a desk"}
	r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}, "mastodon": mastodon})})
	if r.Code != http.StatusOK {
		t.Fatalf("dry run: %d %s", r.Code, r.Body)
	}
	payload := r.JSON["platforms"].([]any)[0].(map[string]any)["payload"].(map[string]any)
	for k, v := range mastodon {
		if payload[k] != v {
			t.Errorf("payload %s = %v, want %v (%v)", k, payload[k], v, payload)
		}
	}
	for field, bad := range map[string]map[string]any{
		"mastodon.visibility":   {"visibility": "followers"},
		"mastodon.language":     {"language": "deu"},
		"mastodon.spoiler_text": {"text": strings.Repeat("t", 400), "spoiler_text": strings.Repeat("w", 101)},
	} {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}, "mastodon": bad})})
		if r.Code != http.StatusBadRequest || r.field(field) == "" {
			t.Errorf("%v: %d %s", bad, r.Code, r.Body)
		}
	}
	if list := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key}); len(list.JSON["posts"].([]any)) != 0 {
		t.Errorf("refused publishes left posts: %s", list.Body)
	}
}

// TestMediaRetentionAndRetry: housekeeping deletes a video a day after its post settled (the
// retention here); the post still reads, a retry of its failed destination is refused with the
// reason, and publishing the same video again stores it anew, after which the retry works. On
// S3 the housekeeper lists the bucket and deletes from it.
func TestMediaRetentionAndRetry(t *testing.T) {
	eachBlobStore(t, func(t *testing.T, blob func(*config.Config)) {
		e := newAppEnv(t, store.SQLite, blob, func(c *config.Config) { c.RetryAttempts = 1 })
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		ok, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		down, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"fail": "unavailable"})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok, down}})})
		id := r.JSON["post_id"].(string)
		e.waitPost(e.a, id, 15*time.Second, statusIs("partially_published"))
		if n := e.blobCount(); n != 1 {
			t.Fatalf("%d blobs stored, want the video", n)
		}

		housekeeping := func(after time.Duration) {
			t.Helper()
			h := &publish.Housekeeper{Store: e.st, Media: e.app.Media, MediaRetention: 24 * time.Hour,
				Now: func() time.Time { return time.Now().Add(after) }}
			if err := h.Work(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		housekeeping(23 * time.Hour)
		if n := e.blobCount(); n != 1 {
			t.Fatalf("the video went before the retention passed: %d blobs", n)
		}
		housekeeping(25 * time.Hour)
		if n := e.blobCount(); n != 0 {
			t.Fatalf("%d blobs left after the retention passed", n)
		}
		if g := e.do(req{Method: "GET", Path: "/api/v1/posts/" + id, Key: e.a.Key}); g.Code != http.StatusOK {
			t.Fatalf("the post no longer reads: %d %s", g.Code, g.Body)
		}
		rt := e.do(req{Method: "POST", Path: "/api/v1/posts/" + id + "/retry", Key: e.a.Key})
		if rt.Code != http.StatusConflict || !strings.Contains(string(rt.Body), "no longer stored") {
			t.Fatalf("retry of a post whose video is gone: %d %s", rt.Code, rt.Body)
		}

		again := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok}, "caption": "again"})})
		if again.Code >= 300 {
			t.Fatalf("publishing the video again: %d %s", again.Code, again.Body)
		}
		e.waitPost(e.a, again.JSON["post_id"].(string), 15*time.Second, statusIs("published"))
		if n := e.blobCount(); n != 1 {
			t.Fatalf("%d blobs after the video was published again", n)
		}
		if rt := e.do(req{Method: "POST", Path: "/api/v1/posts/" + id + "/retry", Key: e.a.Key}); rt.Code != http.StatusOK {
			t.Fatalf("retry once the video is stored again: %d %s", rt.Code, rt.Body)
		}
		e.waitPost(e.a, id, 15*time.Second, statusIs("partially_published"))
	})
}

// TestPostEndsTheRequestsClaim: the claim a publish request holds on its video ends when its
// post is committed, so that once the post has settled only the retention keeps the video (the
// purge below runs two minutes on, with a minute's retention: well within the claim's hour).
func TestPostEndsTheRequestsClaim(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	ok, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok}})})
	e.waitPost(e.a, r.JSON["post_id"].(string), 15*time.Second, statusIs("published"))
	n, err := e.st.PurgeMedia(context.Background(), time.Now().Add(2*time.Minute), time.Minute, 10, e.app.Media.Delete)
	if err != nil || n != 1 || e.blobCount() != 0 {
		t.Fatalf("purged %d (%v), %d blobs left: the request's claim outlived its post", n, err, e.blobCount())
	}
}

// TestMissingVideoFailsAtOnce: a scheduled post whose video's bytes were deleted from storage
// by hand fails when it fires, with the reason, instead of retrying what looks like a platform
// or storage hiccup.
func TestMissingVideoFailsAtOnce(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	ok, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
	at := time.Now().Add(2 * time.Second)
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ok}, "scheduled_for": at.Format(time.RFC3339Nano)})})
	if r.Code >= 300 {
		t.Fatalf("schedule: %d %s", r.Code, r.Body)
	}
	root := filepath.Join(e.cfg.BlobURL[len("file://"):], "media", "sha256")
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	p := e.waitPost(e.a, r.JSON["post_id"].(string), 20*time.Second, statusIs("failed"))
	d := p["publish_results"].([]any)[0].(map[string]any)
	if d["error_category"] != "internal" || !strings.Contains(d["error"].(string), "no longer stored") {
		t.Errorf("destination: %v", d)
	}
}

// A Pinterest app with Trial access may not create Pins in production: the destination fails
// with app_access and says how to get out, and the channel is not marked for reauth, since no
// reconnect gives the app Standard access.
func TestPinterestTrialApp(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	for _, c := range []struct{ platform, level, field string }{
		{"youtube", "trial", "applies to sandbox channels of TikTok, Pinterest only"},
		{"tiktok", "trial", "must be one of unaudited, audited for TikTok"},
		{"pinterest", "gold", "must be one of standard, trial"},
	} {
		r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "platform": c.platform, "sandbox": true,
			"sandbox_behavior": map[string]any{"app_access": c.level}}})
		if r.Code != http.StatusBadRequest || !strings.Contains(string(r.Body), c.field) {
			t.Errorf("%s app_access %q: %d %s", c.platform, c.level, r.Code, r.Body)
		}
	}

	trial, account := e.sandboxChannel(e.a, "pinterest", map[string]any{"processing_ms": 0, "app_access": "trial"})
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{
		"channel_ids": []string{trial},
		"pinterest":   map[string]any{"board_id": pinterestsim.DefaultBoards(account)[0].ID}})})
	p := e.waitPost(e.a, r.JSON["post_id"].(string), 20*time.Second, statusIs("failed"))
	d := p["publish_results"].([]any)[0].(map[string]any)
	if d["error_category"] != "app_access" || !strings.Contains(d["error"].(string), "REELAY_PINTEREST_API_URL=https://api-sandbox.pinterest.com") {
		t.Errorf("trial app's destination: %v", d)
	}
	ch := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID, Key: e.a.Key})
	for _, x := range ch.JSON["channels"].([]any) {
		if c := x.(map[string]any); c["id"] == trial && c["status"] != "active" {
			t.Errorf("trial app's channel is %v, want active", c["status"])
		}
	}
}
