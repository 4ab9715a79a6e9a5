package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// publicHook is a webhook URL at a public address, written as an IP so that registering it
// needs no DNS.
const publicHook = "https://93.184.215.14/hooks/reelay"

func TestWebhooksAPI(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key,
			Body: map[string]any{"url": publicHook, "events": []string{"post.failed", "post.published", "post.failed"}}})
		if r.Code != http.StatusCreated || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("create: %d %s", r.Code, r.Body)
		}
		secret, _ := r.JSON["secret"].(string)
		hook := r.JSON["webhook"].(map[string]any)
		id := hook["id"].(string)
		if !strings.HasPrefix(secret, "whsec_") || hook["url"] != publicHook || fmt.Sprint(hook["events"]) != "[post.failed post.published]" {
			t.Fatalf("created: %s", r.Body)
		}

		list := e.do(req{Method: "GET", Path: "/api/v1/webhooks", Key: e.a.Key})
		if list.Code != http.StatusOK || len(list.JSON["webhooks"].([]any)) != 1 || strings.Contains(string(list.Body), "whsec_") ||
			strings.Contains(string(list.Body), "secret") {
			t.Fatalf("list: %d %s", list.Code, list.Body)
		}
		// The secret is stored sealed, never as given.
		stored, err := e.st.GetWebhook(t.Context(), e.a.AccountID, id)
		if err != nil || strings.Contains(string(stored.Secret), secret[len("whsec_"):]) {
			t.Fatalf("stored secret: %v", err)
		}
		if hook["status"] != "active" || hook["disabled_at"] != nil || hook["disabled_reason"] != nil {
			t.Errorf("a new webhook: %v", hook)
		}
		// Its owner disables it and enables it again.
		r = e.do(req{Method: "PATCH", Path: "/api/v1/webhooks/" + id, Key: e.a.Key, Body: map[string]any{"enabled": false}})
		if got := r.JSON["webhook"].(map[string]any); r.Code != http.StatusOK || got["status"] != "disabled" ||
			got["disabled_at"] == nil || got["disabled_reason"] != "disabled by its owner" {
			t.Fatalf("disable: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "PATCH", Path: "/api/v1/webhooks/" + id, Key: e.a.Key, Body: map[string]any{}}); r.Code != 400 || r.field("enabled") == "" {
			t.Errorf("no enabled: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "PATCH", Path: "/api/v1/webhooks/" + id, Key: e.a.Key, Body: map[string]any{"enabled": true}})
		if got := r.JSON["webhook"].(map[string]any); r.Code != http.StatusOK || got["status"] != "active" || got["disabled_at"] != nil {
			t.Fatalf("enable: %d %s", r.Code, r.Body)
		}
		dl := e.do(req{Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries", Key: e.a.Key})
		if dl.Code != http.StatusOK || len(dl.JSON["deliveries"].([]any)) != 0 || dl.JSON["next_cursor"] != nil {
			t.Fatalf("deliveries: %d %s", dl.Code, dl.Body)
		}

		// Another account: 404 for every operation on the webhook, and an empty list.
		for _, rq := range []req{
			{Method: "DELETE", Path: "/api/v1/webhooks/" + id, Key: e.b.Key},
			{Method: "PATCH", Path: "/api/v1/webhooks/" + id, Key: e.b.Key, Body: map[string]any{"enabled": false}},
			{Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries", Key: e.b.Key},
			{Method: "DELETE", Path: "/api/v1/webhooks/" + uuid.NewString(), Key: e.a.Key},
		} {
			if r := e.do(rq); r.Code != http.StatusNotFound || r.errCode() != "not_found" {
				t.Errorf("%s %s: %d %s", rq.Method, rq.Path, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/webhooks", Key: e.b.Key}); len(r.JSON["webhooks"].([]any)) != 0 {
			t.Errorf("bob lists alice's webhook: %s", r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/webhooks/nope/deliveries", Key: e.a.Key}); r.Code != http.StatusBadRequest {
			t.Errorf("malformed id: %d", r.Code)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries?cursor=zzz", Key: e.a.Key}); r.field("cursor") == "" {
			t.Errorf("bad cursor: %d %s", r.Code, r.Body)
		}

		// Bad input names the field at fault and stores nothing.
		for _, tc := range []struct {
			body  any
			field string
		}{
			{map[string]any{"events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": publicHook}, "events"},
			{map[string]any{"url": publicHook, "events": []string{}}, "events"},
			{map[string]any{"url": publicHook, "events": []string{"post.deleted"}}, "events"},
			{map[string]any{"url": "ftp://93.184.215.14/x", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": "/relative", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": "https://me:pw@93.184.215.14/x", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": "http://127.0.0.1:9/x", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": "http://169.254.169.254/latest", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": "http://[fd00::1]/x", "events": []string{"post.failed"}}, "url"},
			{map[string]any{"url": publicHook, "events": []string{"post.failed"}, "secret": "mine"}, "secret"},
		} {
			r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key, Body: tc.body})
			if r.Code != http.StatusBadRequest || r.field(tc.field) == "" {
				t.Errorf("%v: %d %s", tc.body, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key, Body: "url=x",
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}); r.Code != http.StatusUnsupportedMediaType {
			t.Errorf("form body: %d", r.Code)
		}

		// An account holds a bounded number of webhooks (caps_test.go tests the caps in full).
		e.st.SetCaps(store.Caps{Webhooks: config.DefaultMaxWebhooksPerAccount})
		for i := 1; i < config.DefaultMaxWebhooksPerAccount; i++ {
			if r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key,
				Body: map[string]any{"url": publicHook, "events": []string{"post.failed"}}}); r.Code != http.StatusCreated {
				t.Fatalf("webhook %d: %d %s", i+1, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key,
			Body: map[string]any{"url": publicHook, "events": []string{"post.failed"}}}); r.Code != http.StatusConflict || r.errCode() != "limit_reached" {
			t.Errorf("webhook over the limit: %d %s", r.Code, r.Body)
		}

		if r := e.do(req{Method: "DELETE", Path: "/api/v1/webhooks/" + id, Key: e.a.Key}); r.Code != http.StatusOK || r.JSON["id"] != id {
			t.Fatalf("delete: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries", Key: e.a.Key}); r.Code != http.StatusNotFound {
			t.Errorf("deliveries of a deleted webhook: %d", r.Code)
		}
	})
}

// event is one request a receiver got.
type event struct {
	ID, Timestamp, Signature string
	Body                     []byte
	Type                     string
	Data                     map[string]any
}

// receiver is a webhook endpoint for tests: answer gives the status of its nth request
// (1-based).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []event
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev := event{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"),
			Signature: r.Header.Get("webhook-signature"), Body: body}
		var payload struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &payload) != nil {
			t.Errorf("receiver got %s %s %s", r.Method, r.Header.Get("Content-Type"), body)
		}
		ev.Type, ev.Data = payload.Type, payload.Data
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		n := len(rc.events)
		rc.mu.Unlock()
		w.WriteHeader(answer(n))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func always(status int) func(int) int { return func(int) int { return status } }

// wait returns the events of the given type once there are n of them.
func (rc *receiver) wait(t *testing.T, typ string, n int, d time.Duration) []event {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		rc.mu.Lock()
		var got []event
		for _, ev := range rc.events {
			if ev.Type == typ {
				got = append(got, ev)
			}
		}
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s events received in %s, want %d", len(got), typ, d, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verified checks an event's signature as a receiver following the Standard Webhooks
// convention would, independently of reelay's code: HMAC-SHA256 keyed with the base64 after
// "whsec_", over "id.timestamp.body", against each "v1," signature in the header; and a
// timestamp within five minutes.
func verified(secret string, ev event) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, terr := strconv.ParseInt(ev.Timestamp, 10, 64)
	if err != nil || terr != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ev.ID + "." + ev.Timestamp + "."))
	mac.Write(ev.Body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(ev.Signature) {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && subtle.ConstantTimeCompare([]byte(v), []byte(want)) == 1 {
			return true
		}
	}
	return false
}

// webhook registers a webhook of the tenant and returns its id and secret.
func (e *env) webhook(tn tenant, url string, events ...string) (id, secret string) {
	e.t.Helper()
	r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: tn.Key, Body: map[string]any{"url": url, "events": events}})
	if r.Code != http.StatusCreated {
		e.t.Fatalf("register webhook: %d %s", r.Code, r.Body)
	}
	return r.JSON["webhook"].(map[string]any)["id"].(string), r.JSON["secret"].(string)
}

// deliveries reads a webhook's delivery log.
func (e *env) deliveries(tn tenant, id string) []map[string]any {
	e.t.Helper()
	r := e.do(req{Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries", Key: tn.Key})
	if r.Code != http.StatusOK {
		e.t.Fatalf("deliveries: %d %s", r.Code, r.Body)
	}
	var out []map[string]any
	for _, d := range r.JSON["deliveries"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// waitDelivery polls a webhook's delivery log until cond holds for its newest delivery.
func (e *env) waitDelivery(tn tenant, id string, d time.Duration, cond func(map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if ds := e.deliveries(tn, id); len(ds) > 0 && cond(ds[0]) {
			return ds[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no delivery of webhook %s reached the expected state in %s: %v", id, d, e.deliveries(tn, id))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Publishing to a sandbox channel announces post.published, signed; a post created for later
// announces post.scheduled; the other tenant's webhook hears nothing of it.
func TestWebhookDeliveriesEndToEnd(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		rc := newReceiver(t, always(http.StatusOK))
		bobs := newReceiver(t, always(http.StatusOK))
		hookID, secret := e.webhook(e.a, rc.URL+"/hooks?source=reelay", store.WebhookEvents...)
		e.webhook(e.b, bobs.URL, store.WebhookEvents...)
		ch, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})

		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}})})
		if r.Code != http.StatusOK || r.JSON["status"] != "published" {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		postID := r.JSON["post_id"].(string)
		ev := rc.wait(t, store.EventPostPublished, 1, 15*time.Second)[0]
		if !verified(secret, ev) {
			t.Fatalf("post.published signature %s does not verify for id %s, timestamp %s, body %s", ev.Signature, ev.ID, ev.Timestamp, ev.Body)
		}
		if !strings.HasPrefix(ev.ID, "msg_") || ev.Data["id"] != postID || ev.Data["status"] != "published" ||
			ev.Data["project_id"] != e.a.ProjectID || ev.Data["published_at"] == nil {
			t.Errorf("post.published: %s", ev.Body)
		}
		dests, _ := ev.Data["destinations"].([]any)
		if len(dests) != 1 || dests[0].(map[string]any)["channel_id"] != ch || dests[0].(map[string]any)["status"] != "published" ||
			dests[0].(map[string]any)["url"] == nil {
			t.Errorf("post.published destinations: %s", ev.Body)
		}
		d := e.waitDelivery(e.a, hookID, 10*time.Second, func(d map[string]any) bool { return d["status"] == "delivered" })
		if d["event_id"] != ev.ID || d["event_type"] != "post.published" || d["attempts"] != 1.0 || d["last_status_code"] != 200.0 ||
			d["delivered_at"] == nil || d["last_error"] != nil || d["next_attempt_at"] != nil {
			t.Errorf("delivery log: %v", d)
		}

		// A post for later: post.scheduled, with the time it is scheduled for.
		at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{
			"channel_ids": []string{ch}, "caption": "later", "scheduled_for": at.Format(time.RFC3339)})})
		if r.Code != http.StatusOK || r.JSON["status"] != "scheduled" {
			t.Fatalf("schedule: %d %s", r.Code, r.Body)
		}
		ev = rc.wait(t, store.EventPostScheduled, 1, 15*time.Second)[0]
		if !verified(secret, ev) || ev.Data["id"] != r.JSON["post_id"] || ev.Data["status"] != "scheduled" {
			t.Errorf("post.scheduled: %s", ev.Body)
		}
		if sf, _ := time.Parse(time.RFC3339, fmt.Sprint(ev.Data["scheduled_for"])); !sf.Equal(at) {
			t.Errorf("post.scheduled scheduled_for %v, want %s", ev.Data["scheduled_for"], at)
		}

		// Bob's webhook heard none of Alice's events.
		bobs.mu.Lock()
		if n := len(bobs.events); n != 0 {
			t.Errorf("bob's receiver got %d of alice's events", n)
		}
		bobs.mu.Unlock()
	})
}

// A receiver that answers 500 gets the event again (same webhook-id, fresh timestamp and
// signature) and acknowledges it: two attempts recorded.
func TestWebhookRetriedAfterFailure(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		rc := newReceiver(t, func(n int) int {
			if n == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		hookID, secret := e.webhook(e.a, rc.URL, store.EventPostPublished)
		ch, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}})})
		if r.Code != http.StatusOK || r.JSON["status"] != "published" {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		evs := rc.wait(t, store.EventPostPublished, 2, 15*time.Second)
		if evs[0].ID != evs[1].ID || string(evs[0].Body) != string(evs[1].Body) {
			t.Errorf("a retry is not the same event: ids %s, %s; bodies %s, %s", evs[0].ID, evs[1].ID, evs[0].Body, evs[1].Body)
		}
		for i, ev := range evs {
			if !verified(secret, ev) {
				t.Errorf("attempt %d: signature does not verify", i+1)
			}
		}
		d := e.waitDelivery(e.a, hookID, 10*time.Second, func(d map[string]any) bool { return d["status"] == "delivered" })
		if d["attempts"] != 2.0 || d["last_status_code"] != 200.0 {
			t.Errorf("delivery after a retry: %v", d)
		}
	}, func(c *config.Config) { c.WebhookRetryBase = 20 * time.Millisecond })
}

// A receiver that is down never blocks or fails publishing: the post publishes within the
// publish wait, and the failed attempt is recorded with its next one scheduled.
func TestWebhookReceiverDown(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		down := httptest.NewServer(http.NotFoundHandler())
		url := down.URL + "/gone"
		down.Close() // nothing listens there any more
		hookID, _ := e.webhook(e.a, url, store.WebhookEvents...)
		ch, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		start := time.Now()
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}})})
		if r.Code != http.StatusOK || r.JSON["status"] != "published" || r.JSON["success"] != true {
			t.Fatalf("publish with the receiver down: %d %s", r.Code, r.Body)
		}
		t.Logf("published in %s with the receiver down", time.Since(start).Round(time.Millisecond))
		d := e.waitDelivery(e.a, hookID, 10*time.Second, func(d map[string]any) bool { return d["attempts"] == 1.0 })
		if d["status"] != "pending" || d["last_status_code"] != nil || d["last_error"] == nil || d["next_attempt_at"] == nil ||
			d["delivered_at"] != nil {
			t.Errorf("delivery to a receiver that is down: %v", d)
		}
		if strings.Contains(fmt.Sprint(d["last_error"]), url) {
			t.Errorf("the error repeats the URL: %v", d["last_error"])
		}
	})
}

// A sandbox channel whose platform refuses its token: the post fails and the channel needs
// reauthorising, and both are announced.
func TestWebhookChannelReauthRequired(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		rc := newReceiver(t, always(http.StatusNoContent))
		_, secret := e.webhook(e.a, rc.URL, store.EventChannelReauthRequired, store.EventPostFailed)
		expired, _ := e.sandboxChannel(e.a, "instagram", map[string]any{"fail": "auth"})
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{expired}})})
		if r.JSON["status"] != "failed" {
			t.Fatalf("publish to an expired channel: %d %s", r.Code, r.Body)
		}
		ev := rc.wait(t, store.EventChannelReauthRequired, 1, 15*time.Second)[0]
		if !verified(secret, ev) || ev.Data["id"] != expired || ev.Data["platform"] != "instagram" ||
			ev.Data["project_id"] != e.a.ProjectID || ev.Data["status"] != "reauth_required" {
			t.Errorf("channel.reauth_required: %s", ev.Body)
		}
		failed := rc.wait(t, store.EventPostFailed, 1, 15*time.Second)[0]
		dest := failed.Data["destinations"].([]any)[0].(map[string]any)
		if !verified(secret, failed) || failed.Data["id"] != r.JSON["post_id"] || dest["error_category"] != "auth_expired" || dest["error"] == nil {
			t.Errorf("post.failed: %s", failed.Body)
		}
		// Marked once, announced once.
		time.Sleep(200 * time.Millisecond)
		if n := len(rc.wait(t, store.EventChannelReauthRequired, 1, time.Second)); n != 1 {
			t.Errorf("channel.reauth_required announced %d times", n)
		}
	})
}
