package linkedin

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/linkedin/linkedinsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// audienceEnv is a simulator where the member publishes with "tok" and reads with tokens of
// every behavior; "tok-other" is another member.
func audienceEnv(t *testing.T) (*providertest.Env, *linkedinsim.Sim, *Provider) {
	t.Helper()
	var s *linkedinsim.Sim
	acc := func(fail string) sim.Account {
		return sim.Account{ID: member, Username: "Ada Lovelace", Behavior: sim.Behavior{ProcessingMS: 2000, Fail: fail}}
	}
	e := providertest.NewEnv(t, "linkedin", sim.StaticAccounts{
		"tok":             acc(""),
		"tok-auth":        acc(sim.FailAuth),
		"tok-ratelimit":   acc(sim.FailRateLimit),
		"tok-unavailable": acc(sim.FailUnavailable),
		"tok-other":       {ID: "someoneElse"},
	}, func(c sim.Config) http.Handler {
		s = linkedinsim.NewSim(c, linkedinsim.Options{})
		return s
	}, providertest.Options{})
	return e, s, New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: testVersion, Repeat: provider.Repeat{Delay: time.Millisecond}})
}

// publishPost publishes a post as the member and returns it as the simulator knows it.
func publishPost(t *testing.T, e *providertest.Env, s *linkedinsim.Sim, p *Provider, caption string) linkedinsim.Post {
	t.Helper()
	d := e.Destination(member, creds(), providertest.ShortVideo(), "")
	d.Caption = caption
	outs, err := e.Run(p, d, 40)
	if err != nil {
		t.Fatal(err)
	}
	for _, post := range s.Posts() {
		if post.URN == outs[len(outs)-1].ExternalID {
			return post
		}
	}
	t.Fatalf("the simulator has no post %s", outs[len(outs)-1].ExternalID)
	return linkedinsim.Post{}
}

func channel(e *providertest.Env, token string) provider.Channel {
	return provider.Channel{Account: member, Credentials: map[string]string{"access_token": token}, BaseURL: e.BaseURL}
}

// wantMetrics is what LinkedIn reports for a post with the audience a and comments comments.
func wantMetrics(a sim.Audience, comments int64) provider.Metrics {
	return provider.Metrics{
		Views: provider.N(a.Views), Likes: provider.N(a.Likes), Comments: provider.N(comments), Shares: provider.N(a.Shares),
		Impressions: provider.N(a.Impressions), Reach: provider.N(a.Reach), WatchTimeSeconds: provider.N(a.WatchSeconds),
	}
}

func sameMetrics(t *testing.T, got, want provider.Metrics) {
	t.Helper()
	for name, pair := range map[string][2]*int64{
		"views": {got.Views, want.Views}, "likes": {got.Likes, want.Likes}, "comments": {got.Comments, want.Comments},
		"shares": {got.Shares, want.Shares}, "impressions": {got.Impressions, want.Impressions}, "reach": {got.Reach, want.Reach},
		"saves": {got.Saves, want.Saves}, "watch_time": {got.WatchTimeSeconds, want.WatchTimeSeconds},
	} {
		g, w := pair[0], pair[1]
		if (g == nil) != (w == nil) || g != nil && *g != *w {
			t.Errorf("%s = %s, want %s", name, show(g), show(w))
		}
	}
}

func show(n *int64) string {
	if n == nil {
		return "nil"
	}
	return strconv.FormatInt(*n, 10)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	first := publishPost(t, e, s, p, "first")
	e.Clock.Advance(25 * time.Minute)
	second := publishPost(t, e, s, p, "second")
	e.Clock.Advance(40 * time.Minute)
	now := e.Clock.Now()

	ids := []string{first.URN, "urn:li:share:1234567890123456789", second.URN, "urn:li:video:C5505AQH", "not-a-urn"}
	got, err := p.Metrics(context.Background(), channel(e, "tok"), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("figures for %d items, want the 2 posts: %v", len(got), got)
	}
	for _, post := range []linkedinsim.Post{first, second} {
		comments := int64(len(sim.AudienceComments(post.URN, post.Created, now)))
		sameMetrics(t, got[post.URN], wantMetrics(sim.AudienceOf(post.URN, post.Created, now), comments))
		if got[post.URN].Saves != nil {
			t.Errorf("saves = %d; LinkedIn's member statistics have no saves", *got[post.URN].Saves)
		}
	}
	// One metric a call: five post statistics and two video statistics per known post, and
	// nothing more once LinkedIn answered 404.
	if n := len(e.Requests(http.MethodGet, "/rest/memberCreatorPostAnalytics")); n != 2*5+1 {
		t.Errorf("%d post statistics calls, want 11", n)
	}
	if n := len(e.Requests(http.MethodGet, "/rest/memberCreatorVideoAnalytics")); n != 2*2 {
		t.Errorf("%d video statistics calls, want 4", n)
	}
	for _, r := range e.Requests(http.MethodGet, "Analytics") {
		if !strings.Contains(r.Query, "entity=(share:urn%3Ali%3Ashare%3A") || !strings.Contains(r.Query, "aggregation=TOTAL") {
			t.Errorf("statistics query %q is not a Rest.li 2.0 entity union", r.Query)
		}
	}
}

func TestMetricsOfLaterVersionsAndOldPosts(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	post := publishPost(t, e, s, p, "a post")

	// From 202605 metricType is a string, not an object.
	e.Clock.Advance(100 * 24 * time.Hour)
	later := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: "202605"})
	got, err := later.Metrics(context.Background(), channel(e, "tok"), []string{post.URN})
	if err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	sameMetrics(t, got[post.URN], wantMetrics(sim.AudienceOf(post.URN, post.Created, now), int64(len(sim.AudienceComments(post.URN, post.Created, now)))))

	// A year on, LinkedIn has no plays any more: views stay unknown, not zero.
	e.Clock.Advance(300 * 24 * time.Hour)
	got, err = later.Metrics(context.Background(), channel(e, "tok"), []string{post.URN})
	if err != nil {
		t.Fatal(err)
	}
	now = e.Clock.Now()
	want := wantMetrics(sim.AudienceOf(post.URN, post.Created, now), sim.MaxAudienceComments)
	want.Views = nil
	sameMetrics(t, got[post.URN], want)
}

func TestCommentsAndReplies(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	post := publishPost(t, e, s, p, "talk to me")
	e.Clock.Advance(45 * time.Minute)
	ctx, ch := context.Background(), channel(e, "tok")

	audience := sim.AudienceComments(post.URN, post.Created, e.Clock.Now())
	got, err := p.Comments(ctx, ch, post.URN)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(audience) || len(audience) < 3 {
		t.Fatalf("%d comments, want the audience's %d (at least 3)", len(got), len(audience))
	}
	for i, a := range audience {
		c := got[i]
		if c.ID != linkedinsim.AudienceCommentURN(post, a.N) || c.ParentID != "" || c.Author != linkedinsim.AudienceActor(a.Author) ||
			c.Text != a.Text || !c.CreatedAt.Equal(a.At) || c.Own || c.LikeCount == nil || *c.LikeCount != 0 {
			t.Errorf("comment %d = %+v; want audience comment %+v", i, c, a)
		}
	}

	// A reply to a first-level comment goes below it; a reply to that reply goes below the same
	// first-level comment (LinkedIn nests one level).
	second := got[1]
	r1, err := p.Reply(ctx, ch, post.URN, second, "Thanks, it took a week!")
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Minute)
	r2, err := p.Reply(ctx, ch, post.URN, r1, "And a second week for the edit 😅")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []provider.Comment{r1, r2} {
		if r.ParentID != second.ID || !r.Own || r.Author != "urn:li:person:"+member ||
			!strings.HasPrefix(r.ID, "urn:li:comment:("+post.Activity+",") || r.CreatedAt.IsZero() {
			t.Errorf("reply = %+v; want an own comment below %s", r, second.ID)
		}
	}
	if r1.Text != "Thanks, it took a week!" || r1.ID == r2.ID {
		t.Errorf("replies %+v and %+v", r1, r2)
	}

	got, err = p.Comments(ctx, ch, post.URN)
	if err != nil {
		t.Fatal(err)
	}
	var own []provider.Comment
	for _, c := range got {
		if c.Own {
			own = append(own, c)
		}
	}
	if len(own) != 2 || own[0].ID != r1.ID || own[1].ID != r2.ID || own[0].ParentID != second.ID || own[1].ParentID != second.ID ||
		own[1].Text != r2.Text || !own[0].CreatedAt.Equal(r1.CreatedAt) {
		t.Fatalf("own comments = %+v; want the two replies below %s", own, second.ID)
	}
	replies := e.Introspect().Replies
	if len(replies) != 2 || replies[0] != (sim.Reply{Account: member, CommentID: second.ID, Text: r1.Text}) ||
		replies[1] != (sim.Reply{Account: member, CommentID: second.ID, Text: r2.Text}) {
		t.Fatalf("recorded replies = %+v", replies)
	}

	// LinkedIn's comment count includes the member's replies.
	m, err := p.Metrics(ctx, ch, []string{post.URN})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(sim.AudienceComments(post.URN, post.Created, e.Clock.Now())) + 2); m[post.URN].Comments == nil || *m[post.URN].Comments != want {
		t.Errorf("comments = %v, want %d", m[post.URN].Comments, want)
	}
}

func TestCommentsReadIsBounded(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	post := publishPost(t, e, s, p, "busy post")
	e.Clock.Advance(3 * time.Hour)
	ctx, ch := context.Background(), channel(e, "tok")
	top, err := p.Comments(ctx, ch, post.URN)
	if err != nil || len(top) != sim.MaxAudienceComments {
		t.Fatalf("%d comments, %v; want %d", len(top), err, sim.MaxAudienceComments)
	}
	for _, c := range top {
		if _, err := p.Reply(ctx, ch, post.URN, c, "thanks"); err != nil {
			t.Fatal(err)
		}
	}
	before := len(e.Requests(http.MethodGet, "/comments"))
	got, err := p.Comments(ctx, ch, post.URN)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Requests(http.MethodGet, "/comments")) - before; n != commentCalls {
		t.Errorf("%d calls, want %d", n, commentCalls)
	}
	// The first page, then the threads of the newest comments while calls remain.
	var answered []string
	for _, c := range got {
		if c.Own {
			answered = append(answered, c.ParentID)
		}
	}
	var newest []string
	for i := len(top) - 1; i >= 0 && len(newest) < commentCalls-1; i-- {
		newest = append(newest, top[i].ID)
	}
	if len(got) != len(top)+commentCalls-1 || !slices.Equal(answered, newest) {
		t.Errorf("replies below %v; want below the %d newest comments %v", answered, commentCalls-1, newest)
	}
}

func TestReplyRefusals(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	post := publishPost(t, e, s, p, "a post")
	e.Clock.Advance(10 * time.Minute)
	ctx, ch := context.Background(), channel(e, "tok")
	comments, err := p.Comments(ctx, ch, post.URN)
	if err != nil || len(comments) == 0 {
		t.Fatalf("comments %v, %v", comments, err)
	}
	// 1,250 UTF-16 units: an emoji counts two.
	if _, err := p.Reply(ctx, ch, post.URN, comments[0], strings.Repeat("a", 1248)+"🎬"); err != nil {
		t.Fatalf("a reply of 1,250 units: %v", err)
	}
	_, err = p.Reply(ctx, ch, post.URN, comments[0], strings.Repeat("a", 1249)+"🎬")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "exceeded the maximum allowed (1250 characters)")

	unknown := provider.Comment{ID: "urn:li:comment:(" + post.Activity + ",7999999999999999999)"}
	_, err = p.Reply(ctx, ch, post.URN, unknown, "hello?")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "does not exist")
	if n := len(e.Introspect().Replies); n != 1 {
		t.Errorf("%d replies recorded, want the one accepted", n)
	}

	// Comments of a post LinkedIn does not know: none.
	none, err := p.Comments(ctx, ch, "urn:li:share:1234567890123456789")
	if err != nil || len(none) != 0 {
		t.Errorf("comments of an unknown post = %v, %v", none, err)
	}
}

func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	e, s, p := audienceEnv(t)
	post := publishPost(t, e, s, p, "a post")
	e.Clock.Advance(10 * time.Minute)
	ctx := context.Background()
	comments, err := p.Comments(ctx, channel(e, "tok"), post.URN)
	if err != nil || len(comments) == 0 {
		t.Fatalf("comments %v, %v", comments, err)
	}
	calls := map[string]func(provider.Channel) error{
		"metrics": func(ch provider.Channel) error {
			_, err := p.Metrics(ctx, ch, []string{post.URN})
			return err
		},
		"comments": func(ch provider.Channel) error {
			_, err := p.Comments(ctx, ch, post.URN)
			return err
		},
		"reply": func(ch provider.Channel) error {
			_, err := p.Reply(ctx, ch, post.URN, comments[0], "hi")
			return err
		},
	}
	for _, c := range []struct {
		token     string
		category  string
		transient bool
		text      string
		wait      time.Duration
	}{
		{"tok-auth", provider.CategoryAuthExpired, false, "EXPIRED_ACCESS_TOKEN", 0},
		{"tok-ratelimit", provider.CategoryRateLimited, true, "throttle", time.Minute},
		{"tok-unavailable", provider.CategoryUpstreamUnavailable, true, "Service Unavailable", 0},
		{"nope", provider.CategoryAuthExpired, false, "INVALID_ACCESS_TOKEN", 0},
	} {
		for name, call := range calls {
			pe := providertest.WantError(t, call(channel(e, c.token)), c.category, c.transient, c.text)
			if pe.RetryAfter != c.wait {
				t.Errorf("%s with %s: RetryAfter = %v, want %v", name, c.token, pe.RetryAfter, c.wait)
			}
		}
	}
	// Another member cannot read the member's statistics or comments: LinkedIn refuses (403),
	// and the error names the permission.
	other := provider.Channel{Account: "someoneElse", Credentials: map[string]string{"access_token": "tok-other"}, BaseURL: e.BaseURL}
	providertest.WantError(t, calls["metrics"](other), provider.CategoryAuthExpired, false, "r_member_postAnalytics")
	providertest.WantError(t, calls["comments"](other), provider.CategoryAuthExpired, false, "r_member_social")
	if n := len(e.Introspect().Replies); n != 0 {
		t.Errorf("%d replies recorded despite the faults", n)
	}
}
