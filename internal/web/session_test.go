package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestSignInSessionAndSignOut(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, d)
			b := e.browser()

			// Without a session a page sends the browser to sign in, to come back.
			r := b.get("/channels?x=1")
			if r.Code != http.StatusSeeOther || r.location() != "/signin?next="+url.QueryEscape("/channels?x=1") {
				t.Fatalf("no session: %d %q", r.Code, r.location())
			}
			page := b.get("/signin?next=" + url.QueryEscape("/channels?x=1"))
			if page.Code != 200 || !strings.Contains(page.Body, `name="next" value="/channels?x=1"`) {
				t.Fatalf("sign-in page: %d\n%s", page.Code, page.Body)
			}
			token := formToken(t, page.Body)

			// A wrong key: refused, and what was typed is not written back into the page.
			wrong := "rly_live_" + strings.Repeat("Z", 43)
			r = b.post("/signin", url.Values{"csrf_token": {token}, "api_key": {wrong}, "next": {"/channels?x=1"}}, nil)
			if r.Code != http.StatusUnauthorized || strings.Contains(r.Body, wrong) || !strings.Contains(r.Body, "not a valid API key") {
				t.Fatalf("wrong key: %d\n%s", r.Code, r.Body)
			}
			if b.cookie("reelay_session") != nil {
				t.Fatal("a session cookie after a refused sign-in")
			}

			// The right key opens a session and goes back where the browser was going.
			r = b.post("/signin", url.Values{"csrf_token": {token}, "api_key": {e.a.Key}, "next": {"/channels?x=1"}}, nil)
			if r.Code != http.StatusSeeOther || r.location() != "/channels?x=1" {
				t.Fatalf("sign in: %d %q %s", r.Code, r.location(), r.Body)
			}
			set := r.Header.Values("Set-Cookie")
			var sessionCookie string
			for _, c := range set {
				if strings.HasPrefix(c, "reelay_session=") {
					sessionCookie = c
				}
			}
			if !strings.Contains(sessionCookie, "HttpOnly") || !strings.Contains(sessionCookie, "SameSite=Lax") || strings.Contains(sessionCookie, "Secure") {
				t.Errorf("session cookie over plain http: %q", sessionCookie)
			}
			if strings.Contains(sessionCookie, e.a.Key) {
				t.Error("the API key is in the cookie")
			}
			r = b.get("/channels?x=1")
			if r.Code != 200 || !strings.Contains(r.Body, "<h1>Channels</h1>") || strings.Contains(r.Body, e.a.Key) {
				t.Fatalf("signed in: %d", r.Code)
			}
			b.csrf = formToken(t, r.Body)
			// The key never reaches a log line.
			if strings.Contains(e.logs.String(), e.a.Key) || strings.Contains(e.logs.String(), wrong) {
				t.Error("an API key is in the log")
			}

			// Sign-out deletes the session: the old cookie no longer opens anything.
			old := b.cookie("reelay_session").Value
			if r := b.post("/signout", url.Values{}, nil); r.Code != http.StatusSeeOther || r.location() != "/signin?signed_out=1" {
				t.Fatalf("sign out: %d %q", r.Code, r.location())
			}
			replay := e.browser()
			u, _ := url.Parse(e.url)
			replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: "reelay_session", Value: old}})
			if r := replay.get("/posts"); r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/signin") {
				t.Errorf("the signed-out session still works: %d", r.Code)
			}
		})
	}
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	cases := []struct {
		name   string
		form   func(token string) url.Values
		header map[string]string
		code   int
	}{
		{"no form token (login CSRF)", func(string) url.Values { return url.Values{"api_key": {e.a.Key}, "csrf_token": {""}} }, nil, 403},
		{"forged form token", func(string) url.Values {
			return url.Values{"api_key": {e.a.Key}, "csrf_token": {"forged-forged-forged-forged-forged"}}
		}, nil, 403},
		{"another site", func(tok string) url.Values { return url.Values{"api_key": {e.a.Key}, "csrf_token": {tok}} },
			map[string]string{"Origin": "https://evil.example"}, 403},
		{"empty key", func(tok string) url.Values { return url.Values{"api_key": {""}, "csrf_token": {tok}} }, nil, 400},
		{"not a key", func(tok string) url.Values { return url.Values{"api_key": {"hunter2"}, "csrf_token": {tok}} }, nil, 401},
	}
	for _, c := range cases {
		b := e.browser()
		tok := formToken(t, b.get("/signin").Body)
		r := b.post("/signin", c.form(tok), c.header)
		if r.Code != c.code || b.cookie("reelay_session") != nil {
			t.Errorf("%s: %d, want %d (session cookie %v)", c.name, r.Code, c.code, b.cookie("reelay_session"))
		}
	}
	// An unsafe next is replaced by the start page.
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "/signin"} {
		b := e.browser()
		tok := formToken(t, b.get("/signin").Body)
		r := b.post("/signin", url.Values{"api_key": {e.a.Key}, "csrf_token": {tok}, "next": {next}}, nil)
		if r.Code != http.StatusSeeOther || r.location() != "/" {
			t.Errorf("next %q: %d to %q", next, r.Code, r.location())
		}
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	if r := b.signIn(e.a.Key); r.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.Code)
	}
	channels := func() int {
		list, err := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	form := func() url.Values { return url.Values{"platform": {"tiktok"}, "fail": {"none"}} }
	other := e.browser()
	other.signIn(e.b.Key)
	cases := []struct {
		name   string
		token  string
		header map[string]string
	}{
		{"missing token", "", nil},
		{"forged token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil},
		{"another session's token", other.csrf, nil},
		{"right token from another site", b.csrf, map[string]string{"Origin": "https://evil.example"}},
		{"right token, foreign referer", b.csrf, map[string]string{"Origin": "", "Referer": "https://evil.example/page"}},
	}
	for _, c := range cases {
		f := form()
		f.Set("csrf_token", c.token)
		r := b.post("/channels/sandbox", f, c.header)
		if r.Code != http.StatusForbidden || !strings.Contains(r.Body, "did not come from this site") {
			t.Errorf("%s: %d %s", c.name, r.Code, r.Body)
		}
		if n := channels(); n != 0 {
			t.Fatalf("%s: %d channels after a refused form", c.name, n)
		}
	}
	// Scripts send the token in a header; a forged one is refused the same way, as JSON.
	body, ct := multipartForm(t, [][2]string{{"project_id", e.a.ProjectID}})
	r := b.do("POST", "/publish", body, map[string]string{"Content-Type": ct, "X-CSRF-Token": "forged"})
	if r.Code != http.StatusForbidden || !strings.Contains(r.Body, `"code":"forbidden"`) {
		t.Errorf("publish with a forged header: %d %s", r.Code, r.Body)
	}

	// The right token from this site works.
	if r := b.post("/channels/sandbox", form(), nil); r.Code != http.StatusSeeOther || channels() != 1 {
		t.Fatalf("sandbox channel: %d %s", r.Code, r.Body)
	}
}

func TestSessionExpiryAndRenewal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	idle := 12 * time.Hour // web.DefaultSessionIdle

	// Used past half its idle time, a session is renewed: it outlives its first expiry.
	e.skew.Store(int64(idle * 3 / 4))
	if r := b.get("/posts"); r.Code != 200 {
		t.Fatalf("at 3/4 of the idle time: %d", r.Code)
	}
	e.skew.Store(int64(idle * 3 / 2))
	if r := b.get("/posts"); r.Code != 200 {
		t.Fatalf("renewed session at 3/2 of the idle time: %d", r.Code)
	}

	// Unused for longer than the idle time, it has ended: sign in, and back to the page.
	e.skew.Store(int64(idle*3/2 + idle + time.Minute))
	r := b.get("/channels")
	if r.Code != http.StatusSeeOther || r.location() != "/signin?next=%2Fchannels" {
		t.Fatalf("expired session: %d %q", r.Code, r.location())
	}
	// A form posted with an ended session goes to sign in too, and changes nothing.
	r = b.post("/channels/sandbox", url.Values{"platform": {"tiktok"}}, map[string]string{"Referer": e.url + "/channels"})
	if r.Code != http.StatusSeeOther || r.location() != "/signin?next=%2Fchannels" {
		t.Fatalf("form with an expired session: %d %q", r.Code, r.location())
	}
	if list, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID); len(list) != 0 {
		t.Fatal("a form of an expired session changed something")
	}
	page := b.get(r.location())
	r = b.post("/signin", url.Values{"csrf_token": {formToken(t, page.Body)}, "api_key": {e.a.Key}, "next": {"/channels"}}, nil)
	if r.Code != http.StatusSeeOther || r.location() != "/channels" {
		t.Fatalf("back after signing in again: %d %q", r.Code, r.location())
	}
	// A script's request gets a 401 it can act on, not a redirect to a form.
	e.skew.Store(int64(10 * idle))
	r = b.do("GET", "/posts", nil, map[string]string{"Accept": "application/json"})
	if r.Code != http.StatusUnauthorized {
		t.Errorf("script request with an expired session: %d", r.Code)
	}
}

func TestRevokedKeyEndsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	if err := e.st.RevokeAPIKey(context.Background(), e.a.AccountID, e.a.KeyID); err != nil {
		t.Fatal(err)
	}
	if r := b.get("/posts"); r.Code != http.StatusSeeOther {
		t.Errorf("session of a revoked key: %d", r.Code)
	}
}

func TestPagesAndErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)

	// The API, the simulators and the operational endpoints answer as before.
	anon := e.browser()
	if r := anon.get("/api/v1/nowhere"); r.Code != 404 || !strings.Contains(r.Body, `"code":"not_found"`) {
		t.Errorf("unknown API path: %d %s", r.Code, r.Body)
	}
	if r := anon.get("/healthz"); r.Code != 200 || !strings.Contains(r.Body, `"ok"`) {
		t.Errorf("healthz: %d %s", r.Code, r.Body)
	}
	if r := anon.do("POST", "/metrics", nil, nil); r.Code != 405 && !strings.Contains(r.Body, `"success":false`) {
		t.Errorf("POST /metrics: %d %s", r.Code, r.Body)
	}
	if r := anon.get("/sandbox/tiktok/_introspect"); !strings.Contains(r.Body, `"success":false`) {
		t.Errorf("sandbox without a key: %d %s", r.Code, r.Body)
	}

	for _, path := range []string{"/posts", "/publish", "/channels", "/keys"} {
		r := b.get(path)
		if r.Code != 200 || !strings.Contains(r.Body, `aria-current="page"`) || r.Header.Get("X-Frame-Options") != "DENY" ||
			!strings.Contains(r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			!strings.HasSuffix(r.Header.Get("Content-Security-Policy"), "form-action 'self' https: "+e.url) {
			t.Errorf("%s: %d %v", path, r.Code, r.Header)
		}
	}

	// A post of another account is not found, on a readable page with the request id.
	otherPost := publishViaAPI(t, e, e.b)
	r := b.get("/posts/" + otherPost)
	rid := r.Header.Get("X-Request-Id")
	if r.Code != 404 || rid == "" || !strings.Contains(r.Body, rid) || strings.Contains(r.Body, "Untitled") {
		t.Errorf("another account's post: %d (request id %q)\n%s", r.Code, rid, r.Body)
	}
	if r := b.post("/posts/"+otherPost+"/cancel", url.Values{}, nil); r.Code != 404 {
		t.Errorf("cancel another account's post: %d", r.Code)
	}
	if r := b.get("/posts/" + otherPost + "/events"); r.Code != 404 {
		t.Errorf("events of another account's post: %d", r.Code)
	}
	if r := b.get("/no/such/page"); r.Code != 404 || !strings.Contains(r.Body, "There is no page at this address") {
		t.Errorf("unknown page: %d", r.Code)
	}
	// Filters that are not valid are a 400 page naming them.
	if r := b.get("/posts?status=bogus"); r.Code != 400 || !strings.Contains(r.Body, "status") {
		t.Errorf("bad filter: %d", r.Code)
	}
	if r := b.get("/posts?project=" + e.b.ProjectID); r.Code != 400 {
		t.Errorf("another account's project as a filter: %d", r.Code)
	}
	// The project switcher takes the account's own projects only.
	if r := b.post("/project", url.Values{"project_id": {e.b.ProjectID}, "next": {"/posts"}}, nil); r.Code != 404 {
		t.Errorf("switch to another account's project: %d", r.Code)
	}
}

// publishViaAPI publishes a small video to a new sandbox channel of tn through the API and
// returns the post's id.
func publishViaAPI(t *testing.T, e *env, tn tenant) string {
	t.Helper()
	api := func(method, path string, body any) map[string]any {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, e.url+path, strings.NewReader(string(raw)))
		req.Header.Set("X-API-Key", tn.Key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
		}
		return out
	}
	ch := api("POST", "/api/v1/channels", map[string]any{"project_id": tn.ProjectID, "platform": "tiktok", "sandbox": true})
	id := ch["channel"].(map[string]any)["id"].(string)
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	body, ct := multipartForm(t, [][2]string{{"project_id", tn.ProjectID}, {"channel_ids", `["` + id + `"]`}, {"title", "Theirs"},
		{"scheduled_for", at}}, fileField{"video", "clip.mp4", smallVideo(t)})
	req, _ := http.NewRequest("POST", e.url+"/api/v1/publish", body)
	req.Header.Set("X-API-Key", tn.Key)
	req.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 200 {
		t.Fatalf("publish: %d %v", res.StatusCode, out)
	}
	return out["post_id"].(string)
}

func TestServerErrorPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	// With the database gone, a page cannot be made: a readable page with the request id, and
	// the cause in the log, not on the page.
	e.st.Close()
	r := b.get("/posts")
	rid := r.Header.Get("X-Request-Id")
	if r.Code != 500 || rid == "" || !strings.Contains(r.Body, rid) || !strings.Contains(r.Body, "Something went wrong") ||
		strings.Contains(r.Body, "sql") || !strings.Contains(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("server error: %d\n%s", r.Code, r.Body)
	}
	if !strings.Contains(e.logs.String(), "request_id="+rid) {
		t.Error("the failed request's id is not in the log")
	}
}

func TestSecureCookieWhenServedOverHTTPS(t *testing.T) {
	t.Parallel()
	// Behind a TLS proxy the request is plain http, but users reach the server by https.
	e := newEnv(t, store.SQLite, func(c *config.Config) { c.PublicURL = "https://reelay.example" })
	b := e.browser()
	r := b.signIn(e.a.Key)
	var cookie string
	for _, c := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "reelay_session=") {
			cookie = c
		}
	}
	if r.Code != http.StatusSeeOther || !strings.Contains(cookie, "; Secure") || !strings.Contains(cookie, "HttpOnly") {
		t.Errorf("session cookie with an https public URL: %d %q", r.Code, cookie)
	}
	// Forms posted from the public origin pass the origin check too.
	if r := b.post("/channels/sandbox", url.Values{"platform": {"tiktok"}}, map[string]string{"Origin": "https://reelay.example"}); r.Code == http.StatusForbidden {
		t.Errorf("form from the public origin: %d", r.Code)
	}
}

func TestPostsPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	ch := b.sandboxChannel("tiktok")
	ctx := context.Background()
	later := time.Now().Add(24 * time.Hour)
	for i := range 27 {
		_, err := e.st.CreatePost(ctx, store.NewPost{AccountID: e.a.AccountID, ProjectID: e.a.ProjectID,
			Title: fmt.Sprintf("Post %02d", i), Request: []byte(`{}`), ContentHash: fmt.Sprint(i), ScheduledFor: &later,
			Video:        store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
			Destinations: []store.Destination{{ChannelID: ch, Platform: "tiktok", Options: []byte(`{}`)}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	first := b.get("/posts")
	if n := strings.Count(first.Body, `<td data-label="Post">`); n != 25 || !strings.Contains(first.Body, "Post 26") || strings.Contains(first.Body, "Post 01<") {
		t.Fatalf("first page: %d rows", n)
	}
	m := regexp.MustCompile(`href="(/posts\?[^"]*cursor=[^"]+)" rel="next"`).FindStringSubmatch(first.Body)
	if m == nil {
		t.Fatal("no link to the next page")
	}
	second := b.get(html.UnescapeString(m[1]))
	if n := strings.Count(second.Body, `<td data-label="Post">`); n != 2 || !strings.Contains(second.Body, "Post 00") ||
		strings.Contains(second.Body, `rel="next"`) || !strings.Contains(second.Body, "First page") {
		t.Errorf("second page: %d rows\n%s", n, second.Body)
	}
	if r := b.get("/posts?cursor=bogus"); r.Code != 400 {
		t.Errorf("a cursor this server did not hand out: %d", r.Code)
	}
}
