package threads_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/threads/threadssim"
	"github.com/reelay/reelay/internal/provider"
)

// channel is the test profile's channel on f's simulator.
func (f fixture) channel() provider.Channel {
	return provider.Channel{Account: user, Credentials: map[string]string{"access_token": tok}, BaseURL: f.e.BaseURL + "/" + threads.APIVersion}
}

// publishPost publishes a video post and answers its id and when the simulator published it.
func (f fixture) publishPost(t *testing.T) (string, time.Time) {
	t.Helper()
	d := f.dest(t, nil, "")
	var at time.Time
	for range 200 {
		out, err := providertest.Step(context.Background(), f.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if out.ExternalID != "" && at.IsZero() {
			at = f.e.Clock.Now() // the step of threads_publish
		}
		if out.Done() {
			return out.ExternalID, at
		}
		f.e.Clock.Advance(out.After)
	}
	t.Fatal("the post was not published")
	return "", time.Time{}
}

// setClock moves the simulator's clock forward to t.
func (f fixture) setClock(t time.Time) { f.e.Clock.Advance(t.Sub(f.e.Clock.Now())) }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestMetricsAreTheAudienceAtTheSimulatorsClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishPost(t)
	ch := f.channel()
	ctx := context.Background()
	for _, after := range []time.Duration{0, 25 * time.Minute, 30 * time.Hour} {
		f.setClock(at.Add(after))
		got, err := f.p.Metrics(ctx, ch, []string{id, "18000000000099999"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("after %s: metrics for %d items; want the post's only", after, len(got))
		}
		aud := sim.AudienceOf(id, at, f.e.Clock.Now())
		m := got[id]
		want := map[string]any{"views": aud.Views, "likes": aud.Likes, "comments": aud.Comments, "shares": aud.Shares,
			"reach": nil, "impressions": nil, "saves": nil, "watch": nil}
		have := map[string]any{"views": deref(m.Views), "likes": deref(m.Likes), "comments": deref(m.Comments), "shares": deref(m.Shares),
			"reach": deref(m.Reach), "impressions": deref(m.Impressions), "saves": deref(m.Saves), "watch": deref(m.WatchTimeSeconds)}
		for k, w := range want {
			if have[k] != w {
				t.Errorf("after %s: %s = %v; want %v", after, k, have[k], w)
			}
		}
	}
}

// Shares are Threads' reposts, quotes and shares together.
func TestSharesSumRepostsQuotesAndShares(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishPost(t)
	f.setClock(at.Add(10 * time.Hour))
	req, _ := http.NewRequest(http.MethodGet, f.channel().BaseURL+"/"+id+"/insights?metric=reposts,quotes,shares", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := f.e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Name   string `json:"name"`
			Period string `json:"period"`
			Values []struct {
				Value int64 `json:"value"`
			} `json:"values"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Data) != 3 {
		t.Fatalf("insights %+v, %v", body, err)
	}
	var sum int64
	for _, row := range body.Data {
		if row.Period != "lifetime" || len(row.Values) != 1 || row.Values[0].Value == 0 {
			t.Fatalf("row %+v", row)
		}
		sum += row.Values[0].Value
	}
	got, err := f.p.Metrics(context.Background(), f.channel(), []string{id})
	if err != nil || deref(got[id].Shares) != sum {
		t.Fatalf("shares %v, %v; want %d", deref(got[id].Shares), err, sum)
	}
}

func TestInsightsRefuseUnknownMetrics(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, _ := f.publishPost(t)
	for _, metric := range []string{"views,reach", "impressions", ""} {
		req, _ := http.NewRequest(http.MethodGet, f.channel().BaseURL+"/"+id+"/insights?"+url.Values{"metric": {metric}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := f.e.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body.Error.Code != 100 {
			t.Errorf("metric=%q: %d, code %d; want 400, code 100", metric, resp.StatusCode, body.Error.Code)
		}
	}
}

func TestRepliesAndReplyRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishPost(t)
	f.setClock(at.Add(45 * time.Minute))
	ch := f.channel()
	ctx := context.Background()
	aud := sim.AudienceComments(id, at, f.e.Clock.Now())
	got, err := f.p.Comments(ctx, ch, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(aud) || len(aud) < 2 {
		t.Fatalf("%d replies; want the audience's %d", len(got), len(aud))
	}
	for i, c := range got {
		w := aud[i]
		if c.ID == "" || c.Author != w.Author || c.Text != w.Text || !c.CreatedAt.Equal(w.At.Truncate(time.Second)) ||
			c.ParentID != "" || c.Own || c.LikeCount != nil {
			t.Fatalf("reply %d = %+v; want %+v on the post, not own, no like count", i, c, w)
		}
	}

	first, err := f.p.Reply(ctx, ch, id, got[0], "Glad you liked it 🧵")
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.ParentID != got[0].ID || !first.Own || first.Author != "reelay.test" || first.Text != "Glad you liked it 🧵" {
		t.Fatalf("reply %+v", first)
	}
	// Threads nests replies: answering our own reply answers that reply.
	second, err := f.p.Reply(ctx, ch, id, first, "One more thing")
	if err != nil {
		t.Fatal(err)
	}
	if second.ParentID != first.ID {
		t.Fatalf("nested reply has parent %q; want %q", second.ParentID, first.ID)
	}

	after, err := f.p.Comments(ctx, ch, id)
	if err != nil {
		t.Fatal(err)
	}
	var own []provider.Comment
	for _, c := range after {
		if c.Own {
			own = append(own, c)
		}
	}
	if len(after) != len(got)+2 || len(own) != 2 || own[0].ID != first.ID || own[0].ParentID != got[0].ID ||
		own[1].ID != second.ID || own[1].ParentID != first.ID {
		t.Fatalf("after replying: %d replies, own %+v", len(after), own)
	}
	rec := f.e.Introspect().Replies
	if len(rec) != 2 || rec[0] != (sim.Reply{Account: user, CommentID: got[0].ID, Text: "Glad you liked it 🧵"}) || rec[1].CommentID != first.ID {
		t.Fatalf("recorded replies %+v", rec)
	}
	if len(f.e.Introspect().Published) != 1 {
		t.Fatal("a reply was recorded as a published post")
	}
	m, err := f.p.Metrics(ctx, ch, []string{id})
	if want := sim.AudienceOf(id, at, f.e.Clock.Now()).Comments + 2; err != nil || deref(m[id].Comments) != want {
		t.Fatalf("replies metric %v, %v; want %d", deref(m[id].Comments), err, want)
	}
}

func TestReplyRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishPost(t)
	f.setClock(at.Add(time.Minute))
	ch := f.channel()
	ctx := context.Background()
	got, err := f.p.Comments(ctx, ch, id)
	if err != nil || len(got) == 0 {
		t.Fatalf("replies %v, %v", got, err)
	}
	for _, c := range []struct {
		name string
		to   provider.Comment
		text string
		want string
	}{
		{"unknown reply", provider.Comment{ID: "17950000000000001"}, "hi", "reply_to_id"},
		{"too long", got[0], strings.Repeat("a", 497) + "\U0001F600", "too long"}, // 497 + 4: an emoji counts its bytes
		{"empty", got[0], "", "text is required"},
	} {
		_, err := f.p.Reply(ctx, ch, id, c.to, c.text)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.want)
	}
	if n := len(f.e.Introspect().Replies); n != 0 {
		t.Fatalf("%d replies recorded", n)
	}
	// 500 bytes fit.
	if _, err := f.p.Reply(ctx, ch, id, got[0], strings.Repeat("a", 498)+"é"); err != nil {
		t.Fatal(err)
	}
}

func TestOtherProfilesPosts(t *testing.T) {
	t.Parallel()
	accts := sim.StaticAccounts{tok: {ID: user, Username: "reelay.test"}, "other-token": {ID: "27000000000000002", Username: "other"}}
	e := providertest.NewEnv(t, "threads", accts, threadssim.New, providertest.Options{})
	f := fixture{e: e, p: threads.New(threads.Config{HTTPClient: e.Client, Now: e.Clock.Now})}
	id, at := f.publishPost(t)
	f.setClock(at.Add(time.Hour))
	other := provider.Channel{Account: "27000000000000002", Credentials: map[string]string{"access_token": "other-token"}, BaseURL: f.channel().BaseURL}
	got, err := f.p.Metrics(context.Background(), other, []string{id})
	if err != nil || len(got) != 0 {
		t.Fatalf("another profile's metrics: %v, %v", got, err)
	}
	_, err = f.p.Comments(context.Background(), other, id)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "does not exist")
	mine, err := f.p.Comments(context.Background(), f.channel(), id)
	if err != nil || len(mine) == 0 {
		t.Fatalf("comments %v, %v", mine, err)
	}
	_, err = f.p.Reply(context.Background(), other, id, mine[0], "hi")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "reply_to_id")
}

func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	calls := map[string]func(p *threads.Provider, ch provider.Channel) error{
		"metrics": func(p *threads.Provider, ch provider.Channel) error {
			_, err := p.Metrics(context.Background(), ch, []string{"18000000000000001"})
			return err
		},
		"comments": func(p *threads.Provider, ch provider.Channel) error {
			_, err := p.Comments(context.Background(), ch, "18000000000000001")
			return err
		},
		"reply": func(p *threads.Provider, ch provider.Channel) error {
			_, err := p.Reply(context.Background(), ch, "18000000000000001", provider.Comment{ID: "17950000000000001"}, "hi")
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
				f := newFixture(t, sim.Behavior{Fail: c.fail}, providertest.Options{})
				pe := providertest.WantError(t, call(f.p, f.channel()), c.category, c.transient, "")
				if pe.RetryAfter != c.retry || strings.Contains(pe.Message, tok) {
					t.Fatalf("error %+v; want RetryAfter %s, no token", pe, c.retry)
				}
			})
		}
	}
}
