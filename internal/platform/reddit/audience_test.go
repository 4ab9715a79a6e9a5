package reddit

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/reddit/redditsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// publishPost publishes a video to r/reelay_sandbox and returns the post's fullname and when
// the simulator made it.
func (e *env) publishPost(t *testing.T) (string, time.Time) {
	t.Helper()
	outs, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`), 30)
	if err != nil {
		t.Fatal(err)
	}
	id := outs[len(outs)-1].ExternalID
	for _, p := range e.sim.Posts("t2_abc123") {
		if p.ID == id {
			return id, p.PublishedAt
		}
	}
	t.Fatalf("the simulator has no post %s", id)
	return "", time.Time{}
}

func (e *env) channel() provider.Channel {
	return provider.Channel{Account: "t2_abc123", Credentials: map[string]string{"access_token": token}, BaseURL: e.BaseURL}
}

func (e *env) comments(t *testing.T, id string) []provider.Comment {
	t.Helper()
	cs, err := e.prov.Comments(context.Background(), e.channel(), id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// wantFigures checks m against the post's audience as Reddit shows it: ups are the author's
// own upvote and the audience's likes, num_comments the audience's comments and extra
// replies; views (null on Reddit) and everything Reddit does not have stay nil.
func wantFigures(t *testing.T, m provider.Metrics, id string, at, now time.Time, replies int64) {
	t.Helper()
	a := sim.AudienceOf(id, at, now)
	eq := func(p *int64, n int64) bool { return p != nil && *p == n }
	if !eq(m.Likes, 1+a.Likes) || !eq(m.Comments, a.Comments+replies) || m.Views != nil || m.Shares != nil ||
		m.Impressions != nil || m.Reach != nil || m.Saves != nil || m.WatchTimeSeconds != nil || a.Likes == 0 {
		t.Errorf("metrics of %s = likes %v comments %v views %v, want %+v and %d replies", id, deref(m.Likes), deref(m.Comments), m.Views, a, replies)
	}
}

func deref(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// TestMetrics reads two posts' figures; a post Reddit does not know has no entry.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	id1, at1 := e.publishPost(t)
	e.Clock.Advance(7 * time.Minute)
	id2, at2 := e.publishPost(t)
	e.Clock.Advance(45 * time.Minute)
	got, err := e.prov.Metrics(context.Background(), e.channel(), []string{id1, strings.TrimPrefix(id2, "t3_"), "t3_zzzzzzz"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("metrics = %v", got)
	}
	wantFigures(t, got[id1], id1, at1, e.Clock.Now(), 0)
	wantFigures(t, got[strings.TrimPrefix(id2, "t3_")], id2, at2, e.Clock.Now(), 0)
}

// TestMetricsBatching: 250 fullnames take 3 calls of at most 100.
func TestMetricsBatching(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	id, at := e.publishPost(t)
	e.Clock.Advance(time.Hour)
	ids := []string{id}
	for i := range 249 {
		ids = append(ids, "t3_q"+strconv.FormatInt(int64(100000+i), 36))
	}
	got, err := e.prov.Metrics(context.Background(), e.channel(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Requests(http.MethodGet, "/api/info")); n != 3 {
		t.Errorf("%d /api/info calls for 250 ids, want 3", n)
	}
	if len(got) != 1 {
		t.Fatalf("metrics = %v", got)
	}
	wantFigures(t, got[id], id, at, e.Clock.Now(), 0)
}

// TestComments reads the audience's comments, newest first, none a reply, none the channel's.
func TestComments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	id, at := e.publishPost(t)
	e.Clock.Advance(40 * time.Minute)
	want := sim.AudienceComments(id, at, e.Clock.Now())
	got := e.comments(t, id)
	if len(got) != len(want) || len(want) < 2 {
		t.Fatalf("%d comments, want %d (at least 2)", len(got), len(want))
	}
	for i, c := range got {
		w := want[len(want)-1-i]
		if c.Author != w.Author || c.Text != w.Text || !c.CreatedAt.Equal(w.At.Truncate(time.Second)) || c.ParentID != "" ||
			c.Own || !strings.HasPrefix(c.ID, "t1_") || c.LikeCount == nil {
			t.Errorf("comment %d = %+v, want %+v", i, c, w)
		}
	}
}

// TestReplyRoundTrip answers a comment and then that answer (Reddit nests replies at any
// depth): both come back from Comments under their parents as the channel's own, are
// recorded, and count in num_comments.
func TestReplyRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	id, at := e.publishPost(t)
	e.Clock.Advance(15 * time.Minute)
	top := e.comments(t, id)[0]

	first, err := e.prov.Reply(context.Background(), e.channel(), id, top, "Thanks! 🎬")
	if err != nil {
		t.Fatal(err)
	}
	if first.ParentID != top.ID || !first.Own || first.Text != "Thanks! 🎬" || !strings.HasPrefix(first.ID, "t1_") || first.Author != "reelay_tester" {
		t.Fatalf("reply = %+v", first)
	}
	second, err := e.prov.Reply(context.Background(), e.channel(), id, first, "(and welcome)")
	if err != nil {
		t.Fatal(err)
	}
	if second.ParentID != first.ID {
		t.Errorf("second reply's parent %q, want the first reply %q", second.ParentID, first.ID)
	}

	var own []provider.Comment
	for _, c := range e.comments(t, id) {
		if c.Own {
			own = append(own, c)
		}
	}
	if len(own) != 2 || own[0].ID != first.ID || own[0].ParentID != top.ID || own[1].ID != second.ID || own[1].ParentID != first.ID {
		t.Errorf("own comments = %+v", own)
	}
	rec := e.Introspect().Replies
	if len(rec) != 2 || rec[0] != (sim.Reply{Account: "t2_abc123", CommentID: top.ID, Text: "Thanks! 🎬"}) || rec[1].CommentID != first.ID {
		t.Errorf("recorded replies = %+v", rec)
	}
	m, err := e.prov.Metrics(context.Background(), e.channel(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	wantFigures(t, m[id], id, at, e.Clock.Now(), 2)
}

// TestReplyRefused: Reddit refuses a reply to a comment it does not know, an over-long one and
// an empty one in json.errors; the provider passes them on as permanent invalid_options.
func TestReplyRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	id, _ := e.publishPost(t)
	top := e.comments(t, id)[0]
	limit := Description.Capabilities.ReplyText.Max
	for _, c := range []struct {
		name, text, why string
		to              provider.Comment
	}{
		{"unknown comment", "hello", "NO_THING_ID", provider.Comment{ID: "t1_zzzzzzz"}},
		{"too long", strings.Repeat("é", limit+1), "TOO_LONG", top},
		{"empty", " ", "NO_TEXT", top},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.prov.Reply(context.Background(), e.channel(), id, c.to, c.text)
			providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.why)
		})
	}
	if _, err := e.prov.Reply(context.Background(), e.channel(), id, top, strings.Repeat("é", limit)); err != nil {
		t.Errorf("a reply of exactly %d characters: %v", limit, err)
	}
	if n := len(e.Introspect().Replies); n != 1 {
		t.Errorf("%d replies recorded, want the one accepted", n)
	}
}

// TestCommentsUnknownPost: the comments of a post Reddit does not know are refused, not empty.
func TestCommentsUnknownPost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	_, err := e.prov.Comments(context.Background(), e.channel(), "t3_zzzzzzz")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "404")
}

// TestAudienceFaults: the account's faults reach every call as classified errors; a rate
// limit waits for Reddit's X-Ratelimit-Reset.
func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail, category string
		transient      bool
		retryAfter     time.Duration
	}{
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, 0},
		{sim.FailAuth, provider.CategoryAuthExpired, false, 0},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, time.Second},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{Fail: c.fail}, redditsim.Options{}, Config{})
			_, err := e.prov.Metrics(context.Background(), e.channel(), []string{"t3_abcdefg"})
			pe := providertest.WantError(t, err, c.category, c.transient, "")
			if pe.RetryAfter != c.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, c.retryAfter)
			}
			_, err = e.prov.Comments(context.Background(), e.channel(), "t3_abcdefg")
			providertest.WantError(t, err, c.category, c.transient, "")
			_, err = e.prov.Reply(context.Background(), e.channel(), "t3_abcdefg", provider.Comment{ID: "t1_abcdefg"}, "hi")
			providertest.WantError(t, err, c.category, c.transient, "")
		})
	}
}
