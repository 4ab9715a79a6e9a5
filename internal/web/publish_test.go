package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func smallVideo(t *testing.T) []byte {
	t.Helper()
	return mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 1080, Height: 1920})
}

// sandboxChannel connects a sandbox channel through the dashboard and returns its id.
func (b *browser) sandboxChannel(platform string) string {
	b.e.t.Helper()
	before, _ := b.e.st.ListChannels(context.Background(), b.accountID(), b.projectID())
	r := b.post("/channels/sandbox", url.Values{"platform": {platform}, "fail": {"none"}, "processing_ms": {"50"}}, nil)
	if r.Code != http.StatusSeeOther {
		b.e.t.Fatalf("connect %s: %d %s", platform, r.Code, r.Body)
	}
	after, _ := b.e.st.ListChannels(context.Background(), b.accountID(), b.projectID())
	if len(after) != len(before)+1 {
		b.e.t.Fatalf("%d channels after connecting one to %d", len(after), len(before))
	}
	return after[len(after)-1].ID
}

func (b *browser) accountID() string { return b.e.a.AccountID }
func (b *browser) projectID() string { return b.e.a.ProjectID }

func (b *browser) publish(query string, fields [][2]string, key string, files ...fileField) (answer, map[string]any) {
	b.e.t.Helper()
	body, ct := multipartForm(b.e.t, fields, files...)
	r := b.do("POST", "/publish"+query, body, map[string]string{"Content-Type": ct, "X-CSRF-Token": b.csrf,
		"Accept": "application/json", "Idempotency-Key": key})
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		b.e.t.Fatalf("publish answer is not JSON: %d %s", r.Code, r.Body)
	}
	return r, out
}

// waitStatus waits for one of the account's posts to reach status, and answers it.
func (e *env) waitStatus(id, status string) store.Post {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := e.st.GetPost(context.Background(), e.a.AccountID, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if p.Status == status {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("post %s still %s, want %s", id, p.Status, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestPublishForm(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, d)
			b := e.browser()
			b.signIn(e.a.Key)
			ch := b.sandboxChannel("bluesky")
			posts := func() int {
				list, err := e.st.ListPosts(context.Background(), e.a.AccountID, store.PostFilter{})
				if err != nil {
					t.Fatal(err)
				}
				return len(list)
			}
			ids := `["` + ch + `"]`

			// The API's validation, with its messages keyed by field; nothing is stored.
			r, out := b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids},
				{"title", strings.Repeat("t", 101)}, {"bluesky", `{"text":"` + strings.Repeat("👩‍👩‍👧", 301) + `"}`}}, "form-key-aaaaaaaaaaaa")
			fields, _ := out["error"].(map[string]any)["fields"].(map[string]any)
			if r.Code != 400 || fields["title"] == nil || fields["video_url"] == nil || fields["bluesky.text"] == nil || out["request_id"] == "" {
				t.Fatalf("invalid form: %d %v", r.Code, out)
			}
			// Bluesky counts graphemes: 301 family emoji are 301, over its 300.
			if msg := fields["bluesky.text"].(string); !strings.Contains(msg, "301") {
				t.Errorf("bluesky.text message: %q", msg)
			}
			if posts() != 0 {
				t.Fatal("a refused form stored a post")
			}

			// A dry run answers what each destination would get, and stores nothing.
			video := fileField{"video", "clip.mp4", smallVideo(t)}
			r, out = b.publish("?dry_run=true", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids}, {"title", "Hello"},
				{"caption", "From the dashboard"}}, "", video)
			if r.Code != 200 || out["dry_run"] != true || len(out["platforms"].([]any)) != 1 || posts() != 0 {
				t.Fatalf("dry run: %d %v", r.Code, out)
			}

			// Submitted twice with the same form key (a double click): one post.
			for range 2 {
				r, out = b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids}, {"title", "Hello"},
					{"caption", "From the dashboard"}}, "form-key-bbbbbbbbbbbb", video)
				if r.Code != 200 || out["success"] != true || !strings.HasPrefix(out["location"].(string), "/posts/"+out["post_id"].(string)) {
					t.Fatalf("publish: %d %v", r.Code, out)
				}
			}
			if posts() != 1 {
				t.Fatalf("%d posts after the same form twice", posts())
			}
			id := out["post_id"].(string)
			e.waitStatus(id, store.PostPublished)
			// The post's page shows the destination published with its link.
			page := b.get("/posts/" + id)
			if page.Code != 200 || !strings.Contains(page.Body, `data-status="published"`) || !strings.Contains(page.Body, "View on Bluesky") {
				t.Errorf("post page:\n%s", page.Body)
			}
			// Its event stream ends with the settled status.
			ev := b.get("/posts/" + id + "/events")
			if ev.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(ev.Body, "event: settled") {
				t.Errorf("events: %v %s", ev.Header, ev.Body)
			}
		})
	}
}

func TestPostActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	ch := b.sandboxChannel("tiktok")
	at := time.Now().Add(2 * time.Hour).Format(time.RFC3339)
	r, out := b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", `["` + ch + `"]`}, {"title", "Later"},
		{"scheduled_for", at}}, "", fileField{"video", "clip.mp4", smallVideo(t)})
	if r.Code != 200 || out["status"] != "scheduled" || !strings.HasSuffix(out["location"].(string), "done=scheduled") {
		t.Fatalf("schedule: %d %v", r.Code, out)
	}
	id := out["post_id"].(string)
	page := b.get("/posts/" + id)
	if !strings.Contains(page.Body, "Cancel post") || strings.Contains(page.Body, "Retry failed") {
		t.Errorf("scheduled post's actions:\n%s", page.Body)
	}
	// Retry of a post with nothing failed: the API's 409, as a readable page.
	if r := b.post("/posts/"+id+"/retry", url.Values{}, nil); r.Code != 409 || !strings.Contains(r.Body, "no failed destination") {
		t.Errorf("retry: %d %s", r.Code, r.Body)
	}
	if r := b.post("/posts/"+id+"/cancel", url.Values{}, nil); r.Code != http.StatusSeeOther || r.location() != "/posts/"+id+"?done=canceled" {
		t.Fatalf("cancel: %d %s", r.Code, r.Body)
	}
	p, _ := e.st.GetPost(context.Background(), e.a.AccountID, id)
	if p.Status != store.PostCanceled {
		t.Errorf("after cancel: %s", p.Status)
	}
	if r := b.post("/posts/"+id+"/cancel", url.Values{}, nil); r.Code != 409 {
		t.Errorf("cancel twice: %d", r.Code)
	}
	// A destination the platform refused can be retried from its page.
	failing := b.post("/channels/sandbox", url.Values{"platform": {"youtube"}, "fail": {"reject"}, "name": {"Refusing"}}, nil)
	if failing.Code != http.StatusSeeOther {
		t.Fatalf("failing channel: %d", failing.Code)
	}
	list, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
	var refusing string
	for _, c := range list {
		if c.Name == "Refusing" {
			refusing = c.ID
		}
	}
	r, out = b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", `["` + refusing + `"]`}, {"title", "Refused"}},
		"", fileField{"video", "clip.mp4", smallVideo(t)})
	if r.Code != 200 {
		t.Fatalf("publish to a refusing channel: %d %v", r.Code, out)
	}
	failed := out["post_id"].(string)
	e.waitStatus(failed, store.PostFailed)
	page = b.get("/posts/" + failed)
	if !strings.Contains(page.Body, "Retry failed destinations") || !strings.Contains(page.Body, "media_rejected") {
		t.Errorf("failed post's page:\n%s", page.Body)
	}
	if r := b.post("/posts/"+failed+"/retry", url.Values{}, nil); r.Code != http.StatusSeeOther || r.location() != "/posts/"+failed+"?done=retried" {
		t.Errorf("retry: %d %s", r.Code, r.Body)
	}
	if p, _ := e.st.GetPost(context.Background(), e.a.AccountID, failed); p.Destinations[0].Seq < 2 {
		t.Errorf("retry did not send the destination again: %+v", p.Destinations[0])
	}

	// The list filters by status.
	if r := b.get("/posts?status=canceled"); !strings.Contains(r.Body, "/posts/"+id) {
		t.Error("canceled post missing from the canceled filter")
	}
	if r := b.get("/posts?status=published"); strings.Contains(r.Body, "/posts/"+id) {
		t.Error("canceled post in the published filter")
	}
}

func TestChannelsAndKeysPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)

	// Bad input is shown beside its field, with what was typed kept.
	r := b.post("/channels/sandbox", url.Values{"platform": {"tiktok"}, "name": {"My <b>channel</b>"}, "fail": {"explode"},
		"processing_ms": {"soon"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="sb-fail-error"`) || !strings.Contains(r.Body, `id="sb-ms-error"`) ||
		!strings.Contains(r.Body, `value="My &lt;b&gt;channel&lt;/b&gt;"`) || !strings.Contains(r.Body, `value="soon"`) {
		t.Errorf("bad sandbox form: %d\n%s", r.Code, r.Body)
	}
	ch := b.sandboxChannel("youtube")
	if err := e.st.SetChannelStatus(context.Background(), ch, "reauth_required"); err != nil {
		t.Fatal(err)
	}
	page := b.get("/channels")
	if !strings.Contains(page.Body, "Reconnect needed") || !strings.Contains(page.Body, ">Reconnect<") {
		t.Errorf("reauth_required channel:\n%s", page.Body)
	}
	// Reconnecting goes through reelay's start page (which binds the consent to this browser),
	// the simulator's consent and back to the channels page.
	r = b.post("/channels/connect", url.Values{"platform": {"youtube"}, "sandbox": {"true"}}, nil)
	if r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), e.url+"/api/v1/oauth/youtube/start?state=") {
		t.Fatalf("connect: %d %q %s", r.Code, r.location(), r.Body)
	}
	next := r.location()
	for i := 0; i < 5 && !strings.HasPrefix(next, "/channels"); i++ {
		if strings.HasPrefix(next, e.url+"/api/v1/oauth/youtube/callback?") {
			// Another browser (Bob's, signed in) brought the platform's answer: refused, and
			// the consent stays for this one.
			other := e.browser()
			other.signIn(e.b.Key)
			if res := other.do("GET", strings.TrimPrefix(next, e.url), nil, nil); res.Code != http.StatusForbidden || res.location() != "" {
				t.Errorf("the callback in another browser: %d %q", res.Code, res.location())
			}
		}
		res := b.do("GET", strings.TrimPrefix(next, e.url), nil, nil)
		next = res.location()
		if next == "" {
			t.Fatalf("consent stopped at %d: %s", res.Code, res.Body)
		}
	}
	if !strings.HasPrefix(next, "/channels?") || !strings.Contains(next, "status=connected") {
		t.Fatalf("after the consent: %q", next)
	}
	if page := b.get(next); !strings.Contains(page.Body, "YouTube channel connected") {
		t.Errorf("channels page after the consent:\n%s", page.Body)
	}
	if r := b.post("/channels/"+ch+"/delete", url.Values{}, nil); r.Code != http.StatusSeeOther {
		t.Errorf("delete: %d", r.Code)
	}
	if r := b.post("/channels/"+ch+"/delete", url.Values{}, nil); r.Code != 404 {
		t.Errorf("delete twice: %d", r.Code)
	}

	// A key is shown once, on the answer to the form; revoking the session's own key signs out.
	r = b.post("/keys", url.Values{"name": {"ci"}}, nil)
	if r.Code != http.StatusCreated || !strings.Contains(r.Body, `value="rly_live_`) || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create key: %d", r.Code)
	}
	if page := b.get("/keys"); strings.Count(page.Body, "rly_live_") != strings.Count(page.Body, "<code>rly_live_") {
		t.Error("the keys page shows more than prefixes")
	}
	if r := b.post("/keys", url.Values{"name": {""}}, nil); r.Code != 400 || !strings.Contains(r.Body, "key-name-error") {
		t.Errorf("nameless key: %d", r.Code)
	}
	if r := b.post("/keys/"+e.a.KeyID+"/revoke", url.Values{}, nil); r.Code != http.StatusSeeOther || r.location() != "/signin?signed_out=1" {
		t.Errorf("revoke own key: %d %q", r.Code, r.location())
	}
	if r := b.get("/posts"); r.Code != http.StatusSeeOther {
		t.Errorf("after revoking the session's key: %d", r.Code)
	}
}
