package bluesky

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/bluesky/blueskysim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

func (e *env) channel() provider.Channel {
	return provider.Channel{Account: account, Credentials: e.creds, BaseURL: e.BaseURL}
}

// published publishes a short video and returns its post: URI (the external id) and the
// simulator's record (whose At is when its audience starts).
func (e *env) published() blueskysim.Post {
	e.T.Helper()
	outs, err := e.Run(e.prov, e.dest(providertest.NewVideo(64<<10, 5*time.Second, 720, 1280), ""), 50)
	if err != nil {
		e.T.Fatal(err)
	}
	id := outs[len(outs)-1].ExternalID
	for _, p := range e.sim.Posts(account) {
		if p.URI == id {
			return p
		}
	}
	e.T.Fatalf("the simulator has no post %s", id)
	return blueskysim.Post{}
}

func TestMetricsAreTheAudienceFigures(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	item := e.published()
	for _, after := range []time.Duration{0, 37 * time.Minute, 5 * time.Hour} {
		e.Clock.Advance(after)
		got, err := e.prov.Metrics(context.Background(), e.channel(), []string{item.URI})
		if err != nil {
			t.Fatal(err)
		}
		a := sim.AudienceOf(item.URI, item.At, e.Clock.Now())
		m, ok := got[item.URI]
		if !ok || len(got) != 1 {
			t.Fatalf("metrics = %+v", got)
		}
		want := map[string]*int64{"likes": &a.Likes, "shares": &a.Shares, "comments": &a.Comments}
		for name, have := range map[string]*int64{"likes": m.Likes, "shares": m.Shares, "comments": m.Comments} {
			if have == nil || *have != *want[name] {
				t.Errorf("after %s: %s = %v, want %d", after, name, have, *want[name])
			}
		}
		// Bluesky gives no views, impressions, reach, saves or watch time: never a zero.
		for name, v := range map[string]*int64{"views": m.Views, "impressions": m.Impressions, "reach": m.Reach,
			"saves": m.Saves, "watch_time": m.WatchTimeSeconds} {
			if v != nil {
				t.Errorf("%s = %d, want nil", name, *v)
			}
		}
	}
	if a := sim.AudienceOf(item.URI, item.At, e.Clock.Now()); a.Likes == 0 || a.Shares < 4 {
		t.Fatalf("the audience is too small to tell figures apart: %+v", a)
	}
}

func TestMetricsBatchesOf25(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	first, second := e.published(), e.published()
	e.Clock.Advance(time.Hour)
	// 58 posts that do not exist, two that do, an id that is no at:// URI and a repeat.
	ids := []string{first.URI, "https://bsky.app/profile/x/post/y", first.URI}
	for i := range 58 {
		ids = append(ids, "at://"+blueskysim.DID(account)+"/app.bsky.feed.post/"+NewTID(e.Clock.Now().Add(time.Duration(i)*time.Second)))
	}
	ids = append(ids, second.URI)
	got, err := e.prov.Metrics(context.Background(), e.channel(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[first.URI].Likes == nil || got[second.URI].Likes == nil {
		t.Fatalf("metrics = %+v; want the two posts that exist", got)
	}
	calls := e.Requests(http.MethodGet, "/xrpc/"+nsidGetPosts)
	if len(calls) != 3 {
		t.Fatalf("%d getPosts calls for 60 posts, want 3", len(calls))
	}
	for _, c := range calls {
		q, _ := url.ParseQuery(c.Query)
		if n := len(q["uris"]); n > 25 || n == 0 {
			t.Errorf("a getPosts call asked for %d uris", n)
		}
		if c.Header.Get("Authorization") == "" {
			t.Error("getPosts without the session's token")
		}
	}
	if got, err := e.prov.Metrics(context.Background(), e.channel(), nil); err != nil || len(got) != 0 {
		t.Errorf("no ids = %v, %v", got, err)
	}
}

func TestCommentsAreTheAudienceComments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	item := e.published()
	e.Clock.Advance(45 * time.Minute)
	got, err := e.prov.Comments(context.Background(), e.channel(), item.URI)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.AudienceComments(item.URI, item.At, e.Clock.Now())
	if len(want) < 3 || len(got) != len(want) {
		t.Fatalf("%d comments, want the %d of the audience", len(got), len(want))
	}
	for i, c := range want {
		g := got[i]
		if g.ID != blueskysim.AudienceURI(item.URI, c) || g.ParentID != "" || g.Own ||
			g.Author != blueskysim.AudienceHandle(c.Author) || g.Text != c.Text || !g.CreatedAt.Equal(c.At) ||
			g.LikeCount == nil || *g.LikeCount != int64(c.N%3) {
			t.Errorf("comment %d = %+v; want %+v", i, g, c)
		}
	}
	// The same comments keep their ids on the next read.
	again, err := e.prov.Comments(context.Background(), e.channel(), item.URI)
	if err != nil || len(again) != len(got) || again[0].ID != got[0].ID {
		t.Errorf("second read = %+v, %v", again, err)
	}
}

func TestReplyRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	item := e.published()
	e.Clock.Advance(20 * time.Minute)
	ctx := context.Background()
	comments, err := e.prov.Comments(ctx, e.channel(), item.URI)
	if err != nil || len(comments) < 2 {
		t.Fatalf("comments = %+v, %v", comments, err)
	}
	to := comments[1]
	text := "Thanks! More at https://example.com #reelay"
	reply, err := e.prov.Reply(ctx, e.channel(), item.URI, to, text)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reply.ID, "at://"+blueskysim.DID(account)+"/app.bsky.feed.post/") || reply.ParentID != to.ID ||
		!reply.Own || reply.Text != text || reply.Author != sandboxtoken.BlueskyHandle(account) {
		t.Fatalf("reply = %+v", reply)
	}
	after, err := e.prov.Comments(ctx, e.channel(), item.URI)
	if err != nil {
		t.Fatal(err)
	}
	var seen *provider.Comment
	for i, c := range after {
		if c.ID == reply.ID {
			seen = &after[i]
		}
	}
	if seen == nil || !seen.Own || seen.ParentID != to.ID || seen.Text != text || len(after) != len(comments)+1 {
		t.Fatalf("comments after the reply = %+v", after)
	}
	if r := e.Introspect().Replies; len(r) != 1 || r[0] != (sim.Reply{Account: account, CommentID: to.ID, Text: text}) {
		t.Errorf("recorded replies = %+v", r)
	}
	// The reply is a record in the thread of the post, with the text's facets.
	var rec struct {
		Reply struct {
			Root, Parent recordRef
		} `json:"reply"`
		Facets []Facet `json:"facets"`
	}
	for _, p := range e.sim.Posts(account) {
		if p.URI == reply.ID {
			if err := json.Unmarshal(p.Record, &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rec.Reply.Root.URI != item.URI || rec.Reply.Root.CID != item.CID || rec.Reply.Parent.URI != to.ID || len(rec.Facets) != 2 {
		t.Errorf("reply record = %+v", rec)
	}
	// The post counts its direct replies; the comment counts the reply.
	m, err := e.prov.Metrics(ctx, e.channel(), []string{item.URI, to.ID})
	if err != nil {
		t.Fatal(err)
	}
	if a := sim.AudienceOf(item.URI, item.At, e.Clock.Now()); *m[item.URI].Comments != a.Comments || *m[to.ID].Comments != 1 {
		t.Errorf("comments counted: post %d (audience %d), comment %d", *m[item.URI].Comments, a.Comments, *m[to.ID].Comments)
	}

	// The same reply again (its answer lost, say) is the same record, not a second post.
	again, err := e.prov.Reply(ctx, e.channel(), item.URI, to, text)
	if err != nil || again.ID != reply.ID {
		t.Fatalf("repeated reply = %+v, %v; want %s", again, err, reply.ID)
	}
	if n := len(e.Introspect().Replies); n != 1 {
		t.Errorf("%d replies recorded after a repeat", n)
	}
	// A reply to our own reply nests under it, in the same thread.
	nested, err := e.prov.Reply(ctx, e.channel(), item.URI, *seen, "And one more thing")
	if err != nil || nested.ParentID != reply.ID {
		t.Fatalf("nested reply = %+v, %v", nested, err)
	}
	last, err := e.prov.Comments(ctx, e.channel(), item.URI)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range last {
		found = found || c.ID == nested.ID && c.ParentID == reply.ID && c.Own
	}
	if !found {
		t.Errorf("the nested reply is not among the comments: %+v", last)
	}
}

func TestReplyRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	item := e.published()
	comments, err := e.prov.Comments(context.Background(), e.channel(), item.URI)
	if err != nil || len(comments) == 0 {
		t.Fatalf("comments = %+v, %v", comments, err)
	}
	other := e.published()
	unknown := provider.Comment{ID: "at://" + blueskysim.DID(account) + "/app.bsky.feed.post/" + NewTID(e.Clock.Now())}
	for _, c := range []struct {
		name string
		item string
		to   provider.Comment
		text string
		want string
	}{
		{"301 graphemes", item.URI, comments[0], strings.Repeat("é", 301), "300"},
		{"unknown comment", item.URI, unknown, "hi", "is not there any more"},
		{"comment of another post", other.URI, comments[0], "hi", "not a reply in the thread"},
		{"no at:// uri", item.URI, provider.Comment{ID: "3kabc"}, "hi", "not a Bluesky post URI"},
	} {
		_, err := e.prov.Reply(context.Background(), e.channel(), c.item, c.to, c.text)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.want)
	}
	if n := len(e.Requests("", "/xrpc/"+nsidCreateRecord)); n != 2 {
		t.Errorf("%d createRecord calls; only the two posts should have been created", n)
	}
	if r := e.Introspect().Replies; len(r) != 0 {
		t.Errorf("replies recorded: %+v", r)
	}
	_, err = e.prov.Comments(context.Background(), e.channel(), unknown.ID)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "Post not found")
}

func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	uri := "at://" + blueskysim.DID(account) + "/app.bsky.feed.post/3kabcdefghij2"
	calls := map[string]func(p *Provider, ch provider.Channel) error{
		"metrics": func(p *Provider, ch provider.Channel) error {
			_, err := p.Metrics(context.Background(), ch, []string{uri})
			return err
		},
		"comments": func(p *Provider, ch provider.Channel) error {
			_, err := p.Comments(context.Background(), ch, uri)
			return err
		},
		"reply": func(p *Provider, ch provider.Channel) error {
			_, err := p.Reply(context.Background(), ch, uri, provider.Comment{ID: uri}, "hi")
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
				t.Parallel()
				e := newEnv(t, sim.Behavior{Fail: c.fail}, blueskysim.Options{}, providertest.Options{})
				pe := providertest.WantError(t, call(e.prov, e.channel()), c.category, c.transient, "")
				if c.fail == sim.FailRateLimit && pe.RetryAfter <= 0 {
					t.Errorf("rate limited without RetryAfter: %v", pe)
				}
			})
		}
	}
}

func TestMetricsKeepFiguresReadBeforeAFailure(t *testing.T) {
	t.Parallel()
	// The account fails calls once told to, after a given number of further calls.
	var mu sync.Mutex
	succeed := -1
	draw := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case succeed < 0:
			return 0.99
		case succeed > 0:
			succeed--
			return 0.99
		}
		return 0
	}
	e := newEnv(t, sim.Behavior{ProcessingMS: -1, Fail: sim.FailFlaky, FailRate: 0.5}, blueskysim.Options{}, providertest.Options{Rand: draw})
	item := e.published()
	ids := []string{item.URI}
	for i := range 30 {
		ids = append(ids, "at://"+blueskysim.DID(account)+"/app.bsky.feed.post/"+NewTID(e.Clock.Now().Add(time.Duration(i+1)*time.Second)))
	}
	mu.Lock()
	succeed = 1 // the first getPosts call; the second fails
	mu.Unlock()
	got, err := e.prov.Metrics(context.Background(), e.channel(), ids)
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "")
	if _, ok := got[item.URI]; !ok || len(got) != 1 {
		t.Errorf("figures read before the failure = %+v", got)
	}
}
