package tiktok

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/provider"
)

// publishNow publishes a 5-second video of open_1 (token "tok") with options, without moving
// the clock: the account processes at once, so the post is complete at the returned moment.
func (e *env) publishNow(t *testing.T, options string) (provider.Outcome, time.Time) {
	t.Helper()
	at := e.Clock.Now()
	d := e.dest("tok", providertest.NewVideo(mb, 5*time.Second, 1080, 1920).Media(), options)
	for range 20 {
		out, err := e.step(d)
		if err != nil {
			t.Fatal(err)
		}
		if out.Done() {
			return out, at
		}
	}
	t.Fatal("not done in 20 steps")
	return provider.Outcome{}, time.Time{}
}

func (e *env) metrics(t *testing.T, ids ...string) map[string]provider.Metrics {
	t.Helper()
	m, err := e.prov.Metrics(context.Background(), e.channel("tok"), ids)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (e *env) channel(token string) provider.Channel {
	return provider.Channel{Account: "open_1", Credentials: map[string]string{"access_token": token}, BaseURL: e.BaseURL}
}

// wantAudience checks m against the audience of post published at at, as TikTok maps it:
// views, likes, comments and shares; nothing else.
func wantAudience(t *testing.T, m provider.Metrics, post string, at, now time.Time) {
	t.Helper()
	a := sim.AudienceOf(post, at, now)
	eq := func(p *int64, n int64) bool { return p != nil && *p == n }
	if !eq(m.Views, a.Views) || !eq(m.Likes, a.Likes) || !eq(m.Comments, a.Comments) || !eq(m.Shares, a.Shares) ||
		m.Impressions != nil || m.Reach != nil || m.Saves != nil || m.WatchTimeSeconds != nil || a.Views == 0 {
		t.Errorf("metrics of %s = %s, want %+v", post, show(m), a)
	}
}

func show(m provider.Metrics) string {
	s := ""
	for _, f := range []struct {
		name string
		p    *int64
	}{{"views", m.Views}, {"likes", m.Likes}, {"comments", m.Comments}, {"shares", m.Shares},
		{"impressions", m.Impressions}, {"reach", m.Reach}, {"saves", m.Saves}, {"watch", m.WatchTimeSeconds}} {
		v := "nil"
		if f.p != nil {
			v = strconv.FormatInt(*f.p, 10)
		}
		s += f.name + "=" + v + " "
	}
	return s
}

// TestMetrics reads a public post by its video id; an id TikTok does not know for this
// creator has no entry.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	out, at := e.publishNow(t, `{"mode":"direct"}`)
	if !isPostID(out.ExternalID) {
		t.Fatalf("external id %q is not the video id", out.ExternalID)
	}
	e.Clock.Advance(30 * time.Minute)
	got := e.metrics(t, out.ExternalID, "7000000000000000001")
	if len(got) != 1 {
		t.Fatalf("metrics = %v", got)
	}
	wantAudience(t, got[out.ExternalID], out.ExternalID, at, e.Clock.Now())
}

// TestMetricsPublishID: a post stored under its publish_id (moderation was pending when
// publishing ended) has no figures until the status fetch gives its video id, then the
// figures of that video, under the publish_id.
func TestMetricsPublishID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: 10 * time.Minute}, Config{})
	out, at := e.publishNow(t, `{"mode":"direct"}`)
	publishID := stateOf(t, out.State).PublishID
	if out.ExternalID != publishID {
		t.Fatalf("external id %q, want the publish_id %q", out.ExternalID, publishID)
	}
	e.Clock.Advance(5 * time.Minute)
	if got := e.metrics(t, publishID); len(got) != 0 {
		t.Errorf("figures before moderation ended: %v", got)
	}
	e.Clock.Advance(40 * time.Minute)
	post, _ := e.sim.Post(publishID)
	got := e.metrics(t, publishID, post.PostID)
	if len(got) != 2 {
		t.Fatalf("metrics = %v", got)
	}
	wantAudience(t, got[publishID], post.PostID, at, e.Clock.Now())
	wantAudience(t, got[post.PostID], post.PostID, at, e.Clock.Now())
	if n := len(e.Requests(http.MethodPost, pathVideoQuery)); n != 1 {
		t.Errorf("%d video queries, want 1 for the post asked for twice", n)
	}
}

// TestMetricsInbox: an inbox upload has figures from the moment the creator posted it in the
// app; a private post never has any.
func TestMetricsInbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	inbox, _ := e.publishNow(t, `{"mode":"inbox"}`)
	private, _ := e.publishNow(t, `{"mode":"direct","privacy_level":"SELF_ONLY"}`)
	e.Clock.Advance(time.Hour)
	if got := e.metrics(t, inbox.ExternalID, private.ExternalID); len(got) != 0 {
		t.Errorf("figures of a post in the inbox or private: %v", got)
	}
	if !e.sim.CompleteInbox(inbox.ExternalID) {
		t.Fatal("CompleteInbox failed")
	}
	posted := e.Clock.Now()
	e.Clock.Advance(25 * time.Minute)
	post, _ := e.sim.Post(inbox.ExternalID)
	got := e.metrics(t, inbox.ExternalID, private.ExternalID)
	if len(got) != 1 {
		t.Fatalf("metrics = %v", got)
	}
	wantAudience(t, got[inbox.ExternalID], post.PostID, posted, e.Clock.Now())
}

// TestMetricsBatching: 45 video ids take 3 queries of at most 20.
func TestMetricsBatching(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	out, at := e.publishNow(t, `{"mode":"direct"}`)
	e.Clock.Advance(time.Hour)
	ids := []string{out.ExternalID}
	for i := range 44 {
		ids = append(ids, strconv.Itoa(7_100_000_000+i))
	}
	got := e.metrics(t, ids...)
	if n := len(e.Requests(http.MethodPost, pathVideoQuery)); n != 3 {
		t.Errorf("%d video queries for 45 ids, want 3", n)
	}
	if len(got) != 1 {
		t.Fatalf("metrics = %v", got)
	}
	wantAudience(t, got[out.ExternalID], out.ExternalID, at, e.Clock.Now())
}

// TestMetricsStatusRateLimit: resolving publish_ids meets the status fetch's limit; the
// figures read before are returned with the rate-limit error.
func TestMetricsStatusRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1, StatusPerMinute: 3}, Config{})
	// Each publish fetches the status once: 2 of the minute's 3 are spent.
	out, _ := e.publishNow(t, `{"mode":"direct"}`)
	public, _ := e.publishNow(t, `{"mode":"direct"}`)
	publishID := stateOf(t, public.State).PublishID
	e.Clock.Advance(10 * time.Second)
	got, err := e.prov.Metrics(context.Background(), e.channel("tok"),
		[]string{out.ExternalID, publishID, "v_pub_file~v2-1.1", "v_pub_file~v2-1.2"})
	pe := providertest.WantError(t, err, provider.CategoryRateLimited, true, "rate_limit_exceeded")
	if pe.RetryAfter <= 0 {
		t.Errorf("RetryAfter = %v", pe.RetryAfter)
	}
	if _, ok := got[out.ExternalID]; !ok || len(got) != 2 {
		t.Errorf("figures kept = %v, want the post id's and the resolved publish_id's", got)
	}
	if _, ok := got[publishID]; !ok {
		t.Errorf("figures kept = %v, want the resolved publish_id's", got)
	}
}

// TestMetricsFaults: the account's faults, and a token without the video.list scope.
func TestMetricsFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		behavior   sim.Behavior
		scopes     []string
		category   string
		transient  bool
		retryAfter time.Duration
	}{
		{"unavailable", sim.Behavior{Fail: sim.FailUnavailable}, nil, provider.CategoryUpstreamUnavailable, true, 0},
		{"auth", sim.Behavior{Fail: sim.FailAuth}, nil, provider.CategoryAuthExpired, false, 0},
		{"rate limit", sim.Behavior{Fail: sim.FailRateLimit}, nil, provider.CategoryRateLimited, true, time.Second},
		{"no video.list", sim.Behavior{}, []string{"video.publish", "user.info.basic"}, provider.CategoryAuthExpired, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := tiktoksim.Options{}
			if c.scopes != nil {
				opts.Scopes = map[string][]string{"open_1": c.scopes}
			}
			e := newEnv(t, sim.StaticAccounts{"tok": {ID: "open_1", Behavior: c.behavior}}, opts, Config{})
			_, err := e.prov.Metrics(context.Background(), e.channel("tok"), []string{"7000000000000000001"})
			pe := providertest.WantError(t, err, c.category, c.transient, "")
			if pe.RetryAfter != c.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, c.retryAfter)
			}
		})
	}
}
