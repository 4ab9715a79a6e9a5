package mastodonsim

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// item posts a status that answers none and returns its id and when it was created.
func (e *mdEnv) item(token, visibility string) (string, time.Time) {
	e.t.Helper()
	a := e.post(token, "", map[string]any{"status": "an item", "visibility": visibility})
	if a.code != 200 {
		e.t.Fatalf("post = %d %v", a.code, a.body)
	}
	return a.str("id"), e.clock.Now()
}

func TestMastodonAudienceFigures(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: -1})
	id, at := e.item(mdToken, "public")
	e.clock.Advance(75 * time.Minute)
	aud := sim.AudienceOf(id, at, e.clock.Now())
	one := e.do(http.MethodGet, "/api/v1/statuses/"+id, "", nil, nil)
	for k, want := range map[string]int64{"favourites_count": aud.Likes, "reblogs_count": aud.Shares, "replies_count": aud.Comments} {
		if one.body[k] != float64(want) {
			t.Errorf("%s = %v, want %d", k, one.body[k], want)
		}
	}
	ids := url.Values{"id[]": {id, "42", id}}
	a := e.do(http.MethodGet, "/api/v1/statuses?"+ids.Encode(), mdToken, nil, nil)
	if a.code != 200 || len(a.list) != 1 || a.list[0]["id"] != id || a.list[0]["favourites_count"] != float64(aud.Likes) {
		t.Fatalf("batch = %d %v", a.code, a.list)
	}
	many := url.Values{}
	for i := range 21 {
		many.Add("id[]", fmt.Sprint(1000+i))
	}
	wantMDError(t, e.do(http.MethodGet, "/api/v1/statuses?"+many.Encode(), mdToken, nil, nil), 422, "Mastodon::ValidationError")
	legacy := newMDEnv(t, Options{LegacyInstance: true}, sim.Behavior{ProcessingMS: -1})
	wantMDError(t, legacy.do(http.MethodGet, "/api/v1/statuses?id[]=1", mdToken, nil, nil), 404, "Record not found")
}

func TestMastodonContextAndReplies(t *testing.T) {
	e := newMDEnv(t, Options{MaxCharacters: 60}, sim.Behavior{ProcessingMS: -1})
	id, at := e.item(mdToken, "public")
	e.clock.Advance(40 * time.Minute)
	comments := sim.AudienceComments(id, at, e.clock.Now())
	ctx := e.do(http.MethodGet, "/api/v1/statuses/"+id+"/context", mdToken, nil, nil)
	desc, _ := ctx.body["descendants"].([]any)
	if ctx.code != 200 || len(desc) != len(comments) || len(ctx.body["ancestors"].([]any)) != 0 {
		t.Fatalf("context = %d %v", ctx.code, ctx.body)
	}
	first := desc[0].(map[string]any)
	acct := first["account"].(map[string]any)
	if first["id"] != AudienceID(id, comments[0]) || first["in_reply_to_id"] != id ||
		first["in_reply_to_account_id"] != "109000000000000001" || acct["acct"] != AudienceAcct(comments[0].Author) ||
		first["content"] != "<p>"+strings.ReplaceAll(comments[0].Text, "'", "&#39;")+"</p>" {
		t.Fatalf("first comment = %v", first)
	}
	commentID := first["id"].(string)

	// A reply: over the limit (the mention counts as @user), to nothing, then accepted.
	mention := "@" + AudienceAcct(comments[0].Author)
	user := "@" + mastodonAudienceUsername(comments[0].Author)
	text := mention + " " + strings.Repeat("x", 60-len(user)-1)
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": text + "x", "in_reply_to_id": commentID}), 422, "character limit of 60")
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": "hi", "in_reply_to_id": "4242"}), 404, "does not appear to exist")
	reply := e.post(mdToken, "key-1", map[string]any{"status": text, "in_reply_to_id": commentID})
	if reply.code != 200 || reply.body["in_reply_to_id"] != commentID {
		t.Fatalf("reply = %d %v", reply.code, reply.body)
	}
	mentions, _ := reply.body["mentions"].([]any)
	content := reply.str("content")
	if len(mentions) != 1 || mentions[0].(map[string]any)["acct"] != AudienceAcct(comments[0].Author) ||
		!strings.Contains(content, `class="u-url mention">@<span>`+mastodonAudienceUsername(comments[0].Author)+`</span></a>`) {
		t.Errorf("reply content %q, mentions %v", content, mentions)
	}
	rec := e.sim.Recorder().Snapshot(nil)
	if len(rec.Replies) != 1 || rec.Replies[0] != (sim.Reply{Account: "109000000000000001", CommentID: commentID, Text: text}) || len(rec.Published) != 1 {
		t.Errorf("recorded = %+v", rec)
	}
	// It nests under the comment, which counts it; the item still counts its direct replies.
	ctx = e.do(http.MethodGet, "/api/v1/statuses/"+id+"/context", "", nil, nil)
	desc = ctx.body["descendants"].([]any)
	if len(desc) != len(comments)+1 || desc[1].(map[string]any)["id"] != reply.str("id") ||
		desc[0].(map[string]any)["replies_count"] != float64(1) {
		t.Errorf("context after the reply = %v", desc)
	}
	if a := e.do(http.MethodGet, "/api/v1/statuses/"+id, "", nil, nil); a.body["replies_count"] != float64(len(comments)) {
		t.Errorf("item replies_count = %v, want %d", a.body["replies_count"], len(comments))
	}
	up := e.do(http.MethodGet, "/api/v1/statuses/"+reply.str("id")+"/context", mdToken, nil, nil)
	if anc, _ := up.body["ancestors"].([]any); len(anc) != 2 || anc[0].(map[string]any)["id"] != id || anc[1].(map[string]any)["id"] != commentID {
		t.Errorf("ancestors = %v", up.body["ancestors"])
	}

	// Without a token, descendants stop at a depth of 20.
	parent := reply.str("id")
	for i := range 21 {
		a := e.post(mdToken, "", map[string]any{"status": fmt.Sprint("deeper ", i), "in_reply_to_id": parent})
		parent = a.str("id")
	}
	anon := e.do(http.MethodGet, "/api/v1/statuses/"+id+"/context", "", nil, nil).body["descendants"].([]any)
	authed := e.do(http.MethodGet, "/api/v1/statuses/"+id+"/context", mdToken, nil, nil).body["descendants"].([]any)
	if len(authed) != len(comments)+22 || len(anon) != len(comments)+19 {
		t.Errorf("descendants: %d with a token, %d without; want %d and %d", len(authed), len(anon), len(comments)+22, len(comments)+19)
	}

	// A private item of another account is not there for this one.
	private, _ := e.item("other", "private")
	wantMDError(t, e.do(http.MethodGet, "/api/v1/statuses/"+private+"/context", mdToken, nil, nil), 404, "Record not found")
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": "hi", "in_reply_to_id": private}), 404, "does not appear to exist")
	wantMDError(t, e.do(http.MethodGet, "/api/v1/statuses/4242/context", mdToken, nil, nil), 404, "Record not found")
}

func TestMastodonContent(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: -1})
	// The simulator knows the accounts that have called it: bob calls first.
	_ = e.post("other", "", map[string]any{"status": "hello"})
	a := e.post(mdToken, "", map[string]any{"status": "Hi @bob & @nobody@else.example <3\nsee https://www.example.com/" + strings.Repeat("p", 40) + ".\n\nbye"})
	want := `<p>Hi <span class="h-card" translate="no"><a href="` + e.base + `/@bob" class="u-url mention">@<span>bob</span></a></span>` +
		` &amp; @nobody@else.example &lt;3<br />see <a href="https://www.example.com/` + strings.Repeat("p", 40) +
		`" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://www.</span>` +
		`<span class="ellipsis">example.com/` + strings.Repeat("p", 18) + `</span><span class="invisible">` + strings.Repeat("p", 22) +
		`</span></a>.</p><p>bye</p>`
	if a.str("content") != want {
		t.Errorf("content\n%s\nwant\n%s", a.str("content"), want)
	}
	if m, _ := a.body["mentions"].([]any); len(m) != 1 || m[0].(map[string]any)["acct"] != "bob" {
		t.Errorf("mentions = %v", a.body["mentions"])
	}
}

func TestMastodonReadFaults(t *testing.T) {
	for _, c := range []struct {
		fail string
		code int
	}{
		{sim.FailAuth, 401}, {sim.FailRateLimit, 429}, {sim.FailUnavailable, 502},
	} {
		e := newMDEnv(t, Options{}, sim.Behavior{Fail: c.fail})
		id, _ := e.item("other", "public")
		for _, path := range []string{"/api/v1/statuses/" + id, "/api/v1/statuses/" + id + "/context", "/api/v1/statuses?id[]=" + id} {
			if a := e.do(http.MethodGet, path, mdToken, nil, nil); a.code != c.code {
				t.Errorf("%s: %s = %d, want %d", c.fail, path, a.code, c.code)
			}
			// The reads are public: without a token there is no account to fail.
			if a := e.do(http.MethodGet, path, "", nil, nil); a.code != 200 {
				t.Errorf("%s: %s without a token = %d", c.fail, path, a.code)
			}
		}
	}
}
