package videogen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/videogen/videogentest"
)

// fakeSleep records the waits Wait asks for and returns at once, so that back-off is checked
// by what was asked, not by the clock.
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

// newClient returns a client of srv whose polls do not wait, and the record of its waits.
func newClient(t *testing.T, srv *videogentest.Server, cfg Config) (*Client, *fakeSleep) {
	t.Helper()
	if cfg.TextURL == "" {
		cfg.TextURL = srv.TextURL()
	}
	if cfg.APIKey == "" {
		cfg.APIKey = srv.Key
	}
	if cfg.PollInitial == 0 {
		cfg.PollInitial, cfg.PollMax = time.Millisecond, 4*time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSleep{}
	c.sleep = fs.sleep
	return c, fs
}

func generate(t *testing.T, c *Client, req Request) (string, error) {
	t.Helper()
	job, err := c.Submit(context.Background(), "", req)
	if err != nil {
		return "", err
	}
	return c.Wait(context.Background(), "", job)
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name          string
		imageModel    bool // configure ImageURL
		req           Request
		path          string
		input         map[string]any
		width, height int
	}{
		{"text, default aspect", false, Request{Prompt: "a cat surfing"}, videogentest.TextPath,
			map[string]any{"prompt": "a cat surfing", "aspect_ratio": "9:16", "duration": "5"}, 1080, 1920},
		{"text, 16:9", false, Request{Prompt: "a cat surfing", AspectRatio: "16:9"}, videogentest.TextPath,
			map[string]any{"prompt": "a cat surfing", "aspect_ratio": "16:9", "duration": "5"}, 1920, 1080},
		{"image to the image model", true, Request{Prompt: "make it move", ImageURL: "https://example.com/cat.png", AspectRatio: "9:16"},
			videogentest.ImagePath,
			map[string]any{"prompt": "make it move", "aspect_ratio": "9:16", "duration": "5", "image_url": "https://example.com/cat.png"}, 1080, 1920},
		{"image without an image model", false, Request{Prompt: "make it move", ImageURL: "https://example.com/cat.png", AspectRatio: "16:9"},
			videogentest.TextPath,
			map[string]any{"prompt": "make it move", "aspect_ratio": "16:9", "duration": "5", "image_url": "https://example.com/cat.png"}, 1920, 1080},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := videogentest.NewServer(t)
			cfg := Config{}
			if tt.imageModel {
				cfg.ImageURL = srv.ImageURL()
			}
			c, _ := newClient(t, srv, cfg)
			videoURL, err := generate(t, c, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			subs := srv.Submits()
			if len(subs) != 1 {
				t.Fatalf("%d submits, want 1", len(subs))
			}
			if subs[0].URL != tt.path || !reflect.DeepEqual(subs[0].Input, tt.input) {
				t.Errorf("submitted %v to %s, want %v to %s", subs[0].Input, subs[0].URL, tt.input, tt.path)
			}
			info := probe(t, videoURL)
			if info.Width != tt.width || info.Height != tt.height || info.Duration != 5*time.Second {
				t.Errorf("video is %dx%d for %s, want %dx%d for 5s", info.Width, info.Height, info.Duration, tt.width, tt.height)
			}
		})
	}
}

// probe downloads a video and reads its format.
func probe(t *testing.T, videoURL string) media.Info {
	t.Helper()
	resp, err := http.Get(videoURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("downloading the video: %d %v", resp.StatusCode, err)
	}
	info, err := media.Probe(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestBackoff(t *testing.T) {
	srv := videogentest.NewServer(t, videogentest.WithPolls(3, 3))
	c, fs := newClient(t, srv, Config{PollInitial: time.Millisecond, PollMax: 4 * time.Millisecond})
	if _, err := generate(t, c, Request{Prompt: "waves"}); err != nil {
		t.Fatal(err)
	}
	// Three polls IN_QUEUE, three IN_PROGRESS, the seventh COMPLETED: no poll more, none less.
	ms := time.Millisecond
	if want := []time.Duration{ms, 2 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms}; !reflect.DeepEqual(fs.waits, want) {
		t.Errorf("waits %v, want %v", fs.waits, want)
	}
	if n := srv.StatusPolls(); n != 7 {
		t.Errorf("%d status polls, want 7", n)
	}

	d, _ := New(Config{TextURL: srv.TextURL()})
	if d.pollInitial != DefaultPollInitial || d.pollMax != DefaultPollMax || d.timeout != DefaultTimeout || d.http.Timeout != 30*time.Second {
		t.Errorf("defaults: %s %s %s %s", d.pollInitial, d.pollMax, d.timeout, d.http.Timeout)
	}
}

// TestRateLimitedWhileWaiting: a 429 on a poll or on the result is waited out as Retry-After
// says, and the wait goes on; nothing is submitted again.
func TestRateLimitedWhileWaiting(t *testing.T) {
	for _, tt := range []struct {
		name  string
		opts  []videogentest.Option
		limit int // the call answered 429 (the submit is call 1)
		wait  int // the wait after it (none comes between a COMPLETED status and the result)
	}{
		{"status poll", []videogentest.Option{videogentest.WithPolls(1, 1)}, 2, 1},
		{"result", []videogentest.Option{videogentest.WithPolls(0, 0)}, 3, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := videogentest.NewServer(t, append(tt.opts, videogentest.RateLimit(tt.limit, 3*time.Second))...)
			c, fs := newClient(t, srv, Config{})
			if _, err := generate(t, c, Request{Prompt: "rain"}); err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls()
			if calls[tt.limit-1].Status != http.StatusTooManyRequests || len(srv.Submits()) != 1 {
				t.Fatalf("calls %+v", calls)
			}
			if w := fs.waits[tt.wait]; w < 3*time.Second {
				t.Errorf("waited %s after a 429 with Retry-After: 3, waits %v", w, fs.waits)
			}
		})
	}
}

// TestResume: a job saved after Submit is waited on by a new client (as after a restart),
// without a second submit; a job of which only the id was kept works too.
func TestResume(t *testing.T) {
	srv := videogentest.NewServer(t)
	c1, _ := newClient(t, srv, Config{})
	job, err := c1.Submit(context.Background(), "", Request{Prompt: "sunrise"})
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := json.Marshal(job)
	for _, tt := range []struct {
		name string
		job  func() Job
	}{
		{"saved job", func() Job { var j Job; _ = json.Unmarshal(saved, &j); return j }},
		{"id only", func() Job { return Job{RequestID: job.RequestID} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c2, _ := newClient(t, srv, Config{})
			if _, err := c2.Wait(context.Background(), "", tt.job()); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Submits()); n != 1 {
				t.Errorf("%d submits, want 1", n)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    []videogentest.Option
		cfg     Config
		req     Request
		waitKey string // the key Wait is called with
		kind    ErrorKind
		status  int
		message string
		retry   time.Duration
	}{
		{name: "bad key", cfg: Config{APIKey: "wrong"}, kind: KeyRefused, status: 401, message: "Authorization: Key"},
		{name: "key refused while waiting", waitKey: "revoked", kind: KeyRefused, status: 401},
		{name: "empty prompt", req: Request{Prompt: "", AspectRatio: "9:16"}, kind: InputRefused, status: 422,
			message: "prompt: String should have at least 1 character"},
		{name: "bad aspect and image", req: Request{Prompt: "x", AspectRatio: "4:3", ImageURL: "file:///etc/passwd"}, kind: InputRefused, status: 422,
			message: "aspect_ratio: Input should be '16:9', '9:16' or '1:1'; image_url: Input should be a valid URL"},
		{name: "submit rate limited", opts: []videogentest.Option{videogentest.RateLimit(1, 2*time.Second)},
			kind: RateLimited, status: 429, message: "Rate limit exceeded", retry: 2 * time.Second},
		{name: "submit fails", opts: []videogentest.Option{videogentest.FailSubmit()}, kind: Failed, status: 500, message: "Internal Server Error"},
		{name: "model fails", opts: []videogentest.Option{videogentest.FailModel(500, "GPU ran out of memory")},
			kind: Failed, status: 500, message: "GPU ran out of memory"},
		{name: "model refuses the input", opts: []videogentest.Option{videogentest.FailModel(422, "the image could not be downloaded")},
			kind: InputRefused, status: 422, message: "the image could not be downloaded"},
		{name: "never completes", opts: []videogentest.Option{videogentest.NeverComplete()},
			cfg: Config{Timeout: 50 * time.Millisecond}, kind: Timeout, message: "no answer within 50ms"},
		{name: "foreign status URL", opts: []videogentest.Option{videogentest.ForeignURLs("https://collector.example")},
			kind: Failed, message: "on collector.example, not on the model's 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := videogentest.NewServer(t, tt.opts...)
			c, _ := newClient(t, srv, tt.cfg)
			if tt.kind == Timeout {
				c.sleep = sleep // the bound is real time
			}
			if tt.req == (Request{}) {
				tt.req.Prompt = "a dog on a skateboard"
			}
			job, err := c.Submit(context.Background(), "", tt.req)
			if err == nil {
				_, err = c.Wait(context.Background(), tt.waitKey, job)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if e.Kind != tt.kind || e.Status != tt.status || !strings.Contains(e.Message, tt.message) || e.RetryAfter != tt.retry {
				t.Errorf("got %#v (%v), want kind %s, status %d, message with %q, retry after %s", e, e, tt.kind, tt.status, tt.message, tt.retry)
			}
			if n := len(srv.Submits()); n != 1 {
				t.Errorf("%d submits, want 1", n)
			}
		})
	}
}

// TestParentCancelled: the caller's own cancellation is its ctx's error, not a provider Error.
func TestParentCancelled(t *testing.T) {
	srv := videogentest.NewServer(t, videogentest.NeverComplete())
	c, _ := newClient(t, srv, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	c.sleep = func(ctx context.Context, d time.Duration) error {
		if polls++; polls == 3 {
			cancel()
		}
		return ctx.Err()
	}
	job, err := c.Submit(ctx, "", Request{Prompt: "clouds"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Wait(ctx, "", job)
	var e *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &e) {
		t.Errorf("error %v, want context.Canceled wrapped", err)
	}
}

// TestWaitRetriesFailedPolls: a status endpoint that fails now and then does not lose the video;
// one that keeps failing ends the wait after a bounded number of polls.
func TestWaitRetriesFailedPolls(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fails int
		ok    bool
	}{{"two failures", 2, true}, {"failing for ever", 1000, false}} {
		t.Run(tt.name, func(t *testing.T) {
			var polls atomic.Int32
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/status") && int(polls.Add(1)) <= tt.fails:
					w.WriteHeader(http.StatusBadGateway)
				case strings.HasSuffix(r.URL.Path, "/status"):
					_, _ = io.WriteString(w, `{"status":"COMPLETED"}`)
				default:
					_, _ = io.WriteString(w, `{"video":{"url":"https://cdn.example/v.mp4"}}`)
				}
			}))
			defer ts.Close()
			c, _ := newClient(t, nil, Config{TextURL: ts.URL + "/owner/app", APIKey: "k"})
			got, err := c.Wait(context.Background(), "", Job{RequestID: "r1"})
			if tt.ok && (err != nil || got != "https://cdn.example/v.mp4") {
				t.Errorf("got %q, %v", got, err)
			}
			if !tt.ok {
				var e *Error
				if !errors.As(err, &e) || e.Kind != Failed || e.Status != http.StatusBadGateway {
					t.Errorf("error %v, want Failed 502", err)
				}
				if n := polls.Load(); n != maxFailures+1 {
					t.Errorf("%d polls, want %d", n, maxFailures+1)
				}
			}
		})
	}
}

// TestMalformedAnswers: answers that are not the protocol's are Failed, never a success.
func TestMalformedAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, status, result, message string
	}{
		{"failed status", `{"status":"FAILED"}`, "", `the request ended "FAILED"`},
		{"cancelled status", `{"status":"CANCELED"}`, "", `the request ended "CANCELED"`},
		{"status not JSON", `<html>gateway</html>`, "", "not JSON"},
		{"completed with an error", `{"status":"COMPLETED","error":"NSFW content detected","error_type":"content_policy"}`,
			`{"video":{"url":"https://cdn.example/v.mp4"}}`, "NSFW content detected (content_policy)"},
		{"no video", `{"status":"COMPLETED"}`, `{"images":[]}`, "no video URL"},
		{"video URL not http", `{"status":"COMPLETED"}`, `{"video":{"url":"javascript:alert(1)"}}`, "no video URL"},
		{"oversized answer", `{"status":"COMPLETED"}`, `{"video":{"url":"https://cdn.example/v.mp4"},"x":"` + strings.Repeat("a", 1<<20) + `"}`, "larger than 1 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/status") {
					_, _ = io.WriteString(w, tt.status)
				} else {
					_, _ = io.WriteString(w, tt.result)
				}
			}))
			defer ts.Close()
			c, _ := newClient(t, nil, Config{TextURL: ts.URL + "/owner/app/sub", APIKey: "k"})
			got, err := c.Wait(context.Background(), "", Job{RequestID: "r1"})
			var e *Error
			if !errors.As(err, &e) || e.Kind != Failed || !strings.Contains(e.Message, tt.message) {
				t.Errorf("got %q, %v; want Failed with %q", got, err, tt.message)
			}
		})
	}
}

func TestRequestsURL(t *testing.T) {
	for model, want := range map[string]string{
		"https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video":  "https://queue.fal.run/fal-ai/kling-video/requests/ab-12",
		"https://queue.fal.run/fal-ai/kling-video/v2/master/image-to-video": "https://queue.fal.run/fal-ai/kling-video/requests/ab-12",
		"https://queue.fal.run/fal-ai/flux/dev":                             "https://queue.fal.run/fal-ai/flux/requests/ab-12",
		"https://queue.fal.run/fal-ai/fast-sdxl/":                           "https://queue.fal.run/fal-ai/fast-sdxl/requests/ab-12",
		"http://localhost:8080/solo?x=1":                                    "http://localhost:8080/solo/requests/ab-12",
	} {
		u, _ := url.Parse(model)
		if got := requestsURL(u, "ab-12"); got != want {
			t.Errorf("%s: %s, want %s", model, got, want)
		}
	}
}

// TestDerivedURLs: a provider that answers only a request id is polled where fal keeps it.
func TestDerivedURLs(t *testing.T) {
	srv := videogentest.NewServer(t, videogentest.OmitURLs())
	c, _ := newClient(t, srv, Config{ImageURL: srv.ImageURL()})
	job, err := c.Submit(context.Background(), "", Request{Prompt: "a kite", ImageURL: "https://example.com/kite.jpg"})
	if err != nil {
		t.Fatal(err)
	}
	base := srv.URL + "/fal-ai/kling-video/requests/" + job.RequestID
	if job.StatusURL != base+"/status" || job.ResponseURL != base {
		t.Errorf("job %+v, want URLs under %s", job, base)
	}
	if _, err := c.Wait(context.Background(), "", job); err != nil {
		t.Fatal(err)
	}
}

// TestForeignJob: a stored job whose URLs leave the model's origin is not followed.
func TestForeignJob(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer other.Close()
	srv := videogentest.NewServer(t)
	c, _ := newClient(t, srv, Config{})
	same := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) // same address, another host name
	for name, job := range map[string]Job{
		"other server":    {RequestID: "r", StatusURL: other.URL + "/fal-ai/kling-video/requests/r/status"},
		"other response":  {RequestID: "r", StatusURL: srv.URL + "/a/b/requests/r/status", ResponseURL: other.URL + "/r"},
		"other host name": {RequestID: "r", StatusURL: same + "/fal-ai/kling-video/requests/r/status"},
		"https downgrade": {RequestID: "r", StatusURL: "https" + strings.TrimPrefix(srv.URL, "http") + "/a/b/requests/r/status"},
		"not http":        {RequestID: "r", StatusURL: "ftp://127.0.0.1/a/b/requests/r/status"},
		"relative":        {RequestID: "r", StatusURL: "/fal-ai/kling-video/requests/r/status"},
	} {
		_, err := c.Wait(context.Background(), "", job)
		var e *Error
		if !errors.As(err, &e) || e.Kind != Failed {
			t.Errorf("%s: error %v, want Failed", name, err)
		}
	}
	if hits.Load() != 0 || srv.StatusPolls() != 0 {
		t.Errorf("%d calls to the other server, %d polls", hits.Load(), srv.StatusPolls())
	}
}

// TestKeyNeverLeaks: neither the configured key nor a call's own key appears in a log line, an
// error or a URL, even when the provider echoes the key in its error.
func TestKeyNeverLeaks(t *testing.T) {
	const callKey, cfgKey = "sk-call-5f0c7d1e9a", "sk-config-77aa31b2"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var errs []string
	for _, opts := range [][]videogentest.Option{
		{videogentest.WithKey(callKey), videogentest.RateLimit(2, time.Second)},
		{videogentest.WithKey(callKey), videogentest.FailModel(500, "refused header Authorization: Key "+callKey+" and "+cfgKey)},
		{videogentest.WithKey(callKey), videogentest.ForeignURLs("https://" + callKey + ".example")},
	} {
		srv := videogentest.NewServer(t, opts...)
		c, _ := newClient(t, srv, Config{APIKey: cfgKey, Logger: logger})
		job, err := c.Submit(context.Background(), callKey, Request{Prompt: "a secret"})
		if err == nil {
			_, err = c.Wait(context.Background(), callKey, job)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
		if _, err := c.Submit(context.Background(), "", Request{Prompt: "with the wrong key"}); err != nil {
			errs = append(errs, err.Error())
		}
		for _, call := range srv.Calls() {
			if strings.Contains(call.URL, callKey) || strings.Contains(call.URL, cfgKey) {
				t.Errorf("key in URL %s", call.URL)
			}
		}
	}
	if len(errs) != 5 || !strings.Contains(strings.Join(errs, "\n"), "[redacted]") {
		t.Fatalf("errors %q: want five, one redacted", errs)
	}
	for _, s := range append(errs, logs.String()) {
		if strings.Contains(s, callKey) || strings.Contains(s, cfgKey) {
			t.Errorf("a key leaked: %s", s)
		}
	}
	if !strings.Contains(logs.String(), "video generation status") {
		t.Errorf("nothing logged at debug level: %s", logs.String())
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cfg      Config
		err      string
		wantName string
	}{
		{"fal", Config{TextURL: "https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video?x=1#f"}, "",
			"queue.fal.run/fal-ai/kling-video/v2/master/text-to-video"},
		{"empty", Config{}, "TextURL must be an absolute http(s) URL", ""},
		{"no scheme", Config{TextURL: "queue.fal.run/fal-ai/x"}, "absolute http(s) URL", ""},
		{"ftp", Config{TextURL: "ftp://queue.fal.run/fal-ai/x"}, "absolute http(s) URL", ""},
		{"no model path", Config{TextURL: "https://queue.fal.run/"}, "names no model", ""},
		{"credentials", Config{TextURL: "https://u:hunter2@queue.fal.run/fal-ai/x"}, "must not carry credentials", ""},
		{"bad image URL", Config{TextURL: "https://queue.fal.run/fal-ai/x", ImageURL: "nope"}, "ImageURL must be", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			switch {
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "hunter2")):
				t.Fatalf("error %v, want one with %q", err, tt.err)
			case tt.err == "" && c.Name() != tt.wantName:
				t.Errorf("Name %q, want %q", c.Name(), tt.wantName)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{Kind: RateLimited, Status: 429, Message: "slow down", RetryAfter: 2 * time.Second}
	if got, want := e.Error(), "video generation rate limited (HTTP 429): slow down; retry after 2s"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := trim(strings.Repeat("é", 400)); len([]rune(got)) != maxMessage+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("trimmed to %d characters", len([]rune(got)))
	}
}

func TestDetailOf(t *testing.T) {
	for body, want := range map[string]string{
		`{"detail":"Request is still in progress"}`:                                        "Request is still in progress",
		`{"detail":[{"loc":["body","prompt"],"msg":"Field required","type":"missing"}]}`:   "prompt: Field required",
		`{"detail":[{"loc":["body","frames",2],"msg":"bad"},{"loc":["body"],"msg":"no"}]}`: "frames.2: bad; no",
		`{"error":"quota exhausted"}`:                                                      "quota exhausted",
		`{"message":"model not found"}`:                                                    "model not found",
		`{"detail":{"code":7}}`:                                                            `{"code":7}`,
		`<html>Bad Gateway</html>`:                                                         "",
		`{}`:                                                                               "",
	} {
		if got := detailOf([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, "-1": 0, "soon": 0,
		time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat): 0} {
		if got := retryAfter(http.Header{"Retry-After": {v}}); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
	future := time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)
	if got := retryAfter(http.Header{"Retry-After": {future}}); got < 50*time.Second || got > time.Minute {
		t.Errorf("an HTTP date a minute ahead: %s", got)
	}
}
