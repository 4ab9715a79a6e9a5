package facebook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// channel is the test Page's channel on f's simulator.
func (f fixture) channel() provider.Channel {
	return provider.Channel{Account: page, Credentials: map[string]string{"access_token": tok}, BaseURL: f.e.BaseURL + "/" + facebook.APIVersion}
}

// publishReel publishes a reel and answers its video id and when the simulator published it
// (the finish phase: the reel's publish_time).
func (f fixture) publishReel(t *testing.T) (string, time.Time) {
	t.Helper()
	d := f.dest(nil, "")
	var at time.Time
	for range 100 {
		out, err := providertest.Step(context.Background(), f.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if state(t, out.State).Finished && at.IsZero() {
			at = f.e.Clock.Now()
		}
		if out.Done() {
			return out.ExternalID, at
		}
		f.e.Clock.Advance(out.After)
	}
	t.Fatal("the reel was not published")
	return "", time.Time{}
}

// graphGet reads path from the simulator as the Page.
func (f fixture) graphGet(t *testing.T, path string, q url.Values) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.channel().BaseURL+path+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := f.e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m
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
	id, at := f.publishReel(t)
	ctx := context.Background()
	for _, after := range []time.Duration{time.Minute, 2 * time.Hour, 50 * time.Hour} {
		f.setClock(at.Add(after))
		got, err := f.p.Metrics(ctx, f.channel(), []string{id, "1200000000099999"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("after %s: metrics for %d items; want the reel's only", after, len(got))
		}
		aud := sim.AudienceOf(id, at, f.e.Clock.Now())
		m := got[id]
		want := map[string]any{"views": aud.Views, "reach": aud.Reach, "likes": aud.Likes, "comments": aud.Comments,
			"shares": aud.Shares, "watch": aud.WatchSeconds, "impressions": nil, "saves": nil}
		have := map[string]any{"views": deref(m.Views), "reach": deref(m.Reach), "likes": deref(m.Likes), "comments": deref(m.Comments),
			"shares": deref(m.Shares), "watch": deref(m.WatchTimeSeconds), "impressions": deref(m.Impressions), "saves": deref(m.Saves)}
		for k, w := range want {
			if have[k] != w {
				t.Errorf("after %s: %s = %v; want %v", after, k, have[k], w)
			}
		}
	}
}

// A reel whose upload is not finished has no figures and no comments yet.
func TestUnpublishedReelHasNoFigures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(nil, "")
	out, err := providertest.Step(context.Background(), f.p, d) // the start phase only
	if err != nil {
		t.Fatal(err)
	}
	video := state(t, out.State).VideoID
	f.e.Clock.Advance(time.Hour)
	got, err := f.p.Metrics(context.Background(), f.channel(), []string{video})
	if err != nil || len(got) != 0 {
		t.Fatalf("metrics %v, %v; want none", got, err)
	}
	comments, err := f.p.Comments(context.Background(), f.channel(), video)
	if err != nil || len(comments) != 0 {
		t.Fatalf("comments %v, %v; want none", comments, err)
	}
}

func TestInsightsRefuseUnknownMetrics(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishReel(t)
	f.setClock(at.Add(time.Hour))
	m := f.graphGet(t, "/"+id+"/video_insights", nil)
	if data, _ := m["data"].([]any); len(data) != 8 {
		t.Fatalf("every metric: %v", m)
	}
	for _, metric := range []string{"total_video_impressions", "blue_reels_play_count,post_video_followers"} {
		m := f.graphGet(t, "/"+id+"/video_insights", url.Values{"metric": {metric}})
		ge, _ := m["error"].(map[string]any)
		if ge["code"] != 100.0 || !strings.Contains(ge["message"].(string), "valid insights metric") {
			t.Errorf("metric=%s: %v; want code 100", metric, m)
		}
	}
}

func TestCommentsAndReplyRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishReel(t)
	f.setClock(at.Add(35 * time.Minute))
	ch := f.channel()
	ctx := context.Background()
	aud := sim.AudienceComments(id, at, f.e.Clock.Now())
	got, err := f.p.Comments(ctx, ch, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(aud) || len(aud) < 2 {
		t.Fatalf("%d comments; want the audience's %d", len(got), len(aud))
	}
	for i, c := range got {
		w := aud[i]
		if !strings.HasPrefix(c.ID, id+"_") || c.Author != w.Author || c.Text != w.Text || !c.CreatedAt.Equal(w.At.Truncate(time.Second)) ||
			c.ParentID != "" || c.Own || c.LikeCount == nil {
			t.Fatalf("comment %d = %+v; want %+v, an id {video}_{n}, top level, not own", i, c, w)
		}
	}

	reply, err := f.p.Reply(ctx, ch, id, got[1], "Thanks! 🙌")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reply.ID, id+"_") || reply.ParentID != got[1].ID || !reply.Own || reply.Author != "reelaytest" || reply.Text != "Thanks! 🙌" {
		t.Fatalf("reply %+v", reply)
	}
	// Comments are two levels deep: answering a reply answers its top-level comment.
	again, err := f.p.Reply(ctx, ch, id, reply, "P.S.")
	if err != nil {
		t.Fatal(err)
	}
	if again.ParentID != got[1].ID {
		t.Fatalf("reply to a reply has parent %q; want %q", again.ParentID, got[1].ID)
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
	if len(after) != len(got)+2 || len(own) != 2 || own[0].ID != reply.ID || own[1].ID != again.ID ||
		own[0].ParentID != got[1].ID || own[1].ParentID != got[1].ID {
		t.Fatalf("after replying: %d comments, own %+v", len(after), own)
	}
	rec := f.e.Introspect().Replies
	if len(rec) != 2 || rec[0] != (sim.Reply{Account: page, CommentID: got[1].ID, Text: "Thanks! 🙌"}) || rec[1].CommentID != got[1].ID {
		t.Fatalf("recorded replies %+v", rec)
	}
	m, err := f.p.Metrics(ctx, ch, []string{id})
	if want := sim.AudienceOf(id, at, f.e.Clock.Now()).Comments + 2; err != nil || deref(m[id].Comments) != want {
		t.Fatalf("comments metric %v, %v; want %d", deref(m[id].Comments), err, want)
	}
}

// A comment the Page writes on the reel itself is a top-level comment of its own, not a reply.
func TestPageCommentOnTheReel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishReel(t)
	f.setClock(at.Add(time.Minute))
	req, _ := http.NewRequest(http.MethodPost, f.channel().BaseURL+"/"+id+"/comments", strings.NewReader("message=Pinned+note"))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := f.e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got, err := f.p.Comments(context.Background(), f.channel(), id)
	if err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	if resp.StatusCode != http.StatusOK || !last.Own || last.ParentID != "" || last.Text != "Pinned note" || last.Author != "reelaytest" {
		t.Fatalf("%d; comments %+v", resp.StatusCode, got)
	}
	if n := len(f.e.Introspect().Replies); n != 0 {
		t.Fatalf("a comment on the reel was recorded as %d replies", n)
	}
}

func TestReplyRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	id, at := f.publishReel(t)
	f.setClock(at.Add(time.Minute))
	ch := f.channel()
	ctx := context.Background()
	got, err := f.p.Comments(ctx, ch, id)
	if err != nil || len(got) == 0 {
		t.Fatalf("comments %v, %v", got, err)
	}
	for _, c := range []struct {
		name string
		to   provider.Comment
		text string
		want string
	}{
		{"unknown comment", provider.Comment{ID: id + "_1000000000000001"}, "hi", "does not exist"},
		{"another object", provider.Comment{ID: "1200000000099999_1"}, "hi", "does not exist"},
		{"too long", got[0], strings.Repeat("a", 8001), "at most 8000"},
		{"empty", got[0], "", "Missing message"},
	} {
		_, err := f.p.Reply(ctx, ch, id, c.to, c.text)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.want)
	}
	if n := len(f.e.Introspect().Replies); n != 0 {
		t.Fatalf("%d replies recorded", n)
	}
}

func TestAudienceFaults(t *testing.T) {
	t.Parallel()
	calls := map[string]func(p *facebook.Provider, ch provider.Channel) error{
		"metrics": func(p *facebook.Provider, ch provider.Channel) error {
			_, err := p.Metrics(context.Background(), ch, []string{"1200000000000001"})
			return err
		},
		"comments": func(p *facebook.Provider, ch provider.Channel) error {
			_, err := p.Comments(context.Background(), ch, "1200000000000001")
			return err
		},
		"reply": func(p *facebook.Provider, ch provider.Channel) error {
			_, err := p.Reply(context.Background(), ch, "1200000000000001", provider.Comment{ID: "1200000000000001_1"}, "hi")
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
