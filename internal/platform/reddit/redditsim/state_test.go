package redditsim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// redditListen opens the websocket at wsURL and returns what it says: its one message, or
// "" when none comes within a few seconds.
func (e *redditEnv) redditListen(wsURL string) <-chan string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		cancel()
		e.t.Fatalf("websocket %s: %v", wsURL, err)
	}
	out := make(chan string, 1)
	go func() {
		defer cancel()
		defer c.CloseNow()
		_, b, err := c.Read(ctx)
		if err != nil {
			b = nil
		}
		out <- string(b)
	}()
	return out
}

// submitVideo submits the video and poster of two leases and returns the websocket URL the
// submit answered.
func (e *redditEnv) submitVideo(video, poster redditTestLease) string {
	e.t.Helper()
	form := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"reelay_sandbox"}, "title": {"Across processes"},
		"url": {"http:" + video.Args.Action + "/" + e.key(video)}, "video_poster_url": {"http:" + poster.Args.Action + "/" + e.key(poster)}}
	resp, b := e.call(http.MethodPost, "/api/submit", form, nil)
	var out struct {
		JSON struct {
			Errors [][]string
			Data   struct {
				WebsocketURL string `json:"websocket_url"`
			}
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || len(out.JSON.Errors) != 0 || out.JSON.Data.WebsocketURL == "" {
		e.t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	return out.JSON.Data.WebsocketURL
}

// TestRedditAcrossProcesses: two processes serve the simulator from one State, each request
// going to the next. A video leased at one is uploaded at the other; a websocket opened at one
// is marked as listening for a submit made at the other, and hears its result (settled by
// whichever process saw it due first); a comment posted at one is on the post at the other;
// a process started afterwards (a restart) knows all of it, and a websocket opened there
// hears the result of a submission made before the restart. Each video is recorded as
// uploaded and published once, each comment once.
func TestRedditAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			e := &redditEnv{t: t, clock: clock}
			var serving atomic.Pointer[http.Handler]
			e.srv = httptest.NewServer(http.StripPrefix("/sandbox/reddit", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				(*serving.Load()).ServeHTTP(w, r)
			})))
			t.Cleanup(e.srv.Close)
			e.base = e.srv.URL + "/sandbox/reddit"
			process := func(tick time.Duration) *Sim {
				return NewSim(sim.Config{BaseURL: e.base, Now: clock.Now, Rand: func() float64 { return 0.99 },
					Accounts: sim.StaticAccounts{redditTok: {ID: "t2_u1", Username: "someone", Behavior: sim.Behavior{ProcessingMS: 2000}}},
					Recorder: sim.NewRecorder(st, platform.Reddit), State: st}, Options{Tick: tick})
			}
			// The first process looks at the clock less often than the second, so that the
			// processing is mostly settled by the second process's request below and heard of
			// at the first's next tick.
			a, b := process(200*time.Millisecond), process(0)
			both := simtest.Alternating(a, b)
			serving.Store(&both)
			e.sim = a
			mp4 := mediatest.MP4Bytes(t, mediatest.Options{})

			video := e.lease("video/mp4")                                 // a
			if status, body := e.upload(video, mp4, nil); status != 201 { // b
				t.Fatalf("video upload at the other process: %d %s", status, body)
			}
			poster := e.lease("image/png")                                             // a
			if status, body := e.upload(poster, redditTestPNG(), nil); status != 201 { // b
				t.Fatalf("poster upload at the other process: %d %s", status, body)
			}
			heard := e.redditListen(video.Asset.WebsocketURL) // a
			e.submitVideo(video, poster)                      // b
			if p := b.Posts("t2_u1"); len(p) != 1 || p[0].Status != "processing" || !p[0].Listened {
				t.Fatalf("after the submit: %+v, want one processing, listened to at the other process", p)
			}
			clock.Advance(2 * time.Second)
			e.call(http.MethodGet, "/api/v1/me", nil, nil)              // a
			e.call(http.MethodGet, "/user/someone/submitted", nil, nil) // b, which settles it
			posts := a.Posts("t2_u1")
			if len(posts) != 1 || posts[0].Status != "success" || posts[0].ID == "" {
				t.Fatalf("posts at the first process: %+v", posts)
			}
			want := `{"payload":{"redirect":"https://www.reddit.com` + posts[0].Permalink + `"},"type":"success"}`
			select {
			case got := <-heard:
				if got != want {
					t.Errorf("websocket at the first process said %q, want %q", got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the websocket at the first process heard nothing")
			}

			// A comment at one process, then a reply to it at the other, found by its id there.
			id := posts[0].ID
			code, j := e.reply(id, "first") // a or b
			if code != 200 || len(j["errors"].([]any)) != 0 {
				t.Fatalf("comment: %d %v", code, j)
			}
			first := j["data"].(map[string]any)["things"].([]any)[0].(map[string]any)["data"].(map[string]any)["name"].(string)
			if code, j := e.reply(first, "second"); code != 200 || len(j["errors"].([]any)) != 0 {
				t.Fatalf("reply to the comment at the other process: %d %v", code, j)
			}

			// A second video submitted before the restart, still processing after it.
			video2 := e.lease("video/mp4")
			if status, body := e.upload(video2, mp4, nil); status != 201 {
				t.Fatalf("%d %s", status, body)
			}
			poster2 := e.lease("image/png")
			if status, body := e.upload(poster2, redditTestPNG(), nil); status != 201 {
				t.Fatalf("%d %s", status, body)
			}
			ws2 := e.submitVideo(video2, poster2)

			restarted := process(0)
			var only http.Handler = restarted
			serving.Store(&only)
			e.sim = restarted
			heard = e.redditListen(ws2)
			clock.Advance(2 * time.Second)
			select {
			case got := <-heard:
				if !strings.HasSuffix(got, `"type":"success"}`) {
					t.Errorf("websocket after the restart said %q", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the websocket after the restart heard nothing")
			}
			posts = restarted.Posts("t2_u1")
			if len(posts) != 2 || posts[0].ID != id || posts[1].Status != "success" || posts[1].Listened {
				t.Fatalf("posts after the restart: %+v", posts)
			}
			_, comments := e.tree(id, "sort=new")
			var bodies []string
			var walk func(cs []map[string]any)
			walk = func(cs []map[string]any) {
				for _, c := range cs {
					bodies = append(bodies, c["body"].(string))
					if l, ok := c["replies"].(map[string]any); ok {
						var kids []map[string]any
						for _, k := range l["data"].(map[string]any)["children"].([]any) {
							kids = append(kids, k.(map[string]any)["data"].(map[string]any))
						}
						walk(kids)
					}
				}
			}
			walk(comments)
			if !strings.Contains(strings.Join(bodies, "|"), "first|second") {
				t.Errorf("comments after the restart: %q, want first and its reply second", bodies)
			}
			rec := restarted.Recorder().Snapshot(nil)
			if len(rec.Uploads) != 2 || len(rec.Published) != 2 || rec.Published[0].ID != id || len(rec.Replies) != 2 {
				t.Errorf("received %+v, want two uploads, two posts and two comments", rec)
			}
		})
	}
}

// TestRedditLeaseKept: a lease never uploaded is kept a day past its policy, so that a submit
// naming it within that day is taken and fails in processing; after that day it is gone (the
// submit is refused with BAD_URL, and housekeeping has one record fewer to keep), while the
// objects that were uploaded or submitted stay.
func TestRedditLeaseKept(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{ProcessingMS: 1000})
	st := e.sim.cfg.State
	objects := func() int {
		n, err := st.Count(context.Background(), platform.Reddit, redditObjectKind, "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	video, poster := e.lease("video/mp4"), e.lease("image/png")
	if status, body := e.upload(poster, redditTestPNG(), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	e.clock.Advance(23 * time.Hour)
	e.submitVideo(video, poster)
	e.clock.Advance(time.Second)
	if p := e.sim.Posts("t2_u1"); len(p) != 1 || p[0].Status != "failed" {
		t.Fatalf("a video leased but never uploaded, submitted within the day: %+v, want a failed processing", p)
	}

	late, poster2 := e.lease("video/mp4"), e.lease("image/png")
	if status, body := e.upload(poster2, redditTestPNG(), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	if n := objects(); n != 4 {
		t.Fatalf("%d objects, want 4", n)
	}
	e.clock.Advance(redditLeaseTTL + redditLeaseKeep)
	if n := objects(); n != 3 {
		t.Errorf("%d objects a day after the last lease's policy, want 3 (the one never uploaded nor submitted gone)", n)
	}
	form := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"reelay_sandbox"}, "title": {"t"},
		"url": {"http:" + late.Args.Action + "/" + e.key(late)}, "video_poster_url": {"http:" + poster2.Args.Action + "/" + e.key(poster2)}}
	if _, b := e.call(http.MethodPost, "/api/submit", form, nil); !strings.Contains(string(b), `"BAD_URL","you should check that url","url"`) {
		t.Errorf("a lease gone: %s, want BAD_URL for url", b)
	}
}

// TestRedditListenerLapses: a websocket's mark lapses when its process stops renewing it (it
// died with the connection open): a submit after that is not listened to.
func TestRedditListenerLapses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		lapse time.Duration // of the connection's mark, from now
		want  bool
	}{
		{"renewed", redditListenLapse, true},
		{"lapsed", -time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newRedditEnv(t, sim.Behavior{ProcessingMS: 1000})
			video, poster := e.lease("video/mp4"), e.lease("image/png")
			for l, b := range map[*redditTestLease][]byte{&video: mediatest.MP4Bytes(t, mediatest.Options{}), &poster: redditTestPNG()} {
				if status, body := e.upload(*l, b, nil); status != 201 {
					t.Fatalf("%d %s", status, body)
				}
			}
			// A process that died with a connection open left its mark behind.
			key := redditKey(redditObjectKind, e.key(video))
			err := e.sim.cfg.State.Update(context.Background(), func(tx sim.Tx) error {
				o, rec, _, err := sim.LoadTx[redditObject](tx, key)
				if err != nil {
					return err
				}
				o.Listeners = map[string]time.Time{"gone": time.Now().Add(c.lapse)}
				return sim.Save(tx, rec, o)
			})
			if err != nil {
				t.Fatal(err)
			}
			e.submitVideo(video, poster)
			if p := e.sim.Posts("t2_u1"); len(p) != 1 || p[0].Listened != c.want {
				t.Errorf("posts %+v, want listened %v", p, c.want)
			}
		})
	}
}

// TestRedditCommentOnAnotherAccountsPost: posts are public, and a comment's id does not name
// its post: another account lists someone else's submissions, finds a comment on their post
// and answers it, and the post's author sees the answer.
func TestRedditCommentOnAnotherAccountsPost(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	e.sim.cfg.Accounts = sim.StaticAccounts{redditTok: {ID: "t2_u1", Username: "someone"}, "tok-2": {ID: "t2_u2", Username: "other"}}
	id := e.post()
	e.clock.Advance(2 * time.Hour)
	_, top := e.tree(id, "sort=old")
	first := top[0]["name"].(string)
	other := map[string]string{"Authorization": "bearer tok-2"}

	if _, b := e.call(http.MethodGet, "/user/someone/submitted", nil, other); !strings.Contains(string(b), `"name":"`+id+`"`) {
		t.Errorf("u/someone's submissions, listed by another account: %s", b)
	}
	resp, b := e.call(http.MethodPost, "/api/comment", url.Values{"thing_id": {first}, "text": {"from another account"}, "api_type": {"json"}}, other)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"errors":[]`) || !strings.Contains(string(b), `"author":"other"`) {
		t.Fatalf("comment of another account on the post's comment: %d %s", resp.StatusCode, b)
	}
	if _, b := e.call(http.MethodGet, "/api/info?id="+first, nil, other); !strings.Contains(string(b), `"name":"`+first+`"`) {
		t.Errorf("/api/info of the comment, by another account: %s", b)
	}
	_, top = e.tree(id, "sort=old")
	if s := jsonText(t, top[0]["replies"]); !strings.Contains(s, `"body":"from another account"`) {
		t.Errorf("the first comment's replies, seen by the post's author: %s", s)
	}
	if r := e.sim.Recorder().Snapshot(nil).Replies; len(r) != 1 || r[0].Account != "t2_u2" || r[0].CommentID != first {
		t.Errorf("recorded %+v", r)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
