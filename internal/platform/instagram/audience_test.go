package instagram_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	audToken   = "ig-audience-token"
	audAccount = "17841400000000077"
	audUser    = "reelay.audience"
)

// audience is an Instagram simulator on providertest's server, with a provider and the
// channel of its one account.
type audience struct {
	e  *providertest.Env
	p  *instagram.Provider
	ch provider.Channel
}

func newAudience(t *testing.T, b sim.Behavior) audience {
	t.Helper()
	accts := sim.StaticAccounts{audToken: {ID: audAccount, Username: audUser, Behavior: b}}
	e := providertest.NewEnv(t, "instagram", accts, instagramsim.New, providertest.Options{})
	return audience{
		e:  e,
		p:  instagram.New(instagram.Config{HTTPClient: e.Client, Now: e.Clock.Now}),
		ch: provider.Channel{Account: audAccount, Credentials: map[string]string{"access_token": audToken}, BaseURL: e.BaseURL + "/" + instagram.APIVersion},
	}
}

// publish publishes a Reel and answers its media id and when the simulator published it.
func (a audience) publish(t *testing.T) (string, time.Time) {
	t.Helper()
	v := providertest.ShortVideo()
	v.Serve(t)
	d := a.e.Destination(audAccount, a.ch.Credentials, v, "")
	d.BaseURL = a.ch.BaseURL
	var at time.Time
	for range 2000 {
		out, err := providertest.Step(context.Background(), a.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if out.ExternalID != "" && at.IsZero() {
			at = a.e.Clock.Now() // the step of media_publish
		}
		if out.Done() {
			return out.ExternalID, at
		}
		a.e.Clock.Advance(out.After)
		time.Sleep(time.Millisecond) // lets the simulator's download finish
	}
	t.Fatal("the Reel was not published")
	return "", time.Time{}
}

// setClock moves the simulator's clock forward to t.
func (a audience) setClock(t time.Time) { a.e.Clock.Advance(t.Sub(a.e.Clock.Now())) }

// graph calls the simulator directly, as the channel.
func (a audience) graph(t *testing.T, method, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, a.ch.BaseURL+path+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+audToken)
	resp, err := a.e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestMetricsAreTheAudienceAtTheSimulatorsClock(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	for _, after := range []time.Duration{0, 90 * time.Minute, 26 * time.Hour} {
		a.setClock(at.Add(after))
		got, err := a.p.Metrics(context.Background(), a.ch, []string{id, "17920000000000999"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got["17920000000000999"]; ok || len(got) > 1 {
			t.Fatalf("after %s: metrics %v for an unknown media", after, got)
		}
		aud := sim.AudienceOf(id, at, a.e.Clock.Now())
		m, ok := got[id]
		if aud.Views == 0 {
			// Instagram answers an empty set, not zeros, before it has figures.
			if ok {
				t.Fatalf("at publishing: metrics %+v; want none", m)
			}
			continue
		}
		want := map[string]any{
			"views": aud.Views, "reach": aud.Reach, "likes": aud.Likes, "comments": aud.Comments, "shares": aud.Shares,
			"saves": aud.Saves, "watch": aud.WatchSeconds, "impressions": nil,
		}
		have := map[string]any{
			"views": ptr(m.Views), "reach": ptr(m.Reach), "likes": ptr(m.Likes), "comments": ptr(m.Comments), "shares": ptr(m.Shares),
			"saves": ptr(m.Saves), "watch": ptr(m.WatchTimeSeconds), "impressions": ptr(m.Impressions),
		}
		for k, w := range want {
			if have[k] != w {
				t.Errorf("after %s: %s = %v; want %v", after, k, have[k], w)
			}
		}
	}
}

func TestMetricsCountTheChannelsReplies(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	a.setClock(at.Add(time.Hour))
	ctx := context.Background()
	comments, err := a.p.Comments(ctx, a.ch, id)
	if err != nil || len(comments) == 0 {
		t.Fatalf("comments %v, %v", comments, err)
	}
	for range 2 {
		if _, err := a.p.Reply(ctx, a.ch, id, comments[0], "Thank you!"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.p.Metrics(ctx, a.ch, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if want := sim.AudienceOf(id, at, a.e.Clock.Now()).Comments + 2; ptr(got[id].Comments) != want {
		t.Fatalf("comments = %v; want %d (audience and the two replies)", ptr(got[id].Comments), want)
	}
}

// The simulator is as strict as Graph about metrics: a retired one fails the whole read.
func TestInsightsRefuseRetiredAndUnknownMetrics(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	a.setClock(at.Add(time.Hour))
	for _, c := range []struct{ metric, text string }{
		{"views,plays", "does not support the plays metric"},
		{"impressions", "does not support the impressions metric"},
		{"video_views", "does not support the video_views metric"},
		{"views,clicks", "metric[1] must be one of the following values"},
		{"", "metric is required"},
	} {
		status, body := a.graph(t, http.MethodGet, "/"+id+"/insights", url.Values{"metric": {c.metric}})
		ge, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || ge["code"] != 100.0 || !strings.Contains(ge["message"].(string), c.text) {
			t.Errorf("metric=%s: %d %v; want code 100 saying %q", c.metric, status, body, c.text)
		}
	}
	status, body := a.graph(t, http.MethodGet, "/"+id+"/insights", url.Values{"metric": {"views,total_interactions,ig_reels_avg_watch_time"}})
	if data, _ := body["data"].([]any); status != http.StatusOK || len(data) != 3 {
		t.Fatalf("valid metrics: %d %v", status, body)
	}
}

func TestCommentsAndReplyRoundTrip(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	a.setClock(at.Add(40 * time.Minute))
	ctx := context.Background()
	aud := sim.AudienceComments(id, at, a.e.Clock.Now())
	got, err := a.p.Comments(ctx, a.ch, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(aud) || len(aud) < 2 {
		t.Fatalf("%d comments; want the audience's %d", len(got), len(aud))
	}
	ids := map[string]bool{}
	for i, c := range got {
		w := aud[i]
		if c.Author != w.Author || c.Text != w.Text || !c.CreatedAt.Equal(w.At.Truncate(time.Second)) || c.ParentID != "" || c.Own ||
			c.LikeCount == nil || ids[c.ID] || c.ID == "" {
			t.Fatalf("comment %d = %+v; want %+v, top level, not own, a like count, a new id", i, c, w)
		}
		ids[c.ID] = true
	}

	reply, err := a.p.Reply(ctx, a.ch, id, got[1], "Thanks for watching 🎬")
	if err != nil {
		t.Fatal(err)
	}
	if reply.ID == "" || reply.ParentID != got[1].ID || !reply.Own || reply.Author != audUser || reply.Text != "Thanks for watching 🎬" {
		t.Fatalf("reply %+v", reply)
	}
	// Instagram takes replies on top-level comments only: answering the reply answers its parent.
	again, err := a.p.Reply(ctx, a.ch, id, reply, "And again")
	if err != nil {
		t.Fatal(err)
	}
	if again.ParentID != got[1].ID {
		t.Fatalf("reply to a reply has parent %q; want the top-level %q", again.ParentID, got[1].ID)
	}

	after, err := a.p.Comments(ctx, a.ch, id)
	if err != nil {
		t.Fatal(err)
	}
	var own []provider.Comment
	for _, c := range after {
		if c.Own {
			own = append(own, c)
		}
	}
	if len(after) != len(got)+2 || len(own) != 2 || own[0].ID != reply.ID || own[1].ID != again.ID ||
		own[0].ParentID != got[1].ID || own[1].ParentID != got[1].ID {
		t.Fatalf("after replying: %d comments, own %+v", len(after), own)
	}
	rec := a.e.Introspect().Replies
	if len(rec) != 2 || rec[0] != (sim.Reply{Account: audAccount, CommentID: got[1].ID, Text: "Thanks for watching 🎬"}) ||
		rec[1].CommentID != got[1].ID {
		t.Fatalf("recorded replies %+v", rec)
	}
}

func TestReplyRefusals(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	a.setClock(at.Add(30 * time.Minute))
	ctx := context.Background()
	comments, err := a.p.Comments(ctx, a.ch, id)
	if err != nil || len(comments) < 2 {
		t.Fatalf("comments %v, %v", comments, err)
	}
	if status, body := a.graph(t, http.MethodPost, "/"+comments[1].ID, url.Values{"hide": {"true"}}); status != http.StatusOK || body["success"] != true {
		t.Fatalf("hiding: %d %v", status, body)
	}
	for _, c := range []struct {
		name string
		to   provider.Comment
		text string
		want string
	}{
		{"unknown comment", provider.Comment{ID: "17850000000000001"}, "hi", "does not exist"},
		{"too long", comments[0], strings.Repeat("a", 2201), "too long"},
		{"hidden comment", comments[1], "hi", "hidden"},
		{"empty", comments[0], "", "message is required"},
	} {
		_, err := a.p.Reply(ctx, a.ch, id, c.to, c.text)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.want)
	}
	if n := len(a.e.Introspect().Replies); n != 0 {
		t.Fatalf("%d replies recorded", n)
	}
	// 2,200 characters are within the limit, emoji counted as two UTF-16 units.
	if _, err := a.p.Reply(ctx, a.ch, id, comments[0], strings.Repeat("a", 2198)+"🎬"); err != nil {
		t.Fatal(err)
	}
}

// Another account's Reel is one Graph does not show.
func TestOtherAccountsItems(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, _ := a.publish(t)
	other := a.ch
	other.Credentials = map[string]string{"access_token": "someone-else"}
	_, err := a.p.Comments(context.Background(), other, id)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "code 190")

	// A second account of the simulator sees neither figures nor comments of the first's.
	accts := sim.StaticAccounts{audToken: {ID: audAccount, Username: audUser}, "second": {ID: "17841400000000078", Username: "second"}}
	e := providertest.NewEnv(t, "instagram", accts, instagramsim.New, providertest.Options{})
	b := audience{e: e, p: instagram.New(instagram.Config{HTTPClient: e.Client, Now: e.Clock.Now}),
		ch: provider.Channel{Account: audAccount, Credentials: map[string]string{"access_token": audToken}, BaseURL: e.BaseURL + "/" + instagram.APIVersion}}
	mine, at := b.publish(t)
	b.setClock(at.Add(time.Hour))
	second := provider.Channel{Account: "17841400000000078", Credentials: map[string]string{"access_token": "second"}, BaseURL: b.ch.BaseURL}
	got, err := b.p.Metrics(context.Background(), second, []string{mine})
	if err != nil || len(got) != 0 {
		t.Fatalf("another account's metrics: %v, %v", got, err)
	}
	_, err = b.p.Comments(context.Background(), second, mine)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "does not exist")
}

func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	calls := map[string]func(p *instagram.Provider, ch provider.Channel) error{
		"metrics": func(p *instagram.Provider, ch provider.Channel) error {
			_, err := p.Metrics(context.Background(), ch, []string{"17920000000000001"})
			return err
		},
		"comments": func(p *instagram.Provider, ch provider.Channel) error {
			_, err := p.Comments(context.Background(), ch, "17920000000000001")
			return err
		},
		"reply": func(p *instagram.Provider, ch provider.Channel) error {
			_, err := p.Reply(context.Background(), ch, "17920000000000001", provider.Comment{ID: "17850000000000001"}, "hi")
			return err
		},
	}
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
		retry     time.Duration
	}{
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, 0},
		{sim.FailAuth, provider.CategoryAuthExpired, false, 0},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, time.Minute},
	} {
		for name, call := range calls {
			t.Run(c.fail+"/"+name, func(t *testing.T) {
				t.Parallel()
				a := newAudience(t, sim.Behavior{Fail: c.fail})
				pe := providertest.WantError(t, call(a.p, a.ch), c.category, c.transient, "")
				if pe.RetryAfter != c.retry || strings.Contains(pe.Message, audToken) {
					t.Fatalf("error %+v; want RetryAfter %s, no token", pe, c.retry)
				}
			})
		}
	}
}

// Comment pages follow Graph's cursors, and a bounded read stops where it is told.
func TestCommentPaging(t *testing.T) {
	t.Parallel()
	a := newAudience(t, sim.Behavior{ProcessingMS: 0})
	id, at := a.publish(t)
	a.setClock(at.Add(48 * time.Hour))
	g := metagraph.New("Instagram", a.ch.BaseURL, audToken, a.e.Client)
	q := url.Values{"fields": {"id,text"}, "limit": {"5"}}
	type row struct{ ID, Text string }
	all, err := metagraph.List[row](context.Background(), g, "/"+id+"/comments", q, 10)
	if err != nil || len(all) != sim.MaxAudienceComments {
		t.Fatalf("%d comments, %v; want %d", len(all), err, sim.MaxAudienceComments)
	}
	two, err := metagraph.List[row](context.Background(), g, "/"+id+"/comments", q, 2)
	if err != nil || len(two) != 10 || two[5] != all[5] {
		t.Fatalf("two pages: %d comments, %v", len(two), err)
	}
}
