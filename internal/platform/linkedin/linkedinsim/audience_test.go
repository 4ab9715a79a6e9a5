package linkedinsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// published creates a post of the member and returns it.
func (e *liEnv) published() Post {
	e.t.Helper()
	video := e.ready(liVideo(e.t, 1<<20, 10*time.Second, 1080, 1920))
	a := e.call(http.MethodPost, "/rest/posts", liPost(video, "audience"), nil)
	a.want(e.t, http.StatusCreated, nil)
	for _, p := range e.sim.Posts() {
		if p.URN == a.header.Get("X-RestLi-Id") {
			return p
		}
	}
	e.t.Fatal("no post")
	return Post{}
}

func statsPath(resource, entity, queryType string) string {
	return "/rest/" + resource + "?q=entity&entity=" + entity + "&queryType=" + queryType + "&aggregation=TOTAL"
}

func shareEntity(urn string) string { return "(share:" + url.QueryEscape(urn) + ")" }

func commentsPath(urn string) string {
	return "/rest/socialActions/" + url.QueryEscape(urn) + "/comments"
}

func TestLinkedInStatistics(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	p := e.published()
	e.clock.Advance(33 * time.Minute)
	a := sim.AudienceOf(p.URN, p.Created, e.clock.Now())

	for _, c := range []struct {
		resource, queryType string
		want                int64
	}{
		{"memberCreatorPostAnalytics", "IMPRESSION", a.Impressions},
		{"memberCreatorPostAnalytics", "MEMBERS_REACHED", a.Reach},
		{"memberCreatorPostAnalytics", "RESHARE", a.Shares},
		{"memberCreatorPostAnalytics", "REACTION", a.Likes},
		{"memberCreatorPostAnalytics", "COMMENT", a.Comments},
		{"memberCreatorVideoAnalytics", "VIDEO_PLAY", a.Views},
		{"memberCreatorVideoAnalytics", "VIDEO_VIEWER", a.Reach},
		{"memberCreatorVideoAnalytics", "VIDEO_WATCH_TIME", a.WatchSeconds * 1000},
	} {
		ans := e.call(http.MethodGet, statsPath(c.resource, shareEntity(p.URN), c.queryType), nil, nil)
		ans.want(t, http.StatusOK, nil)
		var body struct {
			Elements []struct {
				Count        int64
				MetricType   map[string]string
				TargetEntity map[string]string
			}
		}
		_ = json.Unmarshal([]byte(ans.raw), &body)
		if len(body.Elements) != 1 || body.Elements[0].Count != c.want || body.Elements[0].MetricType[linkedinMetricTypeKey] != c.queryType ||
			body.Elements[0].TargetEntity["share"] != p.URN {
			t.Errorf("%s: %s; want count %d", c.queryType, ans.raw, c.want)
		}
	}

	// From 202605, metricType is a string.
	e.clock.Advance(100 * 24 * time.Hour)
	ans := e.call(http.MethodGet, statsPath("memberCreatorPostAnalytics", shareEntity(p.URN), "IMPRESSION"), nil, map[string]string{"LinkedIn-Version": "202605"})
	if ans.status != http.StatusOK || !strings.Contains(ans.raw, `"metricType":"IMPRESSION"`) {
		t.Errorf("202605: %d %s", ans.status, ans.raw)
	}
	// A year on, plays have no data.
	e.clock.Advance(300 * 24 * time.Hour)
	ans = e.call(http.MethodGet, statsPath("memberCreatorVideoAnalytics", shareEntity(p.URN), "VIDEO_PLAY"), nil, map[string]string{"LinkedIn-Version": "202605"})
	if ans.status != http.StatusOK || !strings.Contains(ans.raw, `"elements":[]`) {
		t.Errorf("plays after a year: %d %s", ans.status, ans.raw)
	}
}

func TestLinkedInStatisticsStrict(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	p := e.published()
	ok := statsPath("memberCreatorPostAnalytics", shareEntity(p.URN), "IMPRESSION")
	for _, c := range []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
	}{
		{"valid", ok, nil, 200},
		{"unencoded urn", statsPath("memberCreatorPostAnalytics", "(share:"+p.URN+")", "IMPRESSION"), nil, 400},
		{"encoded parentheses", statsPath("memberCreatorPostAnalytics", url.QueryEscape(shareEntity(p.URN)), "IMPRESSION"), nil, 400},
		{"bare urn", statsPath("memberCreatorPostAnalytics", url.QueryEscape(p.URN), "IMPRESSION"), nil, 400},
		{"union of the wrong type", statsPath("memberCreatorPostAnalytics", "(ugc:"+url.QueryEscape(p.URN)+")", "IMPRESSION"), nil, 400},
		{"video metric on posts", statsPath("memberCreatorPostAnalytics", shareEntity(p.URN), "VIDEO_PLAY"), nil, 400},
		{"no finder", strings.Replace(ok, "q=entity&", "", 1), nil, 400},
		{"daily watch time", strings.Replace(statsPath("memberCreatorVideoAnalytics", shareEntity(p.URN), "VIDEO_WATCH_TIME"), "TOTAL", "DAILY", 1), nil, 400},
		{"no aggregation", strings.Replace(ok, "&aggregation=TOTAL", "", 1), nil, 400},
		{"unknown post", statsPath("memberCreatorPostAnalytics", shareEntity("urn:li:share:123"), "IMPRESSION"), nil, 404},
		{"another member", ok, map[string]string{"Authorization": "Bearer other"}, 403},
		{"before 202506", ok, map[string]string{"LinkedIn-Version": "202505"}, 404},
		{"no version", ok, map[string]string{"LinkedIn-Version": ""}, 400},
	} {
		t.Run(c.name, func(t *testing.T) { e.call(http.MethodGet, c.path, nil, c.hdr).want(t, c.status, nil) })
	}
}

func TestLinkedInComments(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	p := e.published()
	e.clock.Advance(time.Hour)
	audience := sim.AudienceComments(p.URN, p.Created, e.clock.Now())

	type element struct {
		ID, CommentURN, Actor, Object, ParentComment string
		URN                                          string `json:"$URN"`
		Message                                      struct{ Text string }
		Created                                      struct{ Time int64 }
		CommentsSummary                              struct{ AggregatedTotalComments int }
	}
	list := func(urn, query string) ([]element, int) {
		t.Helper()
		a := e.call(http.MethodGet, commentsPath(urn)+query, nil, nil)
		a.want(t, http.StatusOK, nil)
		var body struct {
			Paging   struct{ Total int }
			Elements []element
		}
		_ = json.Unmarshal([]byte(a.raw), &body)
		return body.Elements, body.Paging.Total
	}
	all, total := list(p.URN, "?count=100")
	if total != len(audience) || len(all) != len(audience) {
		t.Fatalf("%d of %d comments, want %d", len(all), total, len(audience))
	}
	for i, c := range all {
		a := audience[i]
		if c.CommentURN != AudienceCommentURN(p, a.N) || c.URN != c.CommentURN || c.Object != p.Activity ||
			c.Actor != AudienceActor(a.Author) || c.Message.Text != a.Text || c.Created.Time != a.At.UnixMilli() ||
			!strings.HasSuffix(c.CommentURN, ","+c.ID+")") {
			t.Errorf("comment %d = %+v; want %+v", i, c, a)
		}
	}
	// The same ids on every read; paging by start and count; the activity URN names the post too.
	page, _ := list(p.Activity, "?start=2&count=2")
	if len(page) != 2 || page[0].CommentURN != all[2].CommentURN || page[1].CommentURN != all[3].CommentURN {
		t.Fatalf("page = %+v", page)
	}

	create := func(key string, body map[string]any, hdr map[string]string) liAnswer {
		return e.call(http.MethodPost, commentsPath(key), body, hdr)
	}
	reply := func(parent, text string) map[string]any {
		return map[string]any{"actor": "urn:li:person:" + liMember, "object": p.URN, "message": map[string]any{"text": text}, "parentComment": parent}
	}
	first := all[0].CommentURN
	r := create(first, reply(first, "thank you"), nil)
	r.want(t, http.StatusCreated, map[string]any{"parentComment": first, "object": p.Activity, "actor": "urn:li:person:" + liMember})
	replyURN, _ := r.body["commentUrn"].(string)
	if id := r.header.Get("X-RestLi-Id"); id == "" || replyURN != "urn:li:comment:("+p.Activity+","+id+")" {
		t.Fatalf("created %s (x-restli-id %q)", r.raw, id)
	}
	nested, _ := list(first, "")
	if len(nested) != 1 || nested[0].CommentURN != replyURN || nested[0].ParentComment != first || nested[0].Message.Text != "thank you" {
		t.Fatalf("replies below %s: %+v", first, nested)
	}
	top, _ := list(p.URN, "?count=100")
	if len(top) != len(audience) || top[0].CommentsSummary.AggregatedTotalComments != 1 {
		t.Fatalf("first-level comments after the reply: %+v", top)
	}
	if got := e.rec.Snapshot(nil).Replies; len(got) != 1 || got[0] != (sim.Reply{Account: liMember, CommentID: first, Text: "thank you"}) {
		t.Fatalf("replies recorded: %+v", got)
	}

	for _, c := range []struct {
		name   string
		key    string
		body   map[string]any
		hdr    map[string]string
		status int
	}{
		{"nested twice", replyURN, reply(replyURN, "deeper"), nil, 400},
		{"parent not the path", all[1].CommentURN, reply(first, "x"), nil, 400},
		{"object of another post", first, map[string]any{"actor": "urn:li:person:" + liMember, "object": "urn:li:share:1", "message": map[string]any{"text": "x"}, "parentComment": first}, nil, 400},
		{"as someone else", first, map[string]any{"actor": "urn:li:person:someoneElse", "object": p.URN, "message": map[string]any{"text": "x"}, "parentComment": first}, nil, 403},
		{"no text", first, reply(first, ""), nil, 422},
		{"1251 units", first, reply(first, strings.Repeat("a", 1249)+"😀"), nil, 400},
		{"unknown comment", "urn:li:comment:(" + p.Activity + ",1)", reply("urn:li:comment:("+p.Activity+",1)", "x"), nil, 404},
		{"other member's post", first, reply(first, "x"), map[string]string{"Authorization": "Bearer other"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) { create(c.key, c.body, c.hdr).want(t, c.status, nil) })
	}
	if r := create(first, reply(first, strings.Repeat("a", 1248)+"😀"), nil); r.status != http.StatusCreated {
		t.Errorf("1250 units: %d %s", r.status, r.raw)
	}
	// Keys are URL-encoded whole.
	e.call(http.MethodGet, "/rest/socialActions/"+p.URN+"/comments", nil, nil).want(t, 400, nil)
	e.call(http.MethodGet, commentsPath("urn:li:share:42"), nil, nil).want(t, 404, nil)
	// COMMENT counts the replies.
	stats := e.call(http.MethodGet, statsPath("memberCreatorPostAnalytics", shareEntity(p.URN), "COMMENT"), nil, nil)
	if want := `"count":` + strconv.Itoa(len(audience)+2); !strings.Contains(stats.raw, want) {
		t.Errorf("COMMENT = %s, want %s", stats.raw, want)
	}
}

func TestLinkedInAudienceFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
	}{{sim.FailUnavailable, 503}, {sim.FailAuth, 401}, {sim.FailRateLimit, 429}} {
		e := newLiEnv(t, sim.Behavior{Fail: c.fail}, Options{})
		e.call(http.MethodGet, statsPath("memberCreatorPostAnalytics", shareEntity("urn:li:share:1"), "IMPRESSION"), nil, nil).want(t, c.status, nil)
		e.call(http.MethodGet, commentsPath("urn:li:share:1"), nil, nil).want(t, c.status, nil)
	}
}
