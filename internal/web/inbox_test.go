package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// publishAndWait publishes a small video to channel through the dashboard and waits until the
// post is published.
func (b *browser) publishAndWait(channelID, title string) string {
	b.e.t.Helper()
	r, out := b.publish("", [][2]string{{"project_id", b.e.a.ProjectID}, {"channel_ids", `["` + channelID + `"]`}, {"title", title}},
		"", fileField{"video", "c.mp4", smallVideo(b.e.t)})
	if r.Code != 200 {
		b.e.t.Fatalf("publish: %d %v", r.Code, out)
	}
	id := out["post_id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, _ := b.e.st.GetPost(context.Background(), b.e.a.AccountID, id)
		if p.Status == store.PostPublished {
			return id
		}
		if time.Now().After(deadline) {
			b.e.t.Fatalf("post still %s", p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// storedComment stores an audience comment on a new post of tn's, published on a new channel
// of platform, as if the platforms had been read.
func (e *env) storedComment(tn tenant, platform, text string) {
	e.t.Helper()
	ctx := context.Background()
	ch, _, err := e.st.SaveChannel(ctx, store.Channel{AccountID: tn.AccountID, ProjectID: tn.ProjectID, Platform: platform,
		Name: platform, ExternalAccountID: "stored-" + text, Sandbox: true})
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := e.st.CreatePost(ctx, store.NewPost{AccountID: tn.AccountID, ProjectID: tn.ProjectID, ContentHash: text,
		Video:        store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request:      []byte(`{}`),
		Destinations: []store.Destination{{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)}}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	d := p.Destinations[0]
	if _, _, err := e.st.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: "item-" + text}); err != nil {
		e.t.Fatal(err)
	}
	item, err := e.st.PublishedItem(ctx, d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Now()
	if _, err := e.st.SaveComments(ctx, item, []store.Comment{{PlatformID: "c-" + text, Author: "someone", Text: text, CreatedAt: now}},
		now, now.Add(time.Hour)); err != nil {
		e.t.Fatal(err)
	}
}

func TestInboxPage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testInboxPage(t, newEnv(t, d))
		})
	}
}

func testInboxPage(t *testing.T, e *env) {
	// Bob has a comment he has not answered: never on Alice's pages.
	e.storedComment(e.b, "bluesky", "bob-gets-this")
	b := e.browser()
	b.signIn(e.a.Key)
	ch := b.sandboxChannel("bluesky")
	postID := b.publishAndWait(ch, "Comment on me")

	if page := b.get("/inbox"); !strings.Contains(page.Body, "No comments here yet") {
		t.Fatalf("inbox before reading the platforms:\n%s", page.Body)
	}
	// The simulated audience comments as soon as an item is published; reading now finds it.
	r := b.post("/inbox/refresh", url.Values{}, nil)
	if r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/inbox?done=refreshed&added=") || strings.HasSuffix(r.location(), "added=0") {
		t.Fatalf("refresh: %d %q", r.Code, r.location())
	}
	page := b.get(r.location())
	m := regexp.MustCompile(`id="comment-([0-9a-f-]{36})"`).FindStringSubmatch(page.Body)
	if m == nil || !strings.Contains(page.Body, `action="/inbox/`+m[1]+`/reply"`) || !strings.Contains(page.Body, "/posts/"+postID) ||
		!strings.Contains(page.Body, `data-unit="graphemes"`) {
		t.Fatalf("inbox after reading:\n%s", page.Body)
	}
	comment := m[1]
	if page := b.get("/inbox?platform=youtube"); strings.Contains(page.Body, "comment-"+comment) {
		t.Error("the platform filter keeps a Bluesky comment under YouTube")
	}
	// Not replied to yet: listed under the filter, which the form and the reply forms keep.
	page = b.get("/inbox?platform=bluesky&unanswered=true")
	if !strings.Contains(page.Body, "comment-"+comment) || !strings.Contains(page.Body, `name="unanswered" value="true" checked`) ||
		!strings.Contains(page.Body, `name="back" value="platform=bluesky&amp;unanswered=true"`) {
		t.Fatalf("not replied to, before replying:\n%s", page.Body)
	}
	if r := b.get("/inbox?unanswered=yes"); r.Code != 400 || !strings.Contains(r.Body, "unanswered") {
		t.Errorf("unanswered=yes: %d", r.Code)
	}

	// Too long for Bluesky (300 graphemes): refused beside the field, the text kept, nothing sent.
	long := strings.Repeat("👍🏽", 301)
	r = b.post("/inbox/"+comment+"/reply", url.Values{"reply_text": {long}, "back": {"platform=bluesky"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="reply-`+comment+`-error"`) || !strings.Contains(r.Body, long) ||
		!strings.Contains(r.Body, "longer than Bluesky allows") {
		t.Fatalf("over-long reply: %d\n%s", r.Code, r.Body)
	}
	// Another account cannot answer it.
	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.post("/inbox/"+comment+"/reply", url.Values{"reply_text": {"hi"}}, nil); r.Code != 404 {
		t.Errorf("another account's comment: %d", r.Code)
	}
	// A reply that fits is posted on the platform and listed as this account's own; the
	// form sent twice (a double click) posts it once.
	key := regexp.MustCompile(`name="reply_key" value="([A-Za-z0-9_-]+)"`).FindStringSubmatch(page.Body)
	if key == nil {
		t.Fatalf("no reply key in the form:\n%s", page.Body)
	}
	if r := b.post("/inbox/"+comment+"/reply", url.Values{"reply_text": {"hi"}, "reply_key": {"not a key"}}, nil); r.Code != 400 {
		t.Errorf("a reply key the page did not make: %d", r.Code)
	}
	for range 2 {
		r = b.post("/inbox/"+comment+"/reply", url.Values{"reply_text": {"Thanks for watching 👍🏽"}, "back": {"platform=bluesky"}, "reply_key": {key[1]}}, nil)
		if r.Code != http.StatusSeeOther || r.location() != "/inbox?platform=bluesky&done=replied#comment-"+comment {
			t.Fatalf("reply: %d %q\n%s", r.Code, r.location(), r.Body)
		}
	}
	page = b.get("/inbox?platform=bluesky&done=replied")
	if !strings.Contains(page.Body, "Reply posted.") || strings.Count(page.Body, "Thanks for watching 👍🏽") != 1 || !strings.Contains(page.Body, "your reply") {
		t.Errorf("inbox after replying (once):\n%s", page.Body)
	}
	// Answered now: neither the comment nor the reply is among those not replied to.
	page = b.get("/inbox?unanswered=true")
	if strings.Contains(page.Body, "comment-"+comment) || strings.Contains(page.Body, "Thanks for watching") {
		t.Errorf("not replied to, after replying:\n%s", page.Body)
	}
	for _, path := range []string{"/inbox", "/inbox?unanswered=true", "/inbox?platform=bluesky&unanswered=true"} {
		if strings.Contains(b.get(path).Body, "bob-gets-this") {
			t.Errorf("%s shows another account's comment", path)
		}
	}
	if page := other.get("/inbox?unanswered=true"); !strings.Contains(page.Body, "bob-gets-this") || strings.Contains(page.Body, "comment-"+comment) {
		t.Errorf("bob's comments not replied to:\n%s", page.Body)
	}
}
