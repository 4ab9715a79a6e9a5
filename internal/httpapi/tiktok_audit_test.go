package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTikTokUnauditedApp: a TikTok sandbox channel's app is unaudited by default, as a new
// TikTok app is. Its options say that only SELF_ONLY will do until TikTok audits the app; a
// direct post with reelay's default privacy fails as invalid_options with the reason and the
// fix; a SELF_ONLY one is published.
func TestTikTokUnauditedApp(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t, "sqlite")
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	ch, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"processing_ms": 0, "app_access": "unaudited"})

	r := e.do(req{Method: "GET", Path: "/api/v1/channels/" + ch + "/options", Key: e.a.Key})
	privacy, _ := r.JSON["options"].(map[string]any)["privacy_level"].(map[string]any)
	if note, _ := privacy["note"].(string); r.Code != http.StatusOK || !strings.Contains(note, "until TikTok has audited the app") {
		t.Errorf("options: %d %s", r.Code, r.Body)
	}

	r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}})})
	if r.Code != http.StatusBadGateway || r.JSON["status"] != "failed" {
		t.Fatalf("public post from an unaudited app: %d %s", r.Code, r.Body)
	}
	d := r.JSON["platforms"].([]any)[0].(map[string]any)
	msg, _ := d["error"].(string)
	if d["error_category"] != "invalid_options" || !strings.Contains(msg, "privacy_level PUBLIC_TO_EVERYONE") ||
		!strings.Contains(msg, "has not passed TikTok's audit") || !strings.Contains(msg, "submit the app for TikTok's audit") ||
		!strings.Contains(msg, "tiktok.privacy_level SELF_ONLY") {
		t.Errorf("refused destination: %v", d)
	}

	r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"},
		Body: publishBody(e.a, ms, map[string]any{"channel_ids": []string{ch}, "allow_duplicate": true,
			"tiktok": map[string]any{"mode": "direct", "privacy_level": "SELF_ONLY"}})})
	if r.Code != http.StatusAccepted {
		t.Fatalf("SELF_ONLY post: %d %s", r.Code, r.Body)
	}
	e.waitPost(e.a, r.JSON["post_id"].(string), 20*time.Second, statusIs("published"))
}

// TestTikTokUnauditedPosters: an unaudited TikTok app lets five creators direct-post a day. In
// the sandbox each reelay account is an app of its own: the sixth of one account's channels is
// refused, saying why and what to do, while another account's channel posts.
func TestTikTokUnauditedPosters(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t, "sqlite")
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	selfOnly := map[string]any{"mode": "direct", "privacy_level": "SELF_ONLY"}
	publish := func(tn tenant, ch string) map[string]any {
		t.Helper()
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: tn.Key, Header: map[string]string{"Prefer": "wait=0"},
			Body: publishBody(tn, ms, map[string]any{"channel_ids": []string{ch}, "allow_duplicate": true, "tiktok": selfOnly})})
		if r.Code != http.StatusAccepted {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		return e.waitPost(tn, r.JSON["post_id"].(string), 20*time.Second, func(p map[string]any) bool {
			return p["status"] == "published" || p["status"] == "failed"
		})
	}
	for i := 1; i <= 5; i++ {
		ch, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"processing_ms": 0, "app_access": "unaudited"})
		if p := publish(e.a, ch); p["status"] != "published" {
			t.Fatalf("creator %d: %v", i, p)
		}
	}
	sixth, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"processing_ms": 0, "app_access": "unaudited"})
	p := publish(e.a, sixth)
	d, _ := p["publish_results"].([]any)[0].(map[string]any)
	if msg, _ := d["error"].(string); p["status"] != "failed" || d["error_category"] != "quota_exceeded" ||
		!strings.Contains(msg, "at most 5 accounts") || !strings.Contains(msg, "reached_active_user_cap") {
		t.Fatalf("the sixth creator: %v", p)
	}

	other, _ := e.sandboxChannel(e.b, "tiktok", map[string]any{"processing_ms": 0, "app_access": "unaudited"})
	if p := publish(e.b, other); p["status"] != "published" {
		t.Fatalf("another account's creator: %v", p)
	}
}
