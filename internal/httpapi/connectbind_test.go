package httpapi_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// newBrowser is a client that keeps cookies as a browser does and shows every answer (it
// follows no redirect by itself).
func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// visit GETs link with c and answers the status, body, Location and cookies set.
func visit(t *testing.T, c *http.Client, link string) (int, string, string, []*http.Cookie) {
	t.Helper()
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location"), resp.Cookies()
}

// toCallback follows link in c's browser through reelay's start page and the simulator's
// consent page, and stops before the callback: it answers the callback URL the platform sent
// the browser to.
func toCallback(t *testing.T, c *http.Client, link, platform string) string {
	t.Helper()
	for range 5 {
		code, body, loc, _ := visit(t, c, link)
		if loc == "" {
			t.Fatalf("%s stopped at %s: %d %s", platform, link, code, body)
		}
		next, err := url.Parse(link)
		if err == nil {
			next, err = next.Parse(loc)
		}
		if err != nil {
			t.Fatal(err)
		}
		link = next.String()
		if next.Path == "/api/v1/oauth/"+platform+"/callback" {
			return link
		}
	}
	t.Fatalf("%s: no callback after 5 redirects", platform)
	return ""
}

// A consent link is bound to the browser that opened it: the platform's answer (code and
// state) brought to the callback by another browser, or by one without cookies, connects
// nothing and leaves the consent for the right browser, which then finishes it.
func TestConsentIsBoundToItsBrowser(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		for _, p := range []string{"youtube", "reddit"} {
			r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/" + p + "?sandbox=true&project_id=" + e.a.ProjectID, Key: e.a.Key})
			if r.Code != http.StatusOK {
				t.Fatalf("%s connect: %d %s", p, r.Code, r.Body)
			}
			rightful := newBrowser(t)
			callback := toCallback(t, rightful, r.JSON["url"].(string), p)

			for name, c := range map[string]*http.Client{"another browser": newBrowser(t), "no cookies": {
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}} {
				code, page, loc, _ := visit(t, c, callback)
				if code != http.StatusForbidden || loc != "" || !strings.Contains(page, "not started in this browser") {
					t.Errorf("%s, callback from %s: %d %q %s", p, name, code, loc, page)
				}
			}
			if list := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}).JSON["channels"].([]any); len(list) != 0 {
				t.Fatalf("%s: refused callbacks stored %v", p, list)
			}

			code, page, _, cookies := visit(t, rightful, callback)
			if code != http.StatusOK || !strings.Contains(page, "is connected as channel") {
				t.Fatalf("%s, callback from the browser that started: %d %s", p, code, page)
			}
			if len(cookies) != 1 || cookies[0].MaxAge >= 0 {
				t.Errorf("%s: the consent's cookie is not cleared after it: %v", p, cookies)
			}
			cb, _ := url.Parse(callback)
			if left := rightful.Jar.Cookies(cb); len(left) != 0 {
				t.Errorf("%s: cookies left after the consent: %v", p, left)
			}
			if list := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}).JSON["channels"].([]any); len(list) != 1 {
				t.Fatalf("%s: %d channels after the consent, want 1", p, len(list))
			}
			// The channel is deleted so that the next platform's count starts at zero.
			id := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}).JSON["channels"].([]any)[0].(map[string]any)["id"].(string)
			if d := e.do(req{Method: "DELETE", Path: "/api/v1/channels/" + id, Key: e.a.Key}); d.Code >= 300 {
				t.Fatalf("delete: %d %s", d.Code, d.Body)
			}
		}
	})
}

// The start page sets the consent's cookie, scoped to the platform's start page and callback and
// unreadable by scripts,
// and sends the browser only to the platform's consent page that reelay built for the state;
// a link it cannot start answers a page, sets no cookie and redirects nowhere.
func TestConsentStartPage(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	link := func(p string) string {
		r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/" + p + "?sandbox=true", Key: e.a.Key})
		if r.Code != http.StatusOK {
			t.Fatalf("connect: %d %s", r.Code, r.Body)
		}
		return r.JSON["url"].(string)
	}

	start := link("tiktok")
	u, _ := url.Parse(start)
	state := u.Query().Get("state")
	if u.Path != "/api/v1/oauth/tiktok/start" || !strings.HasPrefix(start, e.cfg.PublicURL) || state == "" {
		t.Fatalf("the answered link is not reelay's start page: %s", start)
	}
	// A link checker's HEAD binds nothing.
	if resp, err := http.Head(start); err != nil || resp.StatusCode != http.StatusMethodNotAllowed || len(resp.Cookies()) != 0 {
		t.Fatalf("HEAD: %v %v", resp, err)
	}
	b := newBrowser(t)
	// Parameters added to the link change nothing of where it leads.
	code, _, loc, cookies := visit(t, b, start+"&redirect_uri=https://evil.test/&next=https://evil.test/")
	consent, _ := url.Parse(loc)
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, e.cfg.PublicURL+"/sandbox/tiktok/v2/auth/authorize/?") ||
		consent.Query().Get("state") != state || consent.Query().Get("redirect_uri") != e.cfg.PublicURL+"/api/v1/oauth/tiktok/callback" {
		t.Fatalf("start: %d to %q", code, loc)
	}
	if len(cookies) != 1 {
		t.Fatalf("start set %d cookies", len(cookies))
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/api/v1/oauth/tiktok/" || c.Secure ||
		c.MaxAge <= 0 || c.MaxAge > 15*60 || strings.Contains(c.Value, state) || strings.Contains(state, c.Value) {
		t.Errorf("cookie %+v", c)
	}
	// The same browser may open the link again (a reload) and keeps its cookie.
	if code, _, loc2, again := visit(t, b, start); code != http.StatusSeeOther || loc2 != loc || len(again) != 1 || again[0].Value != c.Value {
		t.Errorf("start again in the same browser: %d %q %v", code, loc2, again)
	}

	youtube := link("youtube")
	for name, tc := range map[string]struct {
		link string
		code int
		says string
	}{
		"opened in another browser": {start, http.StatusForbidden, "already opened in another browser"},
		"forged state":              {e.cfg.PublicURL + "/api/v1/oauth/tiktok/start?state=forged.state", http.StatusBadRequest, "not issued by this server"},
		"no state":                  {e.cfg.PublicURL + "/api/v1/oauth/tiktok/start", http.StatusBadRequest, "not issued by this server"},
		"another platform's path":   {strings.Replace(youtube, "/oauth/youtube/", "/oauth/tiktok/", 1), http.StatusBadRequest, "expired or was already used"},
	} {
		code, page, loc, cookies := visit(t, newBrowser(t), tc.link)
		if code != tc.code || loc != "" || len(cookies) != 0 || !strings.Contains(page, tc.says) {
			t.Errorf("%s: %d %q %v %s", name, code, loc, cookies, page)
		}
	}
	// Once spent, the link starts nothing, not even in its own browser.
	if code, page, _ := browseIn(t, b, loc); code != http.StatusOK {
		t.Fatalf("consent: %d %s", code, page)
	}
	if code, page, loc, cookies := visit(t, b, start); code != http.StatusBadRequest || loc != "" || len(cookies) != 0 || !strings.Contains(page, "expired or was already used") {
		t.Errorf("spent link: %d %q %v %s", code, loc, cookies, page)
	}
	if code, _, _, _ := visit(t, newBrowser(t), e.cfg.PublicURL+"/api/v1/oauth/telegram/start?state=x.y"); code != http.StatusNotFound {
		t.Errorf("start of a token platform: %d", code)
	}
}
