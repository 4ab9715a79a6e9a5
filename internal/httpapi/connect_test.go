package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
)

// appSandboxKey is the key the app env's sandbox tokens are signed with.
var appSandboxKey = secret.Derive(bytes.Repeat([]byte{4}, 32), "sandbox tokens")

// browse opens link in a new browser, as browseIn does.
func browse(t *testing.T, link string) (int, string, *url.URL) {
	t.Helper()
	return browseIn(t, newBrowser(t), link)
}

// browseIn opens link the way a browser does, with the cookies of b's jar, following redirects
// through reelay's start page and the simulator's consent page to reelay's callback, and
// returns the final answer.
func browseIn(t *testing.T, b *http.Client, link string) (int, string, *url.URL) {
	t.Helper()
	resp, err := (&http.Client{Jar: b.Jar}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Request.URL
}

// The whole OAuth round trip of every OAuth platform runs against its simulator: consent URL,
// consent page, callback, channel stored with its tokens sealed, and a post through it.
func TestOAuthRoundTrip(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		for _, p := range sim.OAuthPlatforms() {
			r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/" + p + "?sandbox=true&project_id=" + e.a.ProjectID, Key: e.a.Key})
			if r.Code != http.StatusOK || !strings.HasPrefix(r.JSON["url"].(string), e.cfg.PublicURL+"/api/v1/oauth/"+p+"/start?state=") {
				t.Fatalf("%s connect: %d %s", p, r.Code, r.Body)
			}
			code, page, final := browse(t, r.JSON["url"].(string))
			if code != http.StatusOK || final.Path != "/api/v1/oauth/"+p+"/callback" || !strings.Contains(page, "is connected as channel") {
				t.Fatalf("%s callback: %d at %s: %s", p, code, final, page)
			}
		}
		r := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID, Key: e.a.Key})
		channels := r.JSON["channels"].([]any)
		if len(channels) != len(sim.OAuthPlatforms()) {
			t.Fatalf("%d channels after %d consents: %s", len(channels), len(sim.OAuthPlatforms()), r.Body)
		}
		var platforms []string
		for _, c := range channels {
			ch := c.(map[string]any)
			if ch["sandbox"] != true || ch["status"] != "active" || !strings.HasPrefix(ch["external_account_id"].(string), "sbx_") || ch["name"] == "" {
				t.Errorf("connected channel: %v", ch)
			}
			platforms = append(platforms, ch["platform"].(string))
		}
		// The connected channels publish with the tokens the consent gave them.
		mp4 := video(t, 5)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
		pub := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "platforms": []string{"youtube", "tiktok", "threads", "facebook", "instagram"},
			"title": "Connected", "caption": "Through OAuth",
			// A channel connected through the simulator's consent is a new TikTok app's, which
			// TikTok has not audited: it may only post SELF_ONLY.
			"tiktok": map[string]any{"mode": "direct", "privacy_level": "SELF_ONLY"}}})
		if pub.Code != http.StatusAccepted {
			t.Fatalf("publish: %d %s", pub.Code, pub.Body)
		}
		e.waitPost(e.a, pub.JSON["post_id"].(string), 30*time.Second, statusIs("published"))
		// What the simulators received is shown as the connected channels' own.
		for _, p := range []string{"youtube", "tiktok", "threads", "facebook", "instagram"} {
			if uploads, published := e.introspect(e.a, p); len(uploads) != 1 || len(published) != 1 {
				t.Errorf("%s introspection: %v %v", p, uploads, published)
			}
		}

		// Another tenant cannot start a consent into this project.
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/youtube?sandbox=true&project_id=" + e.a.ProjectID, Key: e.b.Key}); r.Code != http.StatusNotFound {
			t.Errorf("connect into another tenant's project: %d", r.Code)
		}
	})
}

func TestConnectRefusals(t *testing.T) {
	e := newAppEnv(t, "sqlite", func(c *config.Config) {
		c.OAuthClients = map[string]*config.OAuthClient{"reddit": {ID: "app", Secret: "s3cret"}}
	})
	for name, tc := range map[string]struct {
		path, field string
		code        int
	}{
		"no app configured":  {"/api/v1/channels/connect/linkedin?project_id=" + e.a.ProjectID, "", 400},
		"token platform":     {"/api/v1/channels/connect/telegram?sandbox=true", "", 400},
		"unknown platform":   {"/api/v1/channels/connect/myspace", "platform", 400},
		"bad project":        {"/api/v1/channels/connect/youtube?project_id=nope", "project_id", 400},
		"bad sandbox":        {"/api/v1/channels/connect/youtube?sandbox=maybe", "sandbox", 400},
		"someone's project":  {"/api/v1/channels/connect/youtube?sandbox=true&project_id=" + e.b.ProjectID, "", 404},
		"configured, single": {"/api/v1/channels/connect/reddit", "", 200},
	} {
		r := e.do(req{Method: "GET", Path: tc.path, Key: e.a.Key})
		if r.Code != tc.code || (tc.field != "" && r.field(tc.field) == "") {
			t.Errorf("%s: %d %s", name, r.Code, r.Body)
		}
		if name == "configured, single" {
			// The link is reelay's start page, which sends the browser to Reddit's consent.
			code, _, loc, _ := visit(t, newBrowser(t), r.JSON["url"].(string))
			u, _ := url.Parse(loc)
			q := u.Query()
			if code != http.StatusSeeOther {
				t.Errorf("reddit start page: %d", code)
			}
			if u.Host != "www.reddit.com" || q.Get("client_id") != "app" || q.Get("duration") != "permanent" ||
				q.Get("redirect_uri") != e.cfg.PublicURL+"/api/v1/oauth/reddit/callback" || q.Get("state") == "" {
				t.Errorf("reddit consent URL %s", u)
			}
		}
	}
	// A callback with a forged state is refused with a page, and stores nothing.
	code, page, _ := browse(t, e.cfg.PublicURL+"/api/v1/oauth/youtube/callback?code=x&state=forged.state")
	if code != http.StatusBadRequest || !strings.Contains(page, "not issued by this server") {
		t.Errorf("forged state: %d %s", code, page)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}); len(r.JSON["channels"].([]any)) != 0 {
		t.Errorf("channels after refusals: %s", r.Body)
	}
}

// Credentials pasted for a token-based platform are checked with the platform before anything
// is stored, and the channel is named after the account they belong to.
func TestTokenChannelsAreVerified(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		// Simulated accounts that exist: those of sandbox channels.
		_, blueskyAccount := e.sandboxChannel(e.a, "bluesky", nil)
		_, mastodonAccount := e.sandboxChannel(e.a, "mastodon", nil)
		bsky := map[string]any{"handle": sandboxtoken.BlueskyHandle(blueskyAccount),
			"app_password": sandboxtoken.Token(appSandboxKey, "bluesky", blueskyAccount), "pds_url": e.cfg.PublicURL + "/sandbox/bluesky"}
		masto := map[string]any{"instance_url": e.cfg.PublicURL + "/sandbox/mastodon",
			"access_token": sandboxtoken.Token(appSandboxKey, "mastodon", mastodonAccount)}

		for platform, creds := range map[string]map[string]any{"bluesky": bsky, "mastodon": masto} {
			wrong := map[string]any{}
			for k, v := range creds {
				wrong[k] = v
			}
			secretField := map[string]string{"bluesky": "app_password", "mastodon": "access_token"}[platform]
			wrong[secretField] = "not-the-password"
			r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
				"project_id": e.a.ProjectID, "platform": platform, "credentials": wrong}})
			if r.Code != http.StatusBadRequest || !strings.Contains(r.field("credentials"), "refused") {
				t.Errorf("%s with a wrong secret: %d %s", platform, r.Code, r.Body)
			}
			r = e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
				"project_id": e.a.ProjectID, "platform": platform, "credentials": creds}})
			if r.Code != http.StatusCreated {
				t.Fatalf("%s: %d %s", platform, r.Code, r.Body)
			}
			ch := r.JSON["channel"].(map[string]any)
			if ch["sandbox"] != false || ch["username"] == "" || strings.HasPrefix(ch["external_account_id"].(string), "token:") {
				t.Errorf("%s channel not named by the platform: %v", platform, ch)
			}
		}
		r := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID, Key: e.a.Key})
		if n := len(r.JSON["channels"].([]any)); n != 4 {
			t.Errorf("%d channels; want the 2 sandbox ones and the 2 verified ones", n)
		}
	})
}

// A platform that refuses a channel's token gets a renewed one, and the step is repeated; a
// refresh the platform refuses fails the destination as auth_expired and marks the channel
// reauth_required.
func TestRefusedTokenIsRenewed(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/tiktok?sandbox=true", Key: e.a.Key})
		if code, page, _ := browse(t, r.JSON["url"].(string)); code != http.StatusOK {
			t.Fatalf("consent: %d %s", code, page)
		}
		list := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}).JSON["channels"].([]any)
		ch, err := e.st.GetChannel(ctx, e.a.AccountID, list[0].(map[string]any)["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		box, _ := secret.NewBox(bytes.Repeat([]byte{4}, 32))
		access := publish.ChannelAccess{Box: box}
		_, creds, err := publish.ChannelAccess{Box: box, SimulatorsURL: e.cfg.PublicURL}.Open(ch)
		if err != nil {
			t.Fatal(err)
		}
		// The stored token has expired although reelay believes it good for an hour: only the
		// platform's refusal can tell.
		mint := sandboxtoken.Mint{Key: appSandboxKey, Platform: "tiktok"}
		creds["access_token"] = mint.Access(ch.ExternalAccountID, time.Now().Add(-time.Minute))
		later := time.Now().Add(time.Hour)
		if err := e.st.SaveRefreshedCredentials(ctx, ch.ID, access.Seal(ch, creds), &later); err != nil {
			t.Fatal(err)
		}
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		publishTo := func() string {
			r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: map[string]any{
				"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "platforms": []string{"tiktok"},
				"title": "Renewed", "tiktok": map[string]any{"mode": "direct", "privacy_level": "SELF_ONLY"}, "allow_duplicate": true}})
			if r.Code != http.StatusAccepted {
				t.Fatalf("publish: %d %s", r.Code, r.Body)
			}
			return r.JSON["post_id"].(string)
		}
		e.waitPost(e.a, publishTo(), 30*time.Second, statusIs("published"))
		after, _ := e.st.GetChannel(ctx, e.a.AccountID, ch.ID)
		_, renewed, _ := publish.ChannelAccess{Box: box}.Open(after)
		if renewed["access_token"] == creds["access_token"] || renewed["refresh_token"] == creds["refresh_token"] {
			t.Fatalf("tokens not renewed (and TikTok's refresh token not rotated)")
		}

		// Now the refresh token is revoked too.
		renewed["access_token"] = mint.Access(ch.ExternalAccountID, time.Now().Add(-time.Minute))
		renewed["refresh_token"] = "revoked"
		if err := e.st.SaveRefreshedCredentials(ctx, ch.ID, access.Seal(ch, renewed), &later); err != nil {
			t.Fatal(err)
		}
		p := e.waitPost(e.a, publishTo(), 30*time.Second, statusIs("failed"))
		d := p["publish_results"].([]any)[0].(map[string]any)
		if d["error_category"] != "auth_expired" {
			t.Errorf("destination: %v", d)
		}
		if c, _ := e.st.GetChannel(ctx, e.a.AccountID, ch.ID); c.Status != "reauth_required" {
			t.Errorf("channel status %q", c.Status)
		}
	})
}
