package reddit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// client calls Reddit's OAuth API with one access token. The token travels in the
// Authorization header only.
type client struct {
	p     *Provider
	base  string
	token string
}

// apiError is an answer of Reddit's API with a status other than 2xx:
// {"message":"Unauthorized","error":401} and its variants, or a page that is not JSON.
type apiError struct {
	status  int
	header  http.Header
	message string
	reason  string
	raw     string
}

func (e *apiError) Error() string {
	msg := e.message
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	if e.reason != "" {
		msg += " (" + e.reason + ")"
	}
	if e.raw != "" && e.message == "" {
		msg += ": " + e.raw
	}
	return fmt.Sprintf("HTTP %d %s", e.status, msg)
}

// fieldError is one entry of json.errors: [code, message, field].
type fieldError struct {
	Code, Message, Field string
}

func (e fieldError) String() string {
	s := e.Code + ": " + e.Message
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// submitErrors is a 200 answer whose json.errors is not empty.
type submitErrors []fieldError

func (e submitErrors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.String()
	}
	return strings.Join(parts, "; ")
}

func (c client) get(ctx context.Context, path string, q url.Values, out any) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set("raw_json", "1")
	// A GET: asking again changes nothing.
	return c.p.cfg.Repeat.Do(ctx, readAs("GET "+path), func() error { return c.do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, out) })
}

func (c client) post(ctx context.Context, path string, form url.Values, out any) error {
	return c.do(ctx, http.MethodPost, path+"?raw_json=1", form, out)
}

// do sends one API request and decodes a 2xx answer into out. Failures are *apiError
// (Reddit answered) or a transient *provider.Error (the call did not complete).
func (c client) do(ctx context.Context, method, pathQuery string, form url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.APITimeout)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+pathQuery, body)
	if err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "Reddit: building %s %s: %v", method, pathQuery, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Authorization", "bearer "+c.token)
	req.Header.Set("User-Agent", c.p.cfg.UserAgent)
	req.Header.Set("Accept", "application/json")
	path, _, _ := strings.Cut(pathQuery, "?")
	what := "Reddit: " + method + " " + path
	resp, raw, err := provider.Answer(c.p.cfg.HTTPClient, req, 4<<20, what)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		ae := &apiError{status: resp.StatusCode, header: resp.Header}
		var e struct {
			Message string `json:"message"`
			Reason  string `json:"reason"`
		}
		if json.Unmarshal(raw, &e) == nil && (e.Message != "" || e.Reason != "") {
			ae.message, ae.reason = e.Message, e.Reason
		} else {
			ae.raw = provider.Excerpt(raw, 300)
		}
		return ae
	}
	return provider.Decode(resp, raw, out, what)
}

// classify turns a failed call into a *provider.Error; what names the call for the message.
func classify(err error, what string) *provider.Error {
	var ae *apiError
	if !errors.As(err, &ae) {
		var se submitErrors
		if errors.As(err, &se) {
			return classifySubmit(se, "")
		}
		return provider.AsError(err)
	}
	msg := "Reddit " + what + ": " + ae.Error()
	switch {
	case ae.status == http.StatusUnauthorized:
		return provider.Permanent(provider.CategoryAuthExpired, ae.status, "%s; the channel must be reconnected", msg)
	case ae.status == http.StatusForbidden:
		// The token lacks a scope (identity, submit, read, mysubreddits) or the account is
		// suspended: connecting again is what fixes it.
		return provider.Permanent(provider.CategoryAuthExpired, ae.status, "%s", msg)
	case ae.status == http.StatusNotFound:
		// The post or community named is not there (deleted, removed, mistyped).
		return provider.Permanent(provider.CategoryInvalidOptions, ae.status, "%s", msg)
	case ae.status == http.StatusTooManyRequests:
		return provider.Transient(provider.CategoryRateLimited, ae.status, retryAfter(ae.header), "%s", msg)
	case ae.status >= 500 || ae.status == http.StatusRequestTimeout:
		return provider.Transient(provider.CategoryUpstreamUnavailable, ae.status, 0, "%s", msg)
	}
	return provider.Permanent(provider.CategoryInternal, ae.status, "%s", msg)
}

// readAs is classify for provider.Repeat, what naming the call.
func readAs(what string) func(error) *provider.Error {
	return func(err error) *provider.Error { return classify(err, what) }
}

// classifySubmit classifies json.errors of /api/submit: everything about the community, the
// title or the flair is a bad option naming the subreddit.
func classifySubmit(errs submitErrors, subreddit string) *provider.Error {
	where := ""
	if subreddit != "" {
		where = " to r/" + subreddit
	}
	msg := "Reddit refused the post" + where + ": " + errs.Error()
	for _, e := range errs {
		switch {
		case e.Code == "USER_REQUIRED" || e.Code == "NOT_AUTHORIZED":
			return provider.Permanent(provider.CategoryAuthExpired, http.StatusOK, "%s", msg)
		case e.Code == "RATELIMIT":
			// "you are doing that too much. try again in 5 minutes."
			return provider.Transient(provider.CategoryRateLimited, http.StatusOK, cooldown(e.Message), "%s", msg)
		}
	}
	for _, e := range errs {
		if e.Field == "url" || e.Field == "video_poster_url" {
			return provider.Permanent(provider.CategoryInternal, http.StatusOK, "%s", msg)
		}
	}
	return provider.Permanent(provider.CategoryInvalidOptions, http.StatusOK, "%s", msg)
}

// cooldown reads the wait of a RATELIMIT message ("try again in 5 minutes", "... 30
// seconds"); a minute when it says none.
func cooldown(msg string) time.Duration {
	f := strings.Fields(strings.ToLower(msg))
	for i := 0; i+1 < len(f); i++ {
		n, err := strconv.Atoi(f[i])
		if err != nil || n <= 0 {
			continue
		}
		switch {
		case strings.HasPrefix(f[i+1], "second"):
			return time.Duration(n) * time.Second
		case strings.HasPrefix(f[i+1], "minute"):
			return time.Duration(n) * time.Minute
		case strings.HasPrefix(f[i+1], "hour"):
			return time.Duration(n) * time.Hour
		}
	}
	return time.Minute
}

// retryAfter is how long a 429 asks to wait: Retry-After when given, else the seconds until
// the rate-limit window resets (X-Ratelimit-Reset), else a minute.
func retryAfter(h http.Header) time.Duration {
	for _, name := range []string{"Retry-After", "X-Ratelimit-Reset"} {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
				return max(time.Duration(f*float64(time.Second)), time.Second)
			}
		}
	}
	return time.Minute
}

// me is GET /api/v1/me.
type me struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	IconImg string `json:"icon_img"`
	Snoo    string `json:"snoovatar_img"`
}

func (c client) me(ctx context.Context) (me, error) {
	var m me
	if err := c.get(ctx, "/api/v1/me", nil, &m); err != nil {
		return me{}, err
	}
	if m.Name == "" || m.ID == "" {
		return me{}, provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0, "Reddit: /api/v1/me answered without a name and id")
	}
	return m, nil
}

// subreddit is the data of a t5 thing.
type subreddit struct {
	DisplayName    string `json:"display_name"`
	Name           string `json:"name"`
	Title          string `json:"title"`
	Over18         bool   `json:"over18"`
	AllowVideos    bool   `json:"allow_videos"`
	SubmissionType string `json:"submission_type"`
	SubredditType  string `json:"subreddit_type"`
}

func (c client) about(ctx context.Context, sr string) (subreddit, error) {
	var t struct {
		Kind string    `json:"kind"`
		Data subreddit `json:"data"`
	}
	if err := c.get(ctx, "/r/"+url.PathEscape(sr)+"/about", nil, &t); err != nil {
		return subreddit{}, err
	}
	if t.Kind != "t5" || t.Data.DisplayName == "" {
		// Reddit answers a search listing instead of a t5 for names it does not know.
		return subreddit{}, &apiError{status: http.StatusNotFound, message: "Not Found"}
	}
	return t.Data, nil
}

// requirements is GET /api/v1/{subreddit}/post_requirements.
type requirements struct {
	IsFlairRequired bool     `json:"is_flair_required"`
	TitleMin        *int     `json:"title_text_min_length"`
	TitleMax        *int     `json:"title_text_max_length"`
	TitleRequired   []string `json:"title_required_strings"`
	TitleBlacklist  []string `json:"title_blacklisted_strings"`
	Guidelines      *string  `json:"guidelines_text"`
}

func (c client) requirements(ctx context.Context, sr string) (requirements, error) {
	var r requirements
	err := c.get(ctx, "/api/v1/"+url.PathEscape(sr)+"/post_requirements", nil, &r)
	return r, err
}

// flair is one template of GET /r/{subreddit}/api/link_flair_v2.
type flair struct {
	ID           string `json:"id"`
	Text         string `json:"text"`
	TextEditable bool   `json:"text_editable"`
	ModOnly      bool   `json:"mod_only"`
}

func (c client) flairs(ctx context.Context, sr string) ([]flair, error) {
	var f []flair
	err := c.get(ctx, "/r/"+url.PathEscape(sr)+"/api/link_flair_v2", nil, &f)
	return f, err
}

// listing is a Listing of things whose data is T.
type listing[T any] struct {
	Data struct {
		After    *string `json:"after"`
		Children []struct {
			Kind string `json:"kind"`
			Data T      `json:"data"`
		} `json:"children"`
	} `json:"data"`
}

// post is the data of a t3 thing, as much as reelay reads.
type post struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	Permalink string `json:"permalink"`
	Subreddit string `json:"subreddit"`
}

// submitted lists the newest posts of a user (GET /user/{name}/submitted?sort=new).
func (c client) submitted(ctx context.Context, user string) ([]post, error) {
	var l listing[post]
	q := url.Values{"sort": {"new"}, "limit": {"100"}}
	if err := c.get(ctx, "/user/"+url.PathEscape(user)+"/submitted", q, &l); err != nil {
		return nil, err
	}
	out := make([]post, 0, len(l.Data.Children))
	for _, ch := range l.Data.Children {
		out = append(out, ch.Data)
	}
	return out, nil
}

// submitData is the data of a successful /api/submit of a video.
type submitData struct {
	UserSubmittedPage string `json:"user_submitted_page"`
	WebsocketURL      string `json:"websocket_url"`
}

// submit POSTs /api/submit; a 200 with json.errors is a submitErrors.
func (c client) submit(ctx context.Context, form url.Values) (submitData, error) {
	var out struct {
		JSON struct {
			Errors [][]any    `json:"errors"`
			Data   submitData `json:"data"`
		} `json:"json"`
	}
	if err := c.post(ctx, "/api/submit", form, &out); err != nil {
		return submitData{}, err
	}
	if len(out.JSON.Errors) > 0 {
		return submitData{}, jsonErrors(out.JSON.Errors)
	}
	return out.JSON.Data, nil
}

// jsonErrors reads json.errors, a list of [code, message, field].
func jsonErrors(raw [][]any) submitErrors {
	errs := make(submitErrors, 0, len(raw))
	for _, e := range raw {
		var fe fieldError
		for i, v := range e {
			s, _ := v.(string)
			switch i {
			case 0:
				fe.Code = s
			case 1:
				fe.Message = s
			case 2:
				fe.Field = s
			}
		}
		errs = append(errs, fe)
	}
	return errs
}
