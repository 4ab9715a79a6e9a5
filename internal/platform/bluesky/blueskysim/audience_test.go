package blueskysim

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// publish creates a video post and returns its URI and CID.
func (h *bskyHarness) publish(access string) (uri, cid string) {
	h.t.Helper()
	blob := h.upload(access, bskyVideo(h.t, 5*time.Second))
	a := h.post("com.atproto.repo.createRecord", access, map[string]any{"repo": DID("sbx_aa"), "collection": "app.bsky.feed.post",
		"record": map[string]any{"$type": "app.bsky.feed.post", "text": "a video", "createdAt": "2026-03-01T12:00:00.000Z",
			"embed": map[string]any{"$type": "app.bsky.embed.video", "video": blob}}})
	if a.status != 200 {
		h.t.Fatalf("createRecord: %d %s", a.status, a.raw)
	}
	return a.body["uri"].(string), a.body["cid"].(string)
}

func TestBlueskyGetPosts(t *testing.T) {
	t.Parallel()
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{})
	access, _ := h.login()
	uri, cid := h.publish(access)
	at := h.clock.Now()
	h.clock.Advance(90 * time.Minute)
	get := func(token string, uris ...string) bskyAnswer {
		return h.call(http.MethodGet, "app.bsky.feed.getPosts", token, url.Values{"uris": uris}, "", nil)
	}
	a := get(access, uri, "at://did:plc:nobody/app.bsky.feed.post/3kabcdefghij2", uri)
	posts, _ := a.body["posts"].([]any)
	if a.status != 200 || len(posts) != 1 {
		t.Fatalf("getPosts = %d %s", a.status, a.raw)
	}
	view := posts[0].(map[string]any)
	aud := sim.AudienceOf(uri, at, h.clock.Now())
	quotes := aud.Shares / 4
	for k, want := range map[string]int64{"likeCount": aud.Likes, "repostCount": aud.Shares - quotes, "quoteCount": quotes,
		"replyCount": int64(len(sim.AudienceComments(uri, at, h.clock.Now())))} {
		if view[k] != float64(want) {
			t.Errorf("%s = %v, want %d", k, view[k], want)
		}
	}
	if view["uri"] != uri || view["cid"] != cid || view["author"].(map[string]any)["did"] != DID("sbx_aa") {
		t.Errorf("view = %v", view)
	}
	if _, ok := view["viewCount"]; ok {
		t.Error("Bluesky reports no views")
	}

	many := make([]string, 26)
	for i := range many {
		many[i] = uri
	}
	get(access, many...).want(t, 400, "InvalidRequest", "Error: uris must not have more than 25 elements")
	get(access).want(t, 400, "InvalidRequest", `must have the property "uris"`)
	get(access, "https://bsky.app/x").want(t, 400, "InvalidRequest", "uris/0 must be a valid at-uri")
	get("", uri).want(t, 401, "AuthenticationRequired", "")
}

func TestBlueskyThreadAndReplies(t *testing.T) {
	t.Parallel()
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{})
	access, _ := h.login()
	uri, cid := h.publish(access)
	at := h.clock.Now()
	h.clock.Advance(30 * time.Minute)
	comments := sim.AudienceComments(uri, at, h.clock.Now())
	thread := func(q url.Values) bskyAnswer {
		return h.call(http.MethodGet, "app.bsky.feed.getPostThread", access, q, "", nil)
	}
	a := thread(url.Values{"uri": {uri}})
	replies, _ := a.body["thread"].(map[string]any)["replies"].([]any)
	if a.status != 200 || len(replies) != len(comments) {
		t.Fatalf("thread = %d %s", a.status, a.raw)
	}
	first := replies[0].(map[string]any)["post"].(map[string]any)
	commentURI, commentCID := first["uri"].(string), first["cid"].(string)
	rec := first["record"].(map[string]any)
	if commentURI != AudienceURI(uri, comments[0]) || rec["text"] != comments[0].Text ||
		first["author"].(map[string]any)["handle"] != AudienceHandle(comments[0].Author) ||
		rec["reply"].(map[string]any)["parent"].(map[string]any)["uri"] != uri {
		t.Fatalf("first comment = %v", first)
	}

	ref := func(u, c string) map[string]string { return map[string]string{"uri": u, "cid": c} }
	reply := func(text string, root, parent map[string]string) bskyAnswer {
		return h.post("com.atproto.repo.createRecord", access, map[string]any{"repo": DID("sbx_aa"), "collection": "app.bsky.feed.post",
			"record": map[string]any{"$type": "app.bsky.feed.post", "text": text, "createdAt": "2026-03-01T12:30:00.000Z",
				"reply": map[string]any{"root": root, "parent": parent}}})
	}
	nowhere := "at://" + bskyAudienceDID("nobody") + "/app.bsky.feed.post/3kabcdefghij2"
	for _, c := range []struct {
		name         string
		text         string
		root, parent map[string]string
		want         string
	}{
		{"unknown parent", "hi", ref(uri, cid), ref(nowhere, commentCID), "no post this simulator knows"},
		{"stale parent cid", "hi", ref(uri, cid), ref(commentURI, cid), "parent/cid"},
		{"wrong root", "hi", ref(commentURI, commentCID), ref(commentURI, commentCID), "root of the parent's thread"},
		{"no root", "hi", nil, ref(commentURI, commentCID), `"root" and "parent"`},
		{"cid not a cid", "hi", ref(uri, "x"), ref(commentURI, commentCID), "must be a cid string"},
		{"301 graphemes", strings.Repeat("é", 301), ref(uri, cid), ref(commentURI, commentCID), "longer than 300 graphemes"},
	} {
		reply(c.text, c.root, c.parent).want(t, 400, "InvalidRequest", c.want)
	}
	if r := h.rec.Snapshot(nil).Replies; len(r) != 0 {
		t.Fatalf("refused replies recorded: %+v", r)
	}

	ok := reply("thanks!", ref(uri, cid), ref(commentURI, commentCID))
	if ok.status != 200 {
		t.Fatalf("reply = %d %s", ok.status, ok.raw)
	}
	in := h.rec.Snapshot(nil)
	if len(in.Replies) != 1 || in.Replies[0] != (sim.Reply{Account: "sbx_aa", CommentID: commentURI, Text: "thanks!"}) || len(in.Published) != 1 {
		t.Errorf("recorded = %+v", in)
	}
	// The reply nests under the comment; the post still counts its direct replies only.
	a = thread(url.Values{"uri": {uri}, "depth": {"2"}})
	top := a.body["thread"].(map[string]any)
	c0 := top["replies"].([]any)[0].(map[string]any)
	nested, _ := c0["replies"].([]any)
	if len(nested) != 1 || nested[0].(map[string]any)["post"].(map[string]any)["uri"] != ok.body["uri"] ||
		c0["post"].(map[string]any)["replyCount"] != float64(1) ||
		top["post"].(map[string]any)["replyCount"] != float64(len(comments)) {
		t.Errorf("thread after the reply = %s", a.raw)
	}
	// depth 1 stops below the comments; a reply's thread shows its parents.
	a = thread(url.Values{"uri": {uri}, "depth": {"1"}})
	if _, has := a.body["thread"].(map[string]any)["replies"].([]any)[0].(map[string]any)["replies"]; has {
		t.Errorf("depth 1 answered nested replies: %s", a.raw)
	}
	a = thread(url.Values{"uri": {fmt.Sprint(ok.body["uri"])}, "depth": {"0"}})
	parent, _ := a.body["thread"].(map[string]any)["parent"].(map[string]any)
	if post, _ := parent["post"].(map[string]any); post["uri"] != commentURI {
		t.Errorf("the reply's thread = %s", a.raw)
	}

	thread(url.Values{"uri": {nowhere}}).want(t, 400, "NotFound", "Post not found: "+nowhere)
	thread(url.Values{"uri": {uri}, "depth": {"1001"}}).want(t, 400, "InvalidRequest", "depth can not be greater than 1000")
	thread(url.Values{}).want(t, 400, "InvalidRequest", `"uri"`)
}

func TestBlueskyReadFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		name   string
	}{
		{sim.FailUnavailable, 503, "NotEnoughResources"},
		{sim.FailRateLimit, 429, "RateLimitExceeded"},
	} {
		accounts := &bskyTurningAccounts{b: sim.Behavior{ProcessingMS: -1}}
		h := newBskyHarnessOf(t, accounts, Options{})
		access, _ := h.login()
		uri, _ := h.publish(access)
		accounts.set(sim.Behavior{Fail: c.fail})
		h.call(http.MethodGet, "app.bsky.feed.getPosts", access, url.Values{"uris": {uri}}, "", nil).want(t, c.status, c.name, "")
		h.call(http.MethodGet, "app.bsky.feed.getPostThread", access, url.Values{"uri": {uri}}, "", nil).want(t, c.status, c.name, "")
	}
}

// bskyTurningAccounts is the one account "pw" (sbx_aa), whose behaviour a test changes.
type bskyTurningAccounts struct {
	mu sync.Mutex
	b  sim.Behavior
}

func (a *bskyTurningAccounts) set(b sim.Behavior) {
	a.mu.Lock()
	a.b = b
	a.mu.Unlock()
}

func (a *bskyTurningAccounts) Resolve(_ context.Context, token string) (sim.Account, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return sim.Account{ID: "sbx_aa", Username: "Demo", Behavior: a.b}, token == "pw"
}
