package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/telegram"
	"github.com/reelay/reelay/internal/platform/telegram/telegramsim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	token   = "sbx1.telegram.sbx_0123456789abcdef.testmac"
	account = "sbx_0123456789abcdef"
)

type setup struct {
	behavior sim.Behavior
	rand     func() float64
	simOpts  telegramsim.Options
	cfg      telegram.Config
	// wrap wraps the simulator's handler (to break connections, count requests, ...).
	wrap func(http.Handler) http.Handler
}

func newEnv(t *testing.T, s setup) (*providertest.Env, *telegram.Provider) {
	t.Helper()
	accts := sim.StaticAccounts{token: {ID: account, Username: "Reelay sandbox channel", Behavior: s.behavior}}
	env := providertest.NewEnv(t, "telegram", accts, func(c sim.Config) http.Handler {
		var h http.Handler = telegramsim.NewSim(c, s.simOpts)
		if s.wrap != nil {
			h = s.wrap(h)
		}
		return h
	}, providertest.Options{Rand: s.rand})
	cfg := s.cfg
	cfg.HTTPClient = env.Client
	cfg.Now = env.Clock.Now
	if cfg.Repeat.Delay == 0 {
		cfg.Repeat.Delay = time.Millisecond
	}
	return env, telegram.New(cfg)
}

func creds(env *providertest.Env) map[string]string {
	return sandboxtoken.Credentials("telegram", env.BaseURL, account, token)
}

func dest(env *providertest.Env, v *providertest.Video, options string) *provider.Destination {
	return env.Destination(account, creds(env), v, options)
}

func chatID() int64 { return telegramsim.ChatID(account) }

func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options, caption, title, want string
	}{
		{name: "options caption", options: `{"caption":"From the telegram object <b>not bold</b>"}`, caption: "Common", title: "T", want: "From the telegram object <b>not bold</b>"},
		{name: "post caption", caption: "Common caption #reelay *not markdown*", title: "T", want: "Common caption #reelay *not markdown*"},
		{name: "title only", title: "Only a title", want: "Only a title"},
		{name: "emoji at the limit", options: `{"caption":"` + strings.Repeat("😀", 512) + `"}`, want: strings.Repeat("😀", 512)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{})
			v := providertest.ShortVideo()
			d := dest(env, v, c.options)
			d.Caption, d.Title = c.caption, c.title
			outs, err := env.Run(p, d, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 2 || outs[0].Status != provider.StatusUploading {
				t.Fatalf("outcomes %+v: want arm then publish", outs)
			}
			out := outs[len(outs)-1]
			wantID := fmt.Sprintf("%d:1", chatID())
			if out.Status != provider.StatusPublished || out.ExternalID != wantID || out.URL != "https://t.me/"+account+"/1" {
				t.Fatalf("outcome %+v; want published %s at t.me/%s/1", out, wantID, account)
			}
			if out.Message != "" {
				t.Errorf("message %q; want none", out.Message)
			}
			in := env.Introspect()
			if len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() || in.Uploads[0].Bytes != v.Size() {
				t.Fatalf("uploads %+v; want the video once (%d bytes, %s)", in.Uploads, v.Size(), v.SHA256())
			}
			if len(in.Published) != 1 || in.Published[0].Text != c.want || in.Published[0].ID != wantID || in.Published[0].URL != out.URL {
				t.Fatalf("published %+v; want text %q", in.Published, c.want)
			}
			if n := len(env.Requests(http.MethodPost, "/sendVideo")); n != 1 {
				t.Fatalf("%d sendVideo requests; want 1", n)
			}
			if strings.Contains(string(out.State), token) {
				t.Fatalf("state %s carries the token", out.State)
			}
		})
	}
}

// capture records the parts of each sendVideo request (fields by value, files as "filename
// content-type size" under name+".file") and its Content-Length, passing the body through.
type capture struct {
	mu            sync.Mutex
	fields        map[string]string
	contentLength int64
}

func (c *capture) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/sendVideo") {
			h.ServeHTTP(w, r)
			return
		}
		pr, pw := io.Pipe()
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(io.TeeReader(r.Body, pw))
		mr := httptest.NewRequest(http.MethodPost, "/", pr)
		mr.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		fields := map[string]string{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer io.Copy(io.Discard, pr)
			rd, err := mr.MultipartReader()
			if err != nil {
				return
			}
			for {
				part, err := rd.NextPart()
				if err != nil {
					return
				}
				b, _ := io.ReadAll(part)
				if part.FileName() == "" {
					fields[part.FormName()] = string(b)
				} else {
					fields[part.FormName()+".file"] = part.FileName() + " " + part.Header.Get("Content-Type") + " " + strconv.Itoa(len(b))
				}
			}
		}()
		h.ServeHTTP(w, r2)
		pw.Close()
		<-done
		c.mu.Lock()
		c.fields, c.contentLength = fields, r.ContentLength
		c.mu.Unlock()
	})
}

func (c *capture) get() (map[string]string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fields, c.contentLength
}

// TestSendVideoFields checks the multipart request itself: fields, no parse_mode, the video's
// size and an exact Content-Length.
func TestSendVideoFields(t *testing.T) {
	t.Parallel()
	var c capture
	env, p := newEnv(t, setup{wrap: c.wrap})
	v := providertest.NewVideo(3<<20+17, 12600*time.Millisecond, 720, 1280)
	if _, err := env.Run(p, dest(env, v, `{"caption":"Hello"}`), 5); err != nil {
		t.Fatal(err)
	}
	fields, contentLength := c.get()
	want := map[string]string{
		"chat_id": "@" + account, "caption": "Hello", "supports_streaming": "true", "width": "720", "height": "1280",
		"duration": "13", "video.file": fmt.Sprintf("video.mp4 video/mp4 %d", v.Size()),
	}
	for k, w := range want {
		if fields[k] != w {
			t.Errorf("field %s = %q; want %q", k, fields[k], w)
		}
	}
	for _, k := range []string{"parse_mode", "thumbnail"} {
		if _, ok := fields[k]; ok {
			t.Errorf("field %s sent; want none", k)
		}
	}
	if contentLength <= v.Size() {
		t.Errorf("Content-Length %d; want the exact multipart length, above the video's %d", contentLength, v.Size())
	}
}

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func thumbMedia(b []byte, ctype string, w, h int) *provider.Media {
	return &provider.Media{Size: int64(len(b)), ContentType: ctype, Width: w, Height: h,
		Open: func(context.Context, int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func TestThumbnail(t *testing.T) {
	t.Parallel()
	small := jpegOf(t, 320, 180)
	big := jpegOf(t, 640, 360)
	for _, c := range []struct {
		name      string
		thumb     *provider.Media
		sent      bool
		wantInMsg string
	}{
		{name: "qualifies", thumb: thumbMedia(small, "image/jpeg", 320, 180), sent: true},
		{name: "too wide", thumb: thumbMedia(big, "image/jpeg", 640, 360), wantInMsg: "at most 320 px"},
		{name: "png", thumb: thumbMedia(small, "image/png", 320, 180), wantInMsg: "only JPEG"},
		{name: "too heavy", thumb: thumbMedia(make([]byte, 200_000), "image/jpeg", 100, 100), wantInMsg: "less than 200 kB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var capt capture
			env, p := newEnv(t, setup{wrap: capt.wrap})
			d := dest(env, providertest.ShortVideo(), "")
			d.Thumbnail = c.thumb
			outs, err := env.Run(p, d, 5)
			if err != nil {
				t.Fatal(err) // the simulator refuses a thumbnail that breaks the rule
			}
			out := outs[len(outs)-1]
			fields, _ := capt.get()
			sent := fields["thumbnail"] == "attach://reelay_thumbnail" && fields["reelay_thumbnail.file"] != ""
			if sent != c.sent {
				t.Fatalf("thumbnail sent = %v (fields %v); want %v", sent, fields, c.sent)
			}
			if c.sent && fields["reelay_thumbnail.file"] != fmt.Sprintf("thumbnail.jpg image/jpeg %d", len(small)) {
				t.Fatalf("thumbnail part %q", fields["reelay_thumbnail.file"])
			}
			if c.wantInMsg != "" && !strings.Contains(out.Message, c.wantInMsg) {
				t.Fatalf("message %q; want it to say %q", out.Message, c.wantInMsg)
			}
			if c.sent && out.Message != "" {
				t.Fatalf("message %q; want none", out.Message)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
		text      string
		retry     time.Duration
		uploads   int
	}{
		{fail: sim.FailReject, category: provider.CategoryMediaRejected, text: "VIDEO_FILE_INVALID"},
		{fail: sim.FailUnavailable, category: provider.CategoryUpstreamUnavailable, transient: true, text: "Internal Server Error"},
		{fail: sim.FailAuth, category: provider.CategoryAuthExpired, text: "Unauthorized"},
		{fail: sim.FailRateLimit, category: provider.CategoryRateLimited, transient: true, text: "retry after 7", retry: 7 * time.Second},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: c.fail}})
			_, err := env.Run(p, dest(env, providertest.ShortVideo(), ""), 5)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retry {
				t.Fatalf("RetryAfter %v; want %v", pe.RetryAfter, c.retry)
			}
			if strings.Contains(pe.Message, token) {
				t.Fatalf("message %q carries the token", pe.Message)
			}
			if in := env.Introspect(); len(in.Uploads) != 0 || len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing received", in)
			}
		})
	}
}

// sequence returns draws in order, then 0.99 (no failure) forever.
func sequence(draws ...float64) func() float64 {
	var mu sync.Mutex
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if len(draws) == 0 {
			return 0.99
		}
		d := draws[0]
		draws = draws[1:]
		return d
	}
}

func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		rand func() float64
	}{
		// getMe, getChatMember, then sendVideo fails twice: the send step's own failures.
		{name: "send fails twice", rand: sequence(0.99, 0.99, 0.1, 0.1)},
		{name: "every other call", rand: sequence(0.1, 0.99, 0.1, 0.99, 0.1, 0.1, 0.99)},
		{name: "half of the calls", rand: func() func() float64 {
			var n atomic.Int64
			return func() float64 { return float64((n.Add(1)*7919)%100) / 100 }
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5}, rand: c.rand})
			v := providertest.ShortVideo()
			outs, err := env.RunRetrying(p, dest(env, v, ""), 60)
			if err != nil {
				t.Fatal(err)
			}
			if outs[len(outs)-1].Status != provider.StatusPublished {
				t.Fatalf("last outcome %+v", outs[len(outs)-1])
			}
			in := env.Introspect()
			if len(in.Uploads) != 1 || len(in.Published) != 1 || in.Uploads[0].SHA256 != v.SHA256() {
				t.Fatalf("introspection %+v; want one upload and one post", in)
			}
		})
	}
}

// TestSendFailureSentAgain: an error answer to sendVideo posted nothing, so the send Step sends
// again at once, and the video is posted once.
func TestSendFailureSentAgain(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5}, rand: sequence(0.99, 0.99, 0.1, 0.1)})
	d := dest(env, providertest.ShortVideo(), "")
	if _, err := providertest.Step(context.Background(), p, d); err != nil {
		t.Fatal(err)
	}
	out, err := providertest.Step(context.Background(), p, d)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("send: %+v, %v; want published after the error answers", out, err)
	}
	if n := len(env.Requests(http.MethodPost, "/sendVideo")); n != 3 {
		t.Errorf("%d sendVideo requests; want 3", n)
	}
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v", in)
	}
}

// TestSendFailureReportedOnce: an error answer to sendVideo that the send Step's tries did not
// get past is stored, reported once, and the next Step sends again.
func TestSendFailureReportedOnce(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5}, rand: sequence(0.99, 0.99, 0.1),
		cfg: telegram.Config{Repeat: provider.Repeat{Tries: 1}}})
	d := dest(env, providertest.ShortVideo(), "")
	arm, err := providertest.Step(context.Background(), p, d)
	if err != nil || arm.Status != provider.StatusUploading {
		t.Fatalf("arm: %+v, %v", arm, err)
	}
	failed, err := providertest.Step(context.Background(), p, d)
	if err != nil || failed.Status != provider.StatusUploading {
		t.Fatalf("failed send: %+v, %v; want the failure stored, not returned", failed, err)
	}
	_, err = providertest.Step(context.Background(), p, d)
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "Internal Server Error")
	// The publisher retries from the same stored State: this time it sends.
	outs, err := env.Run(p, d, 5)
	if err != nil {
		t.Fatal(err)
	}
	if outs[len(outs)-1].Status != provider.StatusPublished {
		t.Fatalf("outcomes %+v", outs)
	}
	if n := len(env.Requests(http.MethodPost, "/getChatMember")); n != 1 {
		t.Errorf("%d getChatMember calls; the rights are checked once", n)
	}
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v", in)
	}
}

func TestGivesUpAfterMaxSends(t *testing.T) {
	t.Parallel()
	draws := []float64{0.99, 0.99}
	for range 10 {
		draws = append(draws, 0.1)
	}
	env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky}, rand: sequence(draws...), cfg: telegram.Config{MaxSends: 3}})
	_, err := env.RunRetrying(p, dest(env, providertest.ShortVideo(), ""), 50)
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, false, "gave up after 3 attempts")
	if n := len(env.Requests(http.MethodPost, "/sendVideo")); n != 3 {
		t.Fatalf("%d sendVideo requests; want 3", n)
	}
}

// TestCrashWhileArmed: a Step that finds the send armed by an earlier run (a crash during the
// request, or a restart) never sends: the outcome is unknown.
func TestCrashWhileArmed(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	d := dest(env, providertest.ShortVideo(), "")
	if _, err := providertest.Step(context.Background(), p, d); err != nil {
		t.Fatal(err)
	}
	armed := d.State

	// A new process (a fresh provider) finds the stored, armed State.
	restarted := telegram.New(telegram.Config{HTTPClient: env.Client, Now: env.Clock.Now})
	_, err := restarted.Step(context.Background(), d)
	pe := providertest.WantError(t, err, provider.CategoryInternal, false, "not known whether the video was posted")
	if !strings.Contains(pe.Message, "@"+account) {
		t.Fatalf("message %q does not name the channel", pe.Message)
	}
	if n := len(env.Requests(http.MethodPost, "/sendVideo")); n != 0 {
		t.Fatalf("%d sendVideo requests; want none", n)
	}

	// In the same process, the armed State sends once; a second Step with it does not.
	out, err := providertest.Step(context.Background(), p, d)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("send: %+v, %v", out, err)
	}
	d.State = armed
	_, err = p.Step(context.Background(), d)
	providertest.WantError(t, err, provider.CategoryInternal, false, "retry this post")
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v; want one upload and one post", in)
	}
}

// TestAnswerLost: Telegram posts the video but the answer never arrives (the connection
// breaks): the outcome is unknown and the video is not sent again.
func TestAnswerLost(t *testing.T) {
	t.Parallel()
	var broke atomic.Bool
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/sendVideo") && broke.CompareAndSwap(false, true) {
				h.ServeHTTP(httptest.NewRecorder(), r) // Telegram posts it...
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close() // ...and the answer is lost
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	env, p := newEnv(t, setup{wrap: wrap})
	d := dest(env, providertest.ShortVideo(), "")
	_, err := env.RunRetrying(p, d, 10)
	providertest.WantError(t, err, provider.CategoryInternal, false, "not known whether the video was posted")
	_, err = p.Step(context.Background(), d)
	providertest.WantError(t, err, provider.CategoryInternal, false, "not known whether")
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v; want one upload and one post", in)
	}
}

// failingVideo fails its first read session after n bytes.
func failingVideo(v *providertest.Video, n int64) provider.Media {
	m := v.Media()
	open := m.Open
	var failed atomic.Bool
	m.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := open(ctx, off)
		if err != nil || failed.Swap(true) {
			return rc, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(rc, n), iotestErr{}), rc}, nil
	}
	return m
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("disk read error") }

func TestVideoReadFailsMidUpload(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	v := providertest.ShortVideo()
	d := dest(env, v, "")
	d.Video = failingVideo(v, 1<<20)
	outs, err := env.RunRetrying(p, d, 10)
	if err != nil {
		t.Fatal(err)
	}
	if outs[len(outs)-1].Status != provider.StatusPublished {
		t.Fatalf("outcomes %+v", outs)
	}
	in := env.Introspect()
	if len(in.Uploads) != 1 || len(in.Published) != 1 || in.Uploads[0].SHA256 != v.SHA256() {
		t.Fatalf("introspection %+v; want the whole video once", in)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		options  string
		creds    func(map[string]string)
		video    *providertest.Video
		cfg      telegram.Config
		category string
		text     string
		requests bool
	}{
		{name: "caption too long", options: `{"caption":"` + strings.Repeat("😀", 513) + `"}`, category: provider.CategoryInvalidOptions, text: "1026 UTF-16 units"},
		{name: "options not an object", options: `[1]`, category: provider.CategoryInvalidOptions, text: "telegram options"},
		{name: "unknown chat", creds: func(c map[string]string) { c["chat_id"] = "@someone_else" }, category: provider.CategoryInvalidOptions, text: "chat not found", requests: true},
		{name: "no chat", creds: func(c map[string]string) { delete(c, "chat_id") }, category: provider.CategoryInvalidOptions, text: "no chat_id"},
		{name: "no token", creds: func(c map[string]string) { delete(c, "bot_token") }, category: provider.CategoryAuthExpired, text: "no bot token"},
		{name: "revoked token", creds: func(c map[string]string) { c["bot_token"] = "123:revoked" }, category: provider.CategoryAuthExpired, text: "Unauthorized", requests: true},
		{name: "video over 50 MB", video: providertest.NewVideo(50_000_001, 10*time.Second, 1080, 1920), category: provider.CategoryMediaRejected, text: "at most 50000000"},
		// A provider configured for a local Bot API server sends it; the cloud refuses it.
		{name: "refused by the server", video: providertest.NewVideo(50_000_001, 10*time.Second, 1080, 1920), cfg: telegram.Config{LocalServer: true},
			category: provider.CategoryMediaRejected, text: "Request Entity Too Large", requests: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{cfg: c.cfg})
			v := c.video
			if v == nil {
				v = providertest.ShortVideo()
			}
			d := dest(env, v, c.options)
			if c.creds != nil {
				c.creds(d.Credentials)
			}
			_, err := env.Run(p, d, 5)
			providertest.WantError(t, err, c.category, false, c.text)
			if got := len(env.Requests("", "")) > 0; got != c.requests {
				t.Fatalf("requests made = %v; want %v", got, c.requests)
			}
			if in := env.Introspect(); len(in.Uploads) != 0 || len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing", in)
			}
		})
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	id, err := p.Identify(context.Background(), env.BaseURL, creds(env))
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Identity{ExternalID: strconv.FormatInt(chatID(), 10), Name: "Reelay sandbox channel", Username: "@" + account}
	if id != want {
		t.Fatalf("identity %+v; want %+v", id, want)
	}
	// The numeric chat id works as well as the @username.
	c := creds(env)
	c["chat_id"] = strconv.FormatInt(chatID(), 10)
	if id2, err := p.Identify(context.Background(), env.BaseURL, c); err != nil || id2 != want {
		t.Fatalf("by numeric id: %+v, %v", id2, err)
	}

	c["bot_token"] = "999:unknown"
	_, err = p.Identify(context.Background(), env.BaseURL, c)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Unauthorized")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	opts, err := p.Options(context.Background(), env.BaseURL, creds(env))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(opts)
	var got struct {
		Caption struct {
			Max  int    `json:"max"`
			Unit string `json:"unit"`
		} `json:"caption"`
		Target struct {
			Chat struct {
				ID       int64  `json:"id"`
				Type     string `json:"type"`
				Title    string `json:"title"`
				Username string `json:"username"`
			} `json:"chat"`
			Bot struct {
				ID     int64 `json:"id"`
				Rights struct {
					Status          string `json:"status"`
					CanPostMessages bool   `json:"can_post_messages"`
				} `json:"rights"`
			} `json:"bot"`
			MaxVideoBytes int64 `json:"max_video_bytes"`
		} `json:"target"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	tg := got.Target
	if got.Caption.Max != 1024 || got.Caption.Unit != "utf16" || tg.Chat.ID != chatID() || tg.Chat.Type != "channel" ||
		tg.Chat.Username != account || tg.Chat.Title != "Reelay sandbox channel" || tg.Bot.ID != telegramsim.BotID(account) ||
		tg.Bot.Rights.Status != "administrator" || !tg.Bot.Rights.CanPostMessages || tg.MaxVideoBytes != telegram.CloudMaxVideoBytes {
		t.Fatalf("options %s", raw)
	}

	c := creds(env)
	c["chat_id"] = "@nobody_here"
	_, err = p.Options(context.Background(), env.BaseURL, c)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "chat not found")
}

// TestBotRights: a bot that is not allowed to post fails before the upload, clearly.
func TestBotRights(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, member, text string
	}{
		{name: "not admin", member: `{"status":"member","user":{"id":1},"can_post_messages":false}`, text: "not an administrator"},
		{name: "admin without posting", member: `{"status":"administrator","user":{"id":1},"can_post_messages":false}`, text: "Post messages"},
		{name: "kicked", member: `{"status":"kicked","user":{"id":1}}`, text: "status kicked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wrap := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/getChatMember") {
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprintf(w, `{"ok":true,"result":%s}`, c.member)
						return
					}
					h.ServeHTTP(w, r)
				})
			}
			env, p := newEnv(t, setup{wrap: wrap})
			_, err := env.Run(p, dest(env, providertest.ShortVideo(), ""), 5)
			providertest.WantError(t, err, provider.CategoryAuthExpired, false, c.text)
			if n := len(env.Requests(http.MethodPost, "/sendVideo")); n != 0 {
				t.Fatalf("%d sendVideo requests; want none", n)
			}
			_, err = p.Identify(context.Background(), env.BaseURL, creds(env))
			providertest.WantError(t, err, provider.CategoryAuthExpired, false, c.text)
		})
	}
}

func TestPrivateChatLink(t *testing.T) {
	t.Parallel()
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/sendVideo") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			// The same channel without a public username.
			body := strings.Replace(rec.Body.String(), `"username":"`+account+`"`, `"username":""`, -1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			io.WriteString(w, body)
		})
	}
	env, p := newEnv(t, setup{wrap: wrap})
	outs, err := env.Run(p, dest(env, providertest.ShortVideo(), ""), 5)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("https://t.me/c/%d/1", -chatID()-1_000_000_000_000)
	if got := outs[len(outs)-1].URL; got != want {
		t.Fatalf("URL %q; want %q", got, want)
	}
}
