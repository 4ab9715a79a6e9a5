package youtube

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
	"github.com/reelay/reelay/internal/provider"
)

// audienceEnv is the YouTube simulator with an account "acct" (token "tok") whose videos are
// processed at once, and accounts whose every call fails.
type audienceEnv struct {
	*providertest.Env
	p *Provider
}

func newAudienceEnv(t *testing.T, opt youtubesim.Options) *audienceEnv {
	t.Helper()
	opt.SpoolDir = t.TempDir()
	accounts := sim.StaticAccounts{
		"tok":      {ID: "acct", Username: "Channel", Behavior: sim.Behavior{ProcessingMS: 0}},
		"tok-down": {ID: "down", Behavior: sim.Behavior{Fail: sim.FailUnavailable}},
		"tok-auth": {ID: "authx", Behavior: sim.Behavior{Fail: sim.FailAuth}},
		"tok-slow": {ID: "slow", Behavior: sim.Behavior{Fail: sim.FailRateLimit}},
	}
	e := providertest.NewEnv(t, platform.YouTube, accounts, func(c sim.Config) http.Handler {
		return youtubesim.NewWith(c, opt)
	}, providertest.Options{})
	return &audienceEnv{Env: e, p: New(Config{HTTPClient: e.Client})}
}

func (e *audienceEnv) channel(token string) provider.Channel {
	return provider.Channel{Account: "acct", Credentials: map[string]string{"access_token": token}, BaseURL: e.BaseURL}
}

// publish publishes a video of acct without moving the clock and returns its id and the
// moment the simulator published it.
func (e *audienceEnv) publish(t *testing.T) (string, time.Time) {
	t.Helper()
	d := e.Destination("acct", map[string]string{"access_token": "tok"}, providertest.ShortVideo(), "")
	at := e.Clock.Now()
	for range 10 {
		out, err := providertest.Step(context.Background(), e.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if out.Done() {
			return out.ExternalID, at
		}
	}
	t.Fatal("the video was not published in 10 steps")
	return "", time.Time{}
}

func (e *audienceEnv) comments(t *testing.T, id string) []provider.Comment {
	t.Helper()
	cs, err := e.p.Comments(context.Background(), e.channel("tok"), id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestMetrics reads two videos' statistics: views, likes and comments are the simulated
// audience's at the simulator's clock; shares, watch time, impressions, reach and saves are
// not in videos.list and stay nil; an unknown video has no entry.
func TestMetrics(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id1, at1 := e.publish(t)
	e.Clock.Advance(11 * time.Minute)
	id2, at2 := e.publish(t)
	e.Clock.Advance(37 * time.Minute)

	got, err := e.p.Metrics(context.Background(), e.channel("tok"), []string{id1, id2, "unknownVid0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("metrics for %d videos, want 2: %v", len(got), got)
	}
	for id, at := range map[string]time.Time{id1: at1, id2: at2} {
		a := sim.AudienceOf(id, at, e.Clock.Now())
		m := got[id]
		want := provider.Metrics{Views: provider.N(a.Views), Likes: provider.N(a.Likes), Comments: provider.N(a.Comments)}
		if !sameMetrics(m, want) {
			t.Errorf("%s: %s, want %s", id, show(m), show(want))
		}
		if a.Views == 0 {
			t.Errorf("%s: no views after 37 minutes: the test proves nothing", id)
		}
	}
}

// TestMetricsBatching asks for 120 ids: videos.list takes 50 a call, so 3 calls.
func TestMetricsBatching(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, at := e.publish(t)
	e.Clock.Advance(time.Hour)
	ids := []string{id}
	for i := range 119 {
		ids = append(ids, "missing"+string(rune('A'+i%26))+string(rune('a'+i/26)))
	}
	ids = append(ids, id) // a repeat costs nothing
	before := len(statisticsCalls(e))
	got, err := e.p.Metrics(context.Background(), e.channel("tok"), ids)
	if err != nil {
		t.Fatal(err)
	}
	if calls := len(statisticsCalls(e)) - before; calls != 3 {
		t.Errorf("%d videos.list calls for 120 ids, want 3", calls)
	}
	if v := got[id].Views; len(got) != 1 || v == nil || *v != sim.AudienceOf(id, at, e.Clock.Now()).Views {
		t.Errorf("metrics = %v", got)
	}
}

func statisticsCalls(e *audienceEnv) []providertest.Request {
	var out []providertest.Request
	for _, r := range e.Requests(http.MethodGet, "/youtube/v3/videos") {
		if strings.Contains(r.Query, "part=statistics") {
			out = append(out, r)
		}
	}
	return out
}

// TestComments reads the audience's comments: each with its author, text and time, none a
// reply, none the channel's own.
func TestComments(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, at := e.publish(t)
	e.Clock.Advance(40 * time.Minute)
	want := sim.AudienceComments(id, at, e.Clock.Now())
	got := e.comments(t, id)
	if len(got) != len(want) || len(want) < 2 {
		t.Fatalf("%d comments, want %d (at least 2)", len(got), len(want))
	}
	// Newest first.
	for i, c := range got {
		w := want[len(want)-1-i]
		if c.Author != w.Author || c.Text != w.Text || !c.CreatedAt.Equal(w.At) || c.ParentID != "" || c.Own ||
			!strings.HasPrefix(c.ID, "Ug") || c.LikeCount == nil {
			t.Errorf("comment %d = %+v, want %+v", i, c, w)
		}
	}
}

// TestReplyRoundTrip answers a comment, then a reply: both land in the thread of the
// top-level comment, come back from Comments as the channel's own, are recorded, and count in
// commentCount.
func TestReplyRoundTrip(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, at := e.publish(t)
	e.Clock.Advance(20 * time.Minute)
	top := e.comments(t, id)[0]

	reply, err := e.p.Reply(context.Background(), e.channel("tok"), id, top, "Thanks! 🎬")
	if err != nil {
		t.Fatal(err)
	}
	if reply.ParentID != top.ID || !reply.Own || reply.Text != "Thanks! 🎬" || !strings.HasPrefix(reply.ID, top.ID+".") || reply.Author != "Channel" {
		t.Fatalf("reply = %+v", reply)
	}
	// YouTube threads are one level deep: answering the reply answers its thread.
	second, err := e.p.Reply(context.Background(), e.channel("tok"), id, reply, "And welcome")
	if err != nil {
		t.Fatal(err)
	}
	if second.ParentID != top.ID {
		t.Errorf("reply to a reply has parent %q, want the top-level %q", second.ParentID, top.ID)
	}

	var own []provider.Comment
	for _, c := range e.comments(t, id) {
		if c.Own {
			own = append(own, c)
		}
	}
	if len(own) != 2 || own[0].ID != reply.ID || own[1].ID != second.ID || own[0].ParentID != top.ID || own[1].ParentID != top.ID {
		t.Errorf("own comments = %+v", own)
	}
	rec := e.Introspect().Replies
	if len(rec) != 2 || rec[0] != (sim.Reply{Account: "acct", CommentID: top.ID, Text: "Thanks! 🎬"}) || rec[1].CommentID != top.ID {
		t.Errorf("recorded replies = %+v", rec)
	}
	m, err := e.p.Metrics(context.Background(), e.channel("tok"), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if c := m[id].Comments; c == nil || *c != sim.AudienceOf(id, at, e.Clock.Now()).Comments+2 {
		t.Errorf("commentCount = %v, want the audience's plus 2 replies", show(m[id]))
	}
}

// TestCommentsReplyPages posts more replies than a thread carries inline: Comments fetches
// the rest with comments.list.
func TestCommentsReplyPages(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, _ := e.publish(t)
	top := e.comments(t, id)[0]
	for i := range 7 {
		if _, err := e.p.Reply(context.Background(), e.channel("tok"), id, top, "reply "+string(rune('1'+i))); err != nil {
			t.Fatal(err)
		}
	}
	before := len(e.Requests(http.MethodGet, "/youtube/v3/comments"))
	got := e.comments(t, id)
	if len(got) != 8 {
		t.Fatalf("%d comments, want the top-level one and 7 replies", len(got))
	}
	for i, c := range got[1:] {
		if c.ParentID != top.ID || c.Text != "reply "+string(rune('1'+i)) {
			t.Errorf("reply %d = %+v", i, c)
		}
	}
	if n := len(e.Requests(http.MethodGet, "/youtube/v3/comments")) - before; n != 1 {
		t.Errorf("%d comments.list calls, want 1", n)
	}
}

// TestCommentsInlineReplies: a thread that carries all its replies inline costs no
// comments.list call. The library asks for part=snippet&part=replies, which YouTube reads as
// snippet,replies.
func TestCommentsInlineReplies(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, _ := e.publish(t)
	top := e.comments(t, id)[0]
	for _, text := range []string{"first", "second"} {
		if _, err := e.p.Reply(context.Background(), e.channel("tok"), id, top, text); err != nil {
			t.Fatal(err)
		}
	}
	before := len(e.Requests(http.MethodGet, "/youtube/v3/comments"))
	got := e.comments(t, id)
	if len(got) != 3 || got[1].Text != "first" || got[2].Text != "second" || got[1].ParentID != top.ID || !got[2].Own {
		t.Fatalf("comments = %+v", got)
	}
	if n := len(e.Requests(http.MethodGet, "/youtube/v3/comments")) - before; n != 0 {
		t.Errorf("%d comments.list calls for replies the thread carried, want 0", n)
	}
}

// TestReplyRefused: YouTube refuses a reply to a comment it does not know, an over-long reply
// and an empty one; the provider passes them on as permanent invalid_options errors.
func TestReplyRefused(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	id, _ := e.publish(t)
	top := e.comments(t, id)[0]
	limit := Description.Capabilities.ReplyText.Max
	for _, c := range []struct {
		name, text, why string
		to              provider.Comment
	}{
		{"unknown comment", "hello", "commentNotFound", provider.Comment{ID: "UgzNoSuchComment00004AaABAg"}},
		{"too long", strings.Repeat("é", limit+1), "commentTextTooLong", top},
		{"empty", " ", "commentTextRequired", top},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.p.Reply(context.Background(), e.channel("tok"), id, c.to, c.text)
			providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.why)
		})
	}
	if _, err := e.p.Reply(context.Background(), e.channel("tok"), id, top, strings.Repeat("é", limit)); err != nil {
		t.Errorf("a reply of exactly %d characters: %v", limit, err)
	}
	if n := len(e.Introspect().Replies); n != 1 {
		t.Errorf("%d replies recorded, want the one accepted", n)
	}
}

// TestCommentsUnknownVideo: comments of a video YouTube does not know are refused, not empty.
func TestCommentsUnknownVideo(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	_, err := e.p.Comments(context.Background(), e.channel("tok"), "unknownVid0")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "videoNotFound")
}

// TestReplyQuota: a reply costs 50 units of the project's daily quota; when they are not
// left, the reply fails for the day while a 1-unit read still works.
func TestReplyQuota(t *testing.T) {
	// Publishing spends a few 1-unit polls of the daily units (the upload is charged to a
	// bucket of its own), a listing and a metrics read 1 each: fewer than 50 are left.
	e := newAudienceEnv(t, youtubesim.Options{DailyQuota: 40})
	id, _ := e.publish(t)
	top := e.comments(t, id)[0]
	if _, err := e.p.Metrics(context.Background(), e.channel("tok"), []string{id}); err != nil {
		t.Fatal(err)
	}
	_, err := e.p.Reply(context.Background(), e.channel("tok"), id, top, "hello")
	providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "quota")
}

// TestAudienceFaults: the account's faults reach every call as classified errors.
func TestAudienceFaults(t *testing.T) {
	e := newAudienceEnv(t, youtubesim.Options{})
	for _, c := range []struct {
		token, category string
		transient       bool
		retryAfter      time.Duration
	}{
		{"tok-down", provider.CategoryUpstreamUnavailable, true, 0},
		{"tok-auth", provider.CategoryAuthExpired, false, 0},
		{"tok-slow", provider.CategoryRateLimited, true, 10 * time.Second},
	} {
		t.Run(c.token, func(t *testing.T) {
			ch := e.channel(c.token)
			_, err := e.p.Metrics(context.Background(), ch, []string{"someVideo01"})
			pe := providertest.WantError(t, err, c.category, c.transient, "")
			if pe.RetryAfter != c.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, c.retryAfter)
			}
			_, err = e.p.Comments(context.Background(), ch, "someVideo01")
			providertest.WantError(t, err, c.category, c.transient, "")
			_, err = e.p.Reply(context.Background(), ch, "someVideo01", provider.Comment{ID: "UgzSome"}, "hi")
			providertest.WantError(t, err, c.category, c.transient, "")
		})
	}
}

func sameMetrics(a, b provider.Metrics) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Views, b.Views) && eq(a.Likes, b.Likes) && eq(a.Comments, b.Comments) && eq(a.Shares, b.Shares) &&
		eq(a.Impressions, b.Impressions) && eq(a.Reach, b.Reach) && eq(a.Saves, b.Saves) && eq(a.WatchTimeSeconds, b.WatchTimeSeconds)
}

func show(m provider.Metrics) string {
	f := func(name string, p *int64) string {
		if p == nil {
			return name + "=nil"
		}
		return name + "=" + itoa(*p)
	}
	return strings.Join([]string{f("views", m.Views), f("likes", m.Likes), f("comments", m.Comments), f("shares", m.Shares),
		f("impressions", m.Impressions), f("reach", m.Reach), f("saves", m.Saves), f("watch", m.WatchTimeSeconds)}, " ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
