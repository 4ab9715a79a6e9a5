package redditsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
)

// post makes a video post of the account at the clock's time and returns its fullname.
func (e *redditEnv) post() string {
	e.t.Helper()
	vl, pl := e.lease("video/mp4"), e.lease("image/png")
	if status, body := e.upload(vl, mediatest.MP4Bytes(e.t, mediatest.Options{}), nil); status != 201 {
		e.t.Fatalf("%d %s", status, body)
	}
	if status, body := e.upload(pl, redditTestPNG(), nil); status != 201 {
		e.t.Fatalf("%d %s", status, body)
	}
	form := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"reelay_sandbox"}, "title": {"t"},
		"url": {"http:" + vl.Args.Action + "/" + e.key(vl)}, "video_poster_url": {"http:" + pl.Args.Action + "/" + e.key(pl)}}
	if resp, b := e.call(http.MethodPost, "/api/submit", form, nil); resp.StatusCode != 200 {
		e.t.Fatalf("%d %s", resp.StatusCode, b)
	}
	posts := e.sim.Posts("t2_u1")
	if p := posts[len(posts)-1]; p.ID != "" {
		return p.ID
	}
	e.t.Fatalf("posts %+v", posts)
	return ""
}

// tree reads GET /comments/{id} into the post's data and the comment listing's children.
func (e *redditEnv) tree(id, query string) (map[string]any, []map[string]any) {
	e.t.Helper()
	resp, b := e.call(http.MethodGet, "/comments/"+strings.TrimPrefix(id, "t3_")+"?"+query, nil, nil)
	var page []struct {
		Data struct {
			Children []struct {
				Kind string         `json:"kind"`
				Data map[string]any `json:"data"`
			} `json:"children"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil || len(page) != 2 || len(page[0].Data.Children) != 1 {
		e.t.Fatalf("comments: %d %s", resp.StatusCode, b)
	}
	var out []map[string]any
	for _, c := range page[1].Data.Children {
		c.Data["kind"] = c.Kind
		out = append(out, c.Data)
	}
	return page[0].Data.Children[0].Data, out
}

func (e *redditEnv) reply(thing, text string) (int, map[string]any) {
	e.t.Helper()
	resp, b := e.call(http.MethodPost, "/api/comment", url.Values{"thing_id": {thing}, "text": {text}, "api_type": {"json"}}, nil)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return resp.StatusCode, out["json"].(map[string]any)
}

// TestRedditCommentTree: the audience's comments and a reply chain, nested, with the post's
// figures counting them; limit and depth cut the tree into "more" stubs.
func TestRedditCommentTree(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	id := e.post()
	published := e.clock.Now()
	e.clock.Advance(2 * time.Hour)
	want := sim.AudienceComments(id, published, e.clock.Now())

	post, top := e.tree(id, "sort=old")
	if len(top) != len(want) || top[0]["body"] != want[0].Text || top[0]["author"] != want[0].Author || top[0]["parent_id"] != id {
		t.Fatalf("top-level comments %v, want %d audience comments oldest first", top, len(want))
	}
	first := top[0]["name"].(string)
	code, j := e.reply(first, "one")
	things := j["data"].(map[string]any)["things"].([]any)
	reply := things[0].(map[string]any)["data"].(map[string]any)
	if code != 200 || len(j["errors"].([]any)) != 0 || reply["parent_id"] != first || reply["author"] != "someone" || reply["depth"] != 1.0 {
		t.Fatalf("reply: %d %v", code, j)
	}
	if code, j := e.reply(reply["name"].(string), "two"); code != 200 || len(j["errors"].([]any)) != 0 {
		t.Fatalf("reply to the reply: %d %v", code, j)
	}

	a := sim.AudienceOf(id, published, e.clock.Now())
	post, top = e.tree(id, "sort=old")
	if post["ups"] != float64(1+a.Likes) || post["num_comments"] != float64(len(want)+2) || post["view_count"] != nil {
		t.Errorf("post figures %v %v %v, want %d ups and %d comments", post["ups"], post["num_comments"], post["view_count"], 1+a.Likes, len(want)+2)
	}
	replies := top[0]["replies"].(map[string]any)["data"].(map[string]any)["children"].([]any)
	nested := replies[0].(map[string]any)["data"].(map[string]any)
	if nested["body"] != "one" || nested["replies"].(map[string]any)["data"].(map[string]any)["children"].([]any)[0].(map[string]any)["data"].(map[string]any)["body"] != "two" {
		t.Errorf("first comment's replies %v", top[0]["replies"])
	}

	// The first comment and its two replies use the limit; the rest is a stub.
	_, top = e.tree(id, "sort=old&limit=3")
	if len(top) != 2 || top[1]["kind"] != "more" || top[1]["count"] != float64(len(want)-1) {
		t.Errorf("limit 3: %d things, last %v: want a comment and a stub of %d", len(top), top[len(top)-1], len(want)-1)
	}
	_, top = e.tree(id, "sort=old&depth=1")
	stub := top[0]["replies"].(map[string]any)["data"].(map[string]any)["children"].([]any)[0].(map[string]any)
	if stub["kind"] != "more" || stub["data"].(map[string]any)["count"] != 2.0 {
		t.Errorf("depth 1: the first comment's replies are %v, want a stub of 2", stub)
	}

	var info struct {
		Data struct {
			Children []struct{ Kind string }
		}
	}
	ids := []string{id, first, "t3_zzzzzzz", "not-a-fullname"}
	resp, b := e.call(http.MethodGet, "/api/info?id="+strings.Join(ids, ","), nil, nil)
	if json.Unmarshal(b, &info) != nil || resp.StatusCode != 200 || len(info.Data.Children) != 2 ||
		info.Data.Children[0].Kind != "t3" || info.Data.Children[1].Kind != "t1" {
		t.Errorf("/api/info: %d %s", resp.StatusCode, b)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = "t3_" + strconv.FormatInt(int64(46656+i), 36)
	}
	if resp, b := e.call(http.MethodGet, "/api/info?id="+strings.Join(many, ","), nil, nil); resp.StatusCode != 400 || !strings.Contains(string(b), "TOO_MANY_THING_IDS") {
		t.Errorf("101 ids: %d %s", resp.StatusCode, b)
	}
	if resp, _ := e.call(http.MethodGet, "/comments/zzzzzzz", nil, nil); resp.StatusCode != 404 {
		t.Errorf("unknown article: %d", resp.StatusCode)
	}
}

// TestRedditCommentRefusals: what /api/comment refuses in json.errors, recording nothing.
func TestRedditCommentRefusals(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	id := e.post()
	for _, c := range []struct {
		name, thing, text, code string
	}{
		{"unknown thing", "t1_zzzzzzz", "hi", "NO_THING_ID"},
		{"no thing", "", "hi", "NO_THING_ID"},
		{"no text", id, "", "NO_TEXT"},
		{"too long", id, strings.Repeat("ß", redditReplyLimit.Max+1), "TOO_LONG"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, j := e.reply(c.thing, c.text)
			errs, _ := j["errors"].([]any)
			if status != 200 || len(errs) != 1 || errs[0].([]any)[0] != c.code {
				t.Errorf("%d %v, want %s", status, j, c.code)
			}
		})
	}
	if status, j := e.reply(id, strings.Repeat("ß", redditReplyLimit.Max)); status != 200 || len(j["errors"].([]any)) != 0 {
		t.Errorf("a comment on the post of the longest length: %d %v", status, j)
	}
	if r := e.sim.Recorder().Snapshot(nil).Replies; len(r) != 1 || r[0].CommentID != id {
		t.Errorf("recorded %+v", r)
	}
}
