package web_test

import (
	"bytes"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// env is a whole reelay process (API, dashboard, workers, simulators) behind a real listener
// on a fresh database, with two accounts.
type env struct {
	t   *testing.T
	url string
	st  *store.Store
	// skew moves the dashboard's clock ahead of the real one.
	skew *atomic.Int64
	logs *apptest.SyncBuffer
	a, b tenant
}

// tenant is an account with its first key, named "first".
type tenant = apptest.Tenant

func newEnv(t *testing.T, d store.Dialect, tune ...func(*config.Config)) *env {
	t.Helper()
	st := storetest.New(t, d)
	logs := &apptest.SyncBuffer{}
	skew := new(atomic.Int64)
	srv := apptest.Start(t, st, apptest.WithConfig(tune...), apptest.WithParams(func(p *app.Params) {
		p.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		p.WebClock = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	}))
	return &env{t: t, url: srv.URL, st: st, skew: skew, logs: logs,
		a: apptest.NewTenant(t, st, "alice", "first"), b: apptest.NewTenant(t, st, "bob", "first")}
}

// browser is a plain HTTP client with cookies that does not follow redirects, so that tests
// see each answer; it sends the Origin a browser would.
type browser struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	Code   int
	Header http.Header
	Body   string
}

func (a answer) location() string { return a.Header.Get("Location") }

func (b *browser) do(method, path string, body io.Reader, header map[string]string) answer {
	b.e.t.Helper()
	req, err := http.NewRequest(method, b.e.url+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", b.e.url)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{Code: res.StatusCode, Header: res.Header, Body: string(raw)}
}

func (b *browser) get(path string) answer { return b.do(http.MethodGet, path, nil, nil) }

// fetch GETs an absolute URL (another host, such as an identity provider).
func (b *browser) fetch(rawURL string) answer {
	b.e.t.Helper()
	res, err := b.c.Get(rawURL)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{Code: res.StatusCode, Header: res.Header, Body: string(raw)}
}

// post sends a form as a browser does; the session's CSRF token is added unless the form has
// a csrf_token already (even an empty one).
func (b *browser) post(path string, form url.Values, header map[string]string) answer {
	b.e.t.Helper()
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", b.csrf)
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		h[k] = v
	}
	return b.do(http.MethodPost, path, strings.NewReader(form.Encode()), h)
}

var tokenPattern = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// formToken reads the CSRF token of the first form of a page.
func formToken(t *testing.T, page string) string {
	t.Helper()
	m := tokenPattern.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf_token in the page:\n%s", page)
	}
	return m[1]
}

// signIn signs in with key and remembers the session's CSRF token.
func (b *browser) signIn(key string) answer {
	b.e.t.Helper()
	page := b.get("/signin")
	res := b.post("/signin", url.Values{"csrf_token": {formToken(b.e.t, page.Body)}, "api_key": {key}}, nil)
	if res.Code == http.StatusSeeOther {
		b.csrf = formToken(b.e.t, b.get("/keys").Body)
	}
	return res
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.e.url)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// multipartForm builds a multipart body; files are (field, name, bytes).
func multipartForm(t *testing.T, fields [][2]string, files ...fileField) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		mw.WriteField(f[0], f[1])
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f.field, f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.data)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

type fileField struct {
	field, name string
	data        []byte
}
