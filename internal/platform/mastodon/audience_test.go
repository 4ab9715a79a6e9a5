package mastodon_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/mastodon/mastodonsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// channel is the channel as connecting it stores it: external id "{host}:{account id}".
func (e *env) channel() provider.Channel {
	return provider.Channel{Account: e.host() + ":" + accountID, Credentials: e.creds(), BaseURL: e.BaseURL}
}

// published publishes a short video, as a destination of its own, and returns the
// simulator's status.
func (e *env) published() mastodonsim.Status {
	e.T.Helper()
	d := e.dest(providertest.NewVideo(64<<10, 5*time.Second, 720, 1280), "")
	d.ID += "_" + strconv.Itoa(len(e.sim.Statuses(accountID))) // its own Idempotency-Key
	outs, err := e.Run(e.p, d, 20)
	if err != nil {
		e.T.Fatal(err)
	}
	id := outs[len(outs)-1].ExternalID
	for _, s := range e.sim.Statuses(accountID) {
		if s.ID == id {
			return s
		}
	}
	e.T.Fatalf("the instance has no status %s", id)
	return mastodonsim.Status{}
}

func TestMetricsAreTheAudienceFigures(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{LegacyInstance: legacy})
		item := e.published()
		for _, after := range []time.Duration{0, 41 * time.Minute, 6 * time.Hour} {
			e.Clock.Advance(after)
			got, err := e.p.Metrics(context.Background(), e.channel(), []string{item.ID})
			if err != nil {
				t.Fatal(err)
			}
			m, ok := got[item.ID]
			if !ok || len(got) != 1 {
				t.Fatalf("metrics = %+v", got)
			}
			a := sim.AudienceOf(item.ID, item.CreatedAt, e.Clock.Now())
			want := map[string]int64{"likes": a.Likes, "shares": a.Shares, "comments": a.Comments}
			for name, have := range map[string]*int64{"likes": m.Likes, "shares": m.Shares, "comments": m.Comments} {
				if have == nil || *have != want[name] {
					t.Errorf("legacy %v, after %s: %s = %v, want %d", legacy, after, name, have, want[name])
				}
			}
			for name, v := range map[string]*int64{"views": m.Views, "impressions": m.Impressions, "reach": m.Reach,
				"saves": m.Saves, "watch_time": m.WatchTimeSeconds} {
				if v != nil {
					t.Errorf("%s = %d, want nil: Mastodon does not give it", name, *v)
				}
			}
		}
		if a := sim.AudienceOf(item.ID, item.CreatedAt, e.Clock.Now()); a.Likes == 0 || a.Shares == 0 || a.Likes == a.Shares {
			t.Fatalf("the audience is too small to tell figures apart: %+v", a)
		}
		batch, single := len(e.Requests(http.MethodGet, "/api/v1/statuses")), len(e.Requests(http.MethodGet, "/api/v1/statuses/"+item.ID))
		if legacy && (batch != 0 || single != 3) || !legacy && (batch != 3 || single != 0) {
			t.Errorf("legacy %v: %d batch and %d single reads for 3 syncs", legacy, batch, single)
		}
	}
}

func TestMetricsBatchesOf20(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{})
	first, second := e.published(), e.published()
	e.Clock.Advance(time.Hour)
	ids := []string{first.ID, first.ID, ""}
	for i := range 42 {
		ids = append(ids, strconv.Itoa(1_000_000+i))
	}
	ids = append(ids, second.ID)
	got, err := e.p.Metrics(context.Background(), e.channel(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[first.ID].Likes == nil || got[second.ID].Shares == nil {
		t.Fatalf("metrics = %+v; want the two statuses that exist", got)
	}
	calls := e.Requests(http.MethodGet, "/api/v1/statuses")
	if len(calls) != 3 {
		t.Fatalf("%d calls for 44 statuses, want 3", len(calls))
	}
	for _, c := range calls {
		q, _ := url.ParseQuery(c.Query)
		if n := len(q["id[]"]); n == 0 || n > 20 {
			t.Errorf("a call asked for %d statuses", n)
		}
		if c.Header.Get("Authorization") != "Bearer "+token {
			t.Error("a read without the channel's token")
		}
	}
}

func TestCommentsAreTheAudienceComments(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{})
	item := e.published()
	e.Clock.Advance(50 * time.Minute)
	got, err := e.p.Comments(context.Background(), e.channel(), item.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.AudienceComments(item.ID, item.CreatedAt, e.Clock.Now())
	if len(want) < 3 || len(got) != len(want) {
		t.Fatalf("%d comments, want the audience's %d", len(got), len(want))
	}
	for i, c := range want {
		g := got[i]
		if g.ID != mastodonsim.AudienceID(item.ID, c) || g.ParentID != "" || g.Own || g.Author != mastodonsim.AudienceAcct(c.Author) ||
			g.Text != c.Text || !g.CreatedAt.Equal(c.At) || g.LikeCount == nil || *g.LikeCount != int64(c.N%3) {
			t.Errorf("comment %d = %+v; want %+v", i, g, c)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{})
	item := e.published()
	e.Clock.Advance(30 * time.Minute)
	ctx := context.Background()
	comments, err := e.p.Comments(ctx, e.channel(), item.ID)
	if err != nil || len(comments) < 2 {
		t.Fatalf("comments = %+v, %v", comments, err)
	}
	to := comments[1]
	text := "Thanks! Details at https://example.com/a/very/long/path/to/a/page & more"
	reply, err := e.p.Reply(ctx, e.channel(), item.ID, to, text)
	if err != nil {
		t.Fatal(err)
	}
	user, _, _ := strings.Cut(to.Author, "@")
	// The instance shows a remote mention as @user, and the link whole.
	if reply.ID == "" || reply.ParentID != to.ID || !reply.Own || reply.Author != "reelay" || reply.Text != "@"+user+" "+text {
		t.Fatalf("reply = %+v", reply)
	}
	sent := "@" + to.Author + " " + text
	if r := e.Introspect().Replies; len(r) != 1 || r[0] != (sim.Reply{Account: accountID, CommentID: to.ID, Text: sent}) {
		t.Errorf("recorded replies = %+v", r)
	}
	if len(e.Introspect().Published) != 1 {
		t.Error("the reply was recorded as a published item")
	}
	posts := e.Requests(http.MethodPost, "/api/v1/statuses")
	if len(posts) != 2 || !strings.HasPrefix(posts[1].Header.Get("Idempotency-Key"), "reelay-reply-") {
		t.Errorf("reply requests = %+v", posts)
	}

	after, err := e.p.Comments(ctx, e.channel(), item.ID)
	if err != nil {
		t.Fatal(err)
	}
	var seen *provider.Comment
	for i, c := range after {
		if c.ID == reply.ID {
			seen = &after[i]
		}
	}
	if seen == nil || !seen.Own || seen.ParentID != to.ID || len(after) != len(comments)+1 {
		t.Fatalf("comments after the reply = %+v", after)
	}
	// The item counts its direct replies; the comment counts the reply.
	m, err := e.p.Metrics(ctx, e.channel(), []string{item.ID, to.ID})
	if err != nil {
		t.Fatal(err)
	}
	if a := sim.AudienceOf(item.ID, item.CreatedAt, e.Clock.Now()); *m[item.ID].Comments != a.Comments || *m[to.ID].Comments != 1 {
		t.Errorf("replies counted: item %d (audience %d), comment %d", *m[item.ID].Comments, a.Comments, *m[to.ID].Comments)
	}

	// The same reply again (its answer lost) is the same status.
	again, err := e.p.Reply(ctx, e.channel(), item.ID, to, text)
	if err != nil || again.ID != reply.ID || len(e.Introspect().Replies) != 1 {
		t.Fatalf("repeated reply = %+v, %v; %d recorded", again, err, len(e.Introspect().Replies))
	}
	// A reply to the channel's own comment mentions nobody; one that names the author already
	// is sent as it is.
	own, err := e.p.Reply(ctx, e.channel(), item.ID, *seen, "One more thing")
	if err != nil || own.Text != "One more thing" || own.ParentID != reply.ID {
		t.Fatalf("reply to our own = %+v, %v", own, err)
	}
	named := "Yes @" + to.Author + ", it was"
	if _, err := e.p.Reply(ctx, e.channel(), item.ID, to, named); err != nil {
		t.Fatal(err)
	}
	if r := e.Introspect().Replies; r[len(r)-1].Text != named {
		t.Errorf("sent %q, want %q", r[len(r)-1].Text, named)
	}
}

func TestReplyRefusals(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{MaxCharacters: 100})
	item := e.published()
	comments, err := e.p.Comments(context.Background(), e.channel(), item.ID)
	if err != nil || len(comments) == 0 {
		t.Fatalf("comments = %+v, %v", comments, err)
	}
	to := comments[0]
	user, _, _ := strings.Cut(to.Author, "@")
	room := 100 - len("@"+user+" ") // the mention counts without its domain
	if _, err := e.p.Reply(context.Background(), e.channel(), item.ID, to, strings.Repeat("é", room)); err != nil {
		t.Fatalf("a reply at the limit: %v", err)
	}
	for _, c := range []struct {
		name string
		to   provider.Comment
		text string
		want string
	}{
		{"over the instance's limit", to, strings.Repeat("é", room+1), "allows at most 100"},
		{"unknown comment", provider.Comment{ID: "123456", Author: "x@y.example"}, "hi", "does not appear to exist"},
		{"empty", to, " ", "empty"},
	} {
		_, err := e.p.Reply(context.Background(), e.channel(), item.ID, c.to, c.text)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.want)
	}
	if n := len(e.Requests(http.MethodPost, "/api/v1/statuses")); n != 3 {
		t.Errorf("%d statuses posted; the over-long and empty replies must not be sent", n)
	}
	_, err = e.p.Comments(context.Background(), e.channel(), "999999")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "Record not found")
}

func TestAudienceFaults(t *testing.T) {
	calls := map[string]func(p *env) error{
		"metrics": func(e *env) error {
			_, err := e.p.Metrics(context.Background(), e.channel(), []string{"1234"})
			return err
		},
		"comments": func(e *env) error {
			_, err := e.p.Comments(context.Background(), e.channel(), "1234")
			return err
		},
		"reply": func(e *env) error {
			_, err := e.p.Reply(context.Background(), e.channel(), "1234", provider.Comment{ID: "1234"}, "hi")
			return err
		},
	}
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
	}{
		{sim.FailAuth, provider.CategoryAuthExpired, false},
		{sim.FailRateLimit, provider.CategoryRateLimited, true},
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true},
	} {
		for name, call := range calls {
			t.Run(c.fail+"/"+name, func(t *testing.T) {
				e := newEnv(t, sim.Behavior{Fail: c.fail}, mastodonsim.Options{})
				pe := providertest.WantError(t, call(e), c.category, c.transient, "")
				if c.fail == sim.FailRateLimit && pe.RetryAfter <= 0 {
					t.Errorf("rate limited without RetryAfter: %v", pe)
				}
			})
		}
	}
}
