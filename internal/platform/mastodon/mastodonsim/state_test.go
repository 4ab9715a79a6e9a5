package mastodonsim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// TestMastodonAcrossProcesses: a video status made through two processes in turn (the upload at
// one, its processing read at the other, the status, the status again under its
// Idempotency-Key, a reply to an audience comment that mentions the account), then read by a
// third started afterwards. The upload, the status and the reply are recorded once each, and
// the statuses' 3-hour limit counts every process's statuses together.
func TestMastodonAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			rec := sim.NewRecorder(st, platform.Mastodon)
			const alice = "109000000000000001"
			accounts := sim.StaticAccounts{mdToken: {ID: alice, Username: "alice", Behavior: sim.Behavior{ProcessingMS: 5000}}}
			e := &mdEnv{t: t, clock: clock}
			serve := func(h func(base string) http.Handler) {
				mux := http.NewServeMux()
				srv := httptest.NewServer(mux)
				t.Cleanup(srv.Close)
				e.base = srv.URL + "/sandbox/mastodon"
				mux.Handle("/sandbox/mastodon/", http.StripPrefix("/sandbox/mastodon", h(e.base)))
			}
			process := func(base string) *Sim {
				return NewSim(sim.Config{BaseURL: base, Accounts: accounts, Recorder: rec, State: st, Now: clock.Now,
					Rand: func() float64 { return 0.99 }}, Options{StatusesPerWindow: 3})
			}
			serve(func(base string) http.Handler { return simtest.Alternating(process(base), process(base)) })

			up := e.upload(mdToken, mdPart{"file", "video/mp4", mdVideo(t, 720, 1280)})
			mediaID := up.str("id")
			if up.code != http.StatusAccepted || mediaID == "" {
				t.Fatalf("upload = %d %v", up.code, up.body)
			}
			if a := e.do(http.MethodGet, "/api/v1/media/"+mediaID, mdToken, nil, nil); a.code != http.StatusPartialContent {
				t.Fatalf("the media while processing, at the other process = %d %v", a.code, a.body)
			}
			clock.Advance(5 * time.Second)
			if a := e.do(http.MethodGet, "/api/v1/media/"+mediaID, mdToken, nil, nil); a.code != http.StatusOK || a.str("url") == "" {
				t.Fatalf("the media processed = %d %v", a.code, a.body)
			}
			first := e.post(mdToken, "dst_1", map[string]any{"status": "a video", "media_ids": []string{mediaID}})
			statusID := first.str("id")
			if first.code != http.StatusOK || statusID == "" {
				t.Fatalf("status = %d %v", first.code, first.body)
			}
			if a := e.post(mdToken, "dst_1", map[string]any{"status": "again", "media_ids": []string{mediaID}}); a.code != http.StatusOK || a.str("id") != statusID {
				t.Fatalf("the status again under its key, at the other process = %d %v; want %s", a.code, a.body, statusID)
			}

			clock.Advance(40 * time.Minute)
			ctx := e.do(http.MethodGet, "/api/v1/statuses/"+statusID+"/context", mdToken, nil, nil)
			desc, _ := ctx.body["descendants"].([]any)
			if ctx.code != http.StatusOK || len(desc) == 0 {
				t.Fatalf("context = %d %v", ctx.code, ctx.body)
			}
			commentID := desc[0].(map[string]any)["id"].(string)
			reply := e.post(mdToken, "dst_2", map[string]any{"status": "thanks from @alice", "in_reply_to_id": commentID})
			if reply.code != http.StatusOK || reply.body["in_reply_to_id"] != commentID ||
				!strings.Contains(reply.str("content"), `class="u-url mention">@<span>alice</span>`) {
				t.Fatalf("reply = %d %v", reply.code, reply.body)
			}
			// Two statuses so far, the limit three: one more, at either process, and no more.
			if a := e.post(mdToken, "", map[string]any{"status": "three"}); a.code != http.StatusOK {
				t.Fatalf("the third status = %d %v", a.code, a.body)
			}
			wantMDError(t, e.post(mdToken, "", map[string]any{"status": "four"}), http.StatusTooManyRequests, "Too many requests")

			serve(func(base string) http.Handler { return process(base) }) // a restart
			one := e.do(http.MethodGet, "/api/v1/statuses/"+statusID, "", nil, nil)
			attachments, _ := one.body["media_attachments"].([]any)
			comments := sim.AudienceComments(statusID, first.createdAt(t), clock.Now())
			if one.code != http.StatusOK || len(attachments) != 1 || one.body["replies_count"] != float64(len(comments)) {
				t.Fatalf("after a restart, the status = %d %v", one.code, one.body)
			}
			ctx = e.do(http.MethodGet, "/api/v1/statuses/"+commentID+"/context", mdToken, nil, nil)
			if desc, _ := ctx.body["descendants"].([]any); ctx.code != http.StatusOK || len(desc) != 1 || desc[0].(map[string]any)["id"] != reply.str("id") {
				t.Fatalf("after a restart, the comment's context = %d %v", ctx.code, ctx.body)
			}
			if l := e.do(http.MethodGet, "/api/v1/accounts/"+alice+"/statuses", "", nil, nil); l.code != http.StatusOK || len(l.list) != 3 {
				t.Fatalf("after a restart, the account's statuses = %d %v", l.code, l.list)
			}
			wantMDError(t, e.do(http.MethodGet, "/api/v1/media/"+mediaID, mdToken, nil, nil), http.StatusNotFound, "Record not found")
			if a := e.post(mdToken, "dst_1", map[string]any{"status": "again"}); a.code != http.StatusOK || a.str("id") != statusID {
				t.Fatalf("after a restart, the status again under its key = %d %v", a.code, a.body)
			}
			got := rec.Snapshot(nil)
			if len(got.Uploads) != 1 || len(got.Published) != 2 || got.Published[0].ID != statusID || got.Published[0].SHA256 != got.Uploads[0].SHA256 ||
				len(got.Replies) != 1 || got.Replies[0].CommentID != commentID {
				t.Errorf("received %+v, want one upload, two statuses and one reply", got)
			}
		})
	}
}

// createdAt is the created_at of a status answered.
func (a mdAnswer) createdAt(t *testing.T) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, a.str("created_at"))
	if err != nil {
		t.Fatalf("created_at %q: %v", a.str("created_at"), err)
	}
	return at
}

// mdRenamedAccounts is the one account of mdToken, whose username a test changes.
type mdRenamedAccounts struct {
	mu       sync.Mutex
	username string
}

func (a *mdRenamedAccounts) rename(u string) {
	a.mu.Lock()
	a.username = u
	a.mu.Unlock()
}

func (a *mdRenamedAccounts) Resolve(_ context.Context, token string) (sim.Account, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return sim.Account{ID: "109000000000000001", Username: a.username, Behavior: sim.Behavior{ProcessingMS: -1}}, token == mdToken
}

// TestMastodonRenamedAccountMentions: the instance knows an account by the username it last
// called with: a mention of the old name stays text.
func TestMastodonRenamedAccountMentions(t *testing.T) {
	accounts := &mdRenamedAccounts{username: "alice"}
	e := &mdEnv{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.base = srv.URL + "/sandbox/mastodon"
	e.sim = NewSim(sim.Config{BaseURL: e.base, Now: e.clock.Now, Accounts: accounts}, Options{})
	mux.Handle("/sandbox/mastodon/", http.StripPrefix("/sandbox/mastodon", e.sim))
	mentions := func(text string) []any {
		t.Helper()
		a := e.post(mdToken, "", map[string]any{"status": text})
		if a.code != http.StatusOK {
			t.Fatalf("post %q = %d %v", text, a.code, a.body)
		}
		m, _ := a.body["mentions"].([]any)
		return m
	}
	if m := mentions("hi @alice"); len(m) != 1 || m[0].(map[string]any)["acct"] != "alice" {
		t.Fatalf("mentions of @alice: %v", m)
	}
	accounts.rename("alicia")
	if m := mentions("hi @alice"); len(m) != 0 {
		t.Errorf("mentions of @alice once renamed: %v", m)
	}
	if m := mentions("hi @alicia"); len(m) != 1 || m[0].(map[string]any)["acct"] != "alicia" {
		t.Errorf("mentions of @alicia: %v", m)
	}
}
