package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
)

// publishTo publishes one video to the tenant's channels of platforms and waits until every
// destination is published; it answers the post id.
func (e *env) publishTo(tn tenant, platforms []string, extra map[string]any) string {
	e.t.Helper()
	ms := newMediaServer(e.t, map[string][]byte{"/clip.mp4": video(e.t, 5)})
	body := map[string]any{"project_id": tn.ProjectID, "video_url": ms.URL + "/clip.mp4", "platforms": platforms,
		"title": "Audience test", "caption": "A clip for the audience"}
	for k, v := range extra {
		body[k] = v
	}
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: tn.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: body})
	if r.Code != http.StatusAccepted {
		e.t.Fatalf("publish: %d %s", r.Code, r.Body)
	}
	id := r.JSON["post_id"].(string)
	e.waitPost(tn, id, 60*time.Second, statusIs("published"))
	return id
}

// storePublished stores a post of the tenant to channelID as published with externalID,
// without going through the platform: for channels whose simulator refuses everything.
func (e *env) storePublished(tn tenant, channelID, platform, externalID string) store.AudienceTarget {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.st.CreatePost(ctx, store.NewPost{AccountID: tn.AccountID, ProjectID: tn.ProjectID, ContentHash: externalID,
		Video:        store.Media{SHA256: strings.Repeat("c", 64), BlobKey: "media/sha256/c", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request:      []byte(`{}`),
		Destinations: []store.Destination{{ChannelID: channelID, Platform: platform, Options: []byte(`{}`)}}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	d := p.Destinations[0]
	if _, _, err := e.st.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: externalID}); err != nil {
		e.t.Fatal(err)
	}
	item, err := e.st.PublishedItem(ctx, d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return item
}

func TestAnalyticsAndInbox(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		channels := map[string]string{}
		for _, p := range []string{"youtube", "bluesky", "telegram"} {
			channels[p], _ = e.sandboxChannel(e.a, p, map[string]any{"processing_ms": 0})
		}
		postID := e.publishTo(e.a, []string{"youtube", "bluesky", "telegram"}, nil)

		// Before any sync: the posts count, their figures are unknown (null, not zero).
		r := e.do(req{Method: "GET", Path: "/api/v1/analytics/overview", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["totalPosts"] != 1.0 || r.JSON["totalViews"] != nil || r.JSON["totalLikes"] != nil {
			t.Fatalf("overview before sync: %d %s", r.Code, r.Body)
		}
		yt := r.JSON["platformBreakdown"].(map[string]any)["youtube"].(map[string]any)
		if yt["posts"] != 1.0 || yt["views"] != nil {
			t.Errorf("youtube before sync: %v", yt)
		}

		r = e.do(req{Method: "POST", Path: "/api/v1/analytics/sync", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["synced"] != 2.0 || r.JSON["unavailable"] != 1.0 || r.JSON["failed"] != 0.0 {
			t.Fatalf("sync: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/analytics/overview", Key: e.a.Key})
		breakdown := r.JSON["platformBreakdown"].(map[string]any)
		yt, bs, tg := breakdown["youtube"].(map[string]any), breakdown["bluesky"].(map[string]any), breakdown["telegram"].(map[string]any)
		// The simulators' audience writes its first comment the moment an item is published.
		if _, ok := yt["views"].(float64); !ok || yt["comments"] != 1.0 || yt["impressions"] != nil {
			t.Errorf("youtube after sync: %v", yt)
		}
		if bs["views"] != nil || bs["comments"] != 1.0 {
			t.Errorf("bluesky after sync (no views on Bluesky): %v", bs)
		}
		if tg["posts"] != 1.0 || tg["views"] != nil || tg["likes"] != nil || tg["comments"] != nil {
			t.Errorf("telegram (no analytics): %v", tg)
		}
		if r.JSON["totalComments"] != 2.0 || r.JSON["totalImpressions"] != nil || r.JSON["totalViews"] != yt["views"] {
			t.Errorf("totals: %s", r.Body)
		}

		r = e.do(req{Method: "GET", Path: "/api/v1/analytics/metrics?samples=true&postId=" + postID, Key: e.a.Key})
		if r.Code != http.StatusOK || len(r.JSON["metrics"].([]any)) != 3 {
			t.Fatalf("metrics: %d %s", r.Code, r.Body)
		}
		for _, x := range r.JSON["metrics"].([]any) {
			m := x.(map[string]any)
			synced := m["synced_at"] != nil
			if want := m["platform"] != "telegram"; synced != want || (want && len(m["samples"].([]any)) != 1) {
				t.Errorf("%s: synced %v, samples %v", m["platform"], synced, m["samples"])
			}
		}

		// Comments: read on request, once each however often they are read.
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?refresh=true", Key: e.a.Key})
		if r.Code != http.StatusOK || len(r.JSON["comments"].([]any)) != 2 {
			t.Fatalf("comments: %d %s", r.Code, r.Body)
		}
		if sync := r.JSON["sync"].(map[string]any); sync["synced"] != 2.0 || sync["unavailable"] != 1.0 {
			t.Errorf("comment sync: %v", sync)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?refresh=true&platform=youtube", Key: e.a.Key})
		comments := r.JSON["comments"].([]any)
		if len(comments) != 1 {
			t.Fatalf("youtube comments after a second read: %s", r.Body)
		}
		ytComment := comments[0].(map[string]any)
		if ytComment["platform"] != "youtube" || ytComment["post_id"] != postID || ytComment["channel_id"] != channels["youtube"] || ytComment["own"] != false {
			t.Errorf("comment: %v", ytComment)
		}

		// Bad replies leave nothing behind.
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?platform=bluesky", Key: e.a.Key})
		bsComment := r.JSON["comments"].([]any)[0].(map[string]any)
		for _, tc := range []struct {
			name  string
			key   string
			body  map[string]any
			code  int
			field string
		}{
			{"empty text", e.a.Key, map[string]any{"commentId": ytComment["id"], "platform": "youtube", "replyText": "  "}, 400, "replyText"},
			{"over Bluesky's 300 graphemes", e.a.Key, map[string]any{"commentId": bsComment["id"], "platform": "bluesky", "replyText": strings.Repeat("é", 301)}, 400, "replyText"},
			{"wrong platform", e.a.Key, map[string]any{"commentId": ytComment["id"], "platform": "bluesky", "replyText": "hi"}, 400, "platform"},
			{"another account's comment", e.b.Key, map[string]any{"commentId": ytComment["id"], "platform": "youtube", "replyText": "hi"}, 404, ""},
			{"unknown comment", e.a.Key, map[string]any{"commentId": "00000000-0000-4000-8000-000000000000", "platform": "youtube", "replyText": "hi"}, 404, ""},
		} {
			r := e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: tc.key, Body: tc.body})
			if r.Code != tc.code || (tc.field != "" && r.field(tc.field) == "") {
				t.Errorf("%s: %d %s", tc.name, r.Code, r.Body)
			}
		}
		if got := e.replies(e.a, "youtube") + e.replies(e.a, "bluesky"); got != 0 {
			t.Errorf("refused replies reached the platforms: %d", got)
		}

		unanswered := func(key string) int {
			t.Helper()
			r := e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?unanswered=true", Key: key})
			if r.Code != http.StatusOK {
				t.Fatalf("unanswered: %d %s", r.Code, r.Body)
			}
			return len(r.JSON["comments"].([]any))
		}
		if n := unanswered(e.a.Key); n != 2 {
			t.Errorf("%d comments not replied to before replying, want 2", n)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?unanswered=yes", Key: e.a.Key}); r.Code != 400 || r.field("unanswered") == "" {
			t.Errorf("unanswered=yes: %d %s", r.Code, r.Body)
		}

		// A reply goes to the platform and into the inbox, under the comment it answers.
		for _, c := range []map[string]any{ytComment, bsComment} {
			r = e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: e.a.Key,
				Body: map[string]any{"commentId": c["id"], "platform": c["platform"], "replyText": "Thanks for watching! 🙌"}})
			if r.Code != http.StatusOK {
				t.Fatalf("reply on %s: %d %s", c["platform"], r.Code, r.Body)
			}
			reply := r.JSON["reply"].(map[string]any)
			if reply["own"] != true || reply["parent_id"] != c["id"] || reply["text"] != "Thanks for watching! 🙌" || reply["platform"] != c["platform"] {
				t.Errorf("reply: %v", reply)
			}
			if n := e.replies(e.a, c["platform"].(string)); n != 1 {
				t.Errorf("%s received %d replies", c["platform"], n)
			}
		}
		// Reading the platforms again finds the replies there, and stores them once.
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?refresh=true", Key: e.a.Key})
		if got := len(r.JSON["comments"].([]any)); got != 4 {
			t.Errorf("after replying: %d comments: %s", got, r.Body)
		}
		// Answered now, by the replies written here and read back from the platforms.
		if n := unanswered(e.a.Key); n != 0 {
			t.Errorf("%d comments not replied to after replying to both", n)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments", Key: e.b.Key})
		if got := len(r.JSON["comments"].([]any)); got != 0 {
			t.Errorf("another account sees %d comments", got)
		}
		if n := unanswered(e.b.Key); n != 0 {
			t.Errorf("another account sees %d comments not replied to", n)
		}
	})
}

// replies counts the replies a simulator received from the tenant's sandbox channels.
func (e *env) replies(tn tenant, platform string) int {
	e.t.Helper()
	r := e.do(req{Method: "GET", Path: "/sandbox/" + platform + "/_introspect", Key: tn.Key})
	if r.Code != http.StatusOK {
		e.t.Fatalf("introspect %s: %d %s", platform, r.Code, r.Body)
	}
	return len(r.JSON["replies"].([]any))
}

// A platform that fails during a sync is reported; the others still sync, and what was stored
// stays.
func TestAnalyticsSyncFaults(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.sandboxChannel(e.a, "bluesky", map[string]any{"processing_ms": 0})
		e.publishTo(e.a, []string{"bluesky"}, nil)
		limited, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"fail": "rate_limit"})
		refused, _ := e.sandboxChannel(e.a, "bluesky", map[string]any{"fail": "auth"})
		lim := e.storePublished(e.a, limited, "youtube", "dQw4w9WgXcQ")
		e.storePublished(e.a, refused, "bluesky", "at://did:plc:abc/app.bsky.feed.post/3kabc")

		r := e.do(req{Method: "POST", Path: "/api/v1/analytics/sync", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["synced"] != 1.0 || r.JSON["failed"] != 2.0 {
			t.Fatalf("sync: %d %s", r.Code, r.Body)
		}
		categories := map[string]string{}
		for _, x := range r.JSON["errors"].([]any) {
			er := x.(map[string]any)
			categories[er["channel_id"].(string)] = er["category"].(string)
		}
		if categories[limited] != "rate_limited" || categories[refused] != "auth_expired" {
			t.Errorf("errors: %v", r.JSON["errors"])
		}
		// The refused channel needs reconnecting; the rate-limited one does not.
		r = e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key})
		for _, x := range r.JSON["channels"].([]any) {
			ch := x.(map[string]any)
			want := "active"
			if ch["id"] == refused {
				want = "reauth_required"
			}
			if ch["status"] != want {
				t.Errorf("channel %s (%s): %s, want %s", ch["id"], ch["platform"], ch["status"], want)
			}
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/analytics/metrics?platform=youtube", Key: e.a.Key})
		m := r.JSON["metrics"].([]any)[0].(map[string]any)
		if m["destination_id"] != lim.DestinationID || m["synced_at"] != nil || m["views"] != nil || m["sync_error"] == nil {
			t.Errorf("rate-limited destination (unread, its failure recorded): %v", m)
		}
		// Bad filters are refused.
		for _, q := range []string{"startDate=2026-13-01", "startDate=2026-11-02&endDate=2026-11-01", "platform=myspace", "projectId=nope"} {
			if r := e.do(req{Method: "GET", Path: "/api/v1/analytics/overview?" + q, Key: e.a.Key}); r.Code != http.StatusBadRequest {
				t.Errorf("%s: %d %s", q, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/analytics/overview?projectId=" + e.b.ProjectID, Key: e.a.Key}); r.Code != http.StatusNotFound {
			t.Errorf("another account's project: %d", r.Code)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/analytics/sync", Key: e.b.Key, Body: map[string]any{"postId": lim.PostID}}); r.Code != http.StatusNotFound {
			t.Errorf("sync of another account's post: %d", r.Code)
		}
	})
}

// TestReplyIdempotency: a reply sent again under its Idempotency-Key is answered from the
// first and never posted twice, even when the requests arrive at once; a key whose reply the
// platform may have posted unanswered stays taken; one the platform refused is free again.
func TestReplyIdempotency(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		ch, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		e.publishTo(e.a, []string{"youtube"}, nil)
		r := e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?refresh=true", Key: e.a.Key})
		comment := r.JSON["comments"].([]any)[0].(map[string]any)
		reply := func(key, text string) *resp {
			t.Helper()
			return e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: e.a.Key, Header: map[string]string{"Idempotency-Key": key},
				Body: map[string]any{"commentId": comment["id"], "platform": "youtube", "replyText": text}})
		}
		setBehavior := func(behavior string) {
			t.Helper()
			c, err := e.st.GetChannel(context.Background(), e.a.AccountID, ch)
			if err != nil {
				t.Fatal(err)
			}
			c.SandboxBehavior = behavior
			if _, _, err := e.st.SaveChannel(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}

		first := reply("reply-1", "Thank you!")
		if first.Code != http.StatusOK || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first reply: %d %s", first.Code, first.Body)
		}
		again := reply("reply-1", "Thank you!")
		if again.Code != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.JSON["reply"].(map[string]any)["id"] != first.JSON["reply"].(map[string]any)["id"] {
			t.Errorf("repeated reply: %d %s", again.Code, again.Body)
		}
		if r := reply("reply-1", "Thanks again!"); r.Code != http.StatusConflict || r.errCode() != "idempotency_conflict" {
			t.Errorf("the key with another text: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: e.a.Key, Header: map[string]string{"Idempotency-Key": "bad key"},
			Body: map[string]any{"commentId": comment["id"], "platform": "youtube", "replyText": "x"}}); r.Code != 400 || r.field("Idempotency-Key") == "" {
			t.Errorf("a key with a space: %d %s", r.Code, r.Body)
		}
		if n := e.replies(e.a, "youtube"); n != 1 {
			t.Fatalf("the platform received %d replies, want 1", n)
		}

		// Eight identical requests at once: one reply.
		var wg sync.WaitGroup
		answers := make([]*resp, 8)
		for i := range answers {
			wg.Go(func() { answers[i] = reply("reply-2", "Glad you liked it") })
		}
		wg.Wait()
		var ids []any
		for _, a := range answers {
			switch {
			case a.Code == http.StatusOK:
				ids = append(ids, a.JSON["reply"].(map[string]any)["id"])
			case a.Code == http.StatusConflict && a.errCode() == "idempotency_conflict":
			default:
				t.Errorf("a concurrent repeat: %d %s", a.Code, a.Body)
			}
		}
		if len(ids) == 0 || slices.ContainsFunc(ids, func(id any) bool { return id != ids[0] }) {
			t.Errorf("concurrent repeats answered replies %v", ids)
		}
		if n := e.replies(e.a, "youtube"); n != 2 {
			t.Fatalf("after concurrent repeats the platform received %d replies, want 2", n)
		}

		// The platform fails (503): the reply may be out, so its key stays taken.
		setBehavior(`{"fail":"unavailable"}`)
		if r := reply("reply-3", "Are you there?"); r.Code != http.StatusBadGateway {
			t.Errorf("reply to an unavailable platform: %d %s", r.Code, r.Body)
		}
		setBehavior(`{}`)
		if r := reply("reply-3", "Are you there?"); r.Code != http.StatusConflict || r.errCode() != "idempotency_conflict" {
			t.Errorf("repeat of a reply with an unknown outcome: %d %s", r.Code, r.Body)
		}
		// The platform refuses (429): nothing was posted, and the key may be used again.
		setBehavior(`{"fail":"rate_limit"}`)
		if r := reply("reply-4", "One more"); r.Code != http.StatusTooManyRequests {
			t.Errorf("reply to a rate-limited platform: %d %s", r.Code, r.Body)
		}
		setBehavior(`{}`)
		if r := reply("reply-4", "One more"); r.Code != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("repeat of a refused reply: %d %s", r.Code, r.Body)
		}
		if n := e.replies(e.a, "youtube"); n != 3 {
			t.Errorf("the platform received %d replies, want 3", n)
		}
		// Keys are the account's own: another account's same key is another request.
		if r := e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: e.b.Key, Header: map[string]string{"Idempotency-Key": "reply-1"},
			Body: map[string]any{"commentId": comment["id"], "platform": "youtube", "replyText": "Thank you!"}}); r.Code != http.StatusNotFound {
			t.Errorf("another account with the key: %d %s", r.Code, r.Body)
		}
	})
}
