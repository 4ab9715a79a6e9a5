package discord_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/discord"
	"github.com/reelay/reelay/internal/platform/discord/discordsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	hookToken = "sbx1.discord.sbx_0123456789abcdef.testmac"
	botToken  = "bot-token-of-the-sandbox"
	account   = "sbx_0123456789abcdef"
)

type setup struct {
	behavior sim.Behavior
	rand     func() float64
	simOpts  discordsim.Options
	cfg      discord.Config
	wrap     func(http.Handler) http.Handler
}

func newEnv(t *testing.T, s setup) (*providertest.Env, *discord.Provider) {
	t.Helper()
	a := sim.Account{ID: account, Username: "Reelay hook", Behavior: s.behavior}
	env := providertest.NewEnv(t, "discord", sim.StaticAccounts{hookToken: a, botToken: a}, func(c sim.Config) http.Handler {
		var h http.Handler = discordsim.NewSim(c, s.simOpts)
		if s.wrap != nil {
			h = s.wrap(h)
		}
		return h
	}, providertest.Options{Rand: s.rand})
	cfg := s.cfg
	cfg.HTTPClient, cfg.Now = env.Client, env.Clock.Now
	if cfg.Repeat == (provider.Repeat{}) {
		// Retry-Afters of a second (the simulator's rate_limit) go back to the caller, as
		// longer ones would, instead of being waited out in every test.
		cfg.Repeat = provider.Repeat{Delay: time.Millisecond, MaxWait: 100 * time.Millisecond}
	}
	return env, discord.New(cfg)
}

func hookCreds(env *providertest.Env) map[string]string {
	return sandboxtoken.Credentials("discord", apiBase(env), account, hookToken)
}

// dest is a destination on the simulator, whose bot calls go below /api/v10, as Discord's.
func dest(env *providertest.Env, account string, creds map[string]string, v *providertest.Video, options string) *provider.Destination {
	d := env.Destination(account, creds, v, options)
	d.BaseURL = apiBase(env)
	return d
}

// apiBase is the simulator's API root, as a sandbox channel's.
func apiBase(env *providertest.Env) string { return env.BaseURL + "/api/" + discord.APIVersion }

func botCreds() map[string]string {
	return map[string]string{"bot_token": botToken, "channel_id": discordsim.ChannelID(account)}
}

func link(msgID string) string {
	return fmt.Sprintf("https://discord.com/channels/%s/%s/%s", discordsim.GuildID(account), discordsim.ChannelID(account), msgID)
}

// payloads records the payload_json of every message create, passing the body through.
type payloads struct {
	mu   sync.Mutex
	list []map[string]any
}

func (pl *payloads) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		pr, pw := io.Pipe()
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(io.TeeReader(r.Body, pw))
		mr := httptest.NewRequest(http.MethodPost, "/", pr)
		mr.Header.Set("Content-Type", r.Header.Get("Content-Type"))
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
				if part.FormName() == "payload_json" {
					var m map[string]any
					json.NewDecoder(part).Decode(&m)
					m["_content_type"] = part.Header.Get("Content-Type")
					pl.mu.Lock()
					pl.list = append(pl.list, m)
					pl.mu.Unlock()
				}
			}
		}()
		h.ServeHTTP(w, r2)
		pw.Close()
		<-done
	})
}

func (pl *payloads) get() []map[string]any {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return append([]map[string]any(nil), pl.list...)
}

func TestPublishWebhook(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options, caption, title, want string
	}{
		{name: "options content", options: `{"content":"From the discord object @everyone"}`, caption: "C", title: "T", want: "From the discord object @everyone"},
		{name: "post caption", caption: "Common caption #reelay", title: "T", want: "Common caption #reelay"},
		{name: "title only", title: "Only a title", want: "Only a title"},
		{name: "at the limit", options: `{"content":"` + strings.Repeat("😀", 1000) + `"}`, want: strings.Repeat("😀", 1000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var pl payloads
			env, p := newEnv(t, setup{wrap: pl.wrap})
			v := providertest.ShortVideo()
			d := dest(env, account, hookCreds(env), v, c.options)
			d.Caption, d.Title = c.caption, c.title
			outs, err := env.Run(p, d, 5)
			if err != nil {
				t.Fatal(err)
			}
			out := outs[len(outs)-1]
			in := env.Introspect()
			if len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() || in.Uploads[0].Bytes != v.Size() {
				t.Fatalf("uploads %+v; want the video once", in.Uploads)
			}
			if len(in.Published) != 1 || in.Published[0].Text != c.want {
				t.Fatalf("published %+v; want text %q", in.Published, c.want)
			}
			if out.Status != provider.StatusPublished || out.ExternalID != in.Published[0].ID || out.URL != link(out.ExternalID) || out.URL != in.Published[0].URL {
				t.Fatalf("outcome %+v; want message %s at %s", out, in.Published[0].ID, link(in.Published[0].ID))
			}
			if got := env.Requests(http.MethodPost, "/api/"+discord.APIVersion+"/webhooks/"+account+"/"+hookToken); len(got) != 1 || got[0].Query != "wait=true" {
				t.Fatalf("execute requests %+v; want one with wait=true", got)
			}
			if strings.Contains(string(out.State), hookToken) {
				t.Fatalf("state %s carries the webhook token", out.State)
			}
			pls := pl.get()
			if len(pls) != 1 {
				t.Fatalf("payloads %v", pls)
			}
			raw, _ := json.Marshal(pls[0])
			want := `{"_content_type":"application/json","allowed_mentions":{"parse":[]},"attachments":[{"filename":"video.mp4","id":0}],"content":` + string(mustJSON(c.want)) + `}`
			if string(raw) != want {
				t.Fatalf("payload_json %s\nwant %s", raw, want)
			}
		})
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestPublishBot(t *testing.T) {
	t.Parallel()
	var pl payloads
	env, p := newEnv(t, setup{wrap: pl.wrap})
	v := providertest.ShortVideo()
	outs, err := env.Run(p, dest(env, account, botCreds(), v, ""), 5)
	if err != nil {
		t.Fatal(err)
	}
	out := outs[len(outs)-1]
	if out.URL != link(out.ExternalID) {
		t.Fatalf("outcome %+v", out)
	}
	reqs := env.Requests(http.MethodPost, "/channels/"+discordsim.ChannelID(account)+"/messages")
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bot "+botToken {
		t.Fatalf("create requests %+v", reqs)
	}
	pls := pl.get()
	if len(pls) != 1 || pls[0]["enforce_nonce"] != true || len(pls[0]["nonce"].(string)) != 25 {
		t.Fatalf("payload %v; want a 25-character nonce, enforced", pls)
	}
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 || in.Uploads[0].SHA256 != v.SHA256() {
		t.Fatalf("introspection %+v", in)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		bot       bool
		category  string
		transient bool
		text      string
		retry     time.Duration
	}{
		{fail: sim.FailReject, category: provider.CategoryMediaRejected, text: "Explicit content"},
		{fail: sim.FailUnavailable, category: provider.CategoryUpstreamUnavailable, transient: true, text: "500: Internal Server Error"},
		{fail: sim.FailAuth, category: provider.CategoryAuthExpired, text: "Unknown Webhook"},
		{fail: sim.FailAuth, bot: true, category: provider.CategoryAuthExpired, text: "401: Unauthorized"},
		{fail: sim.FailRateLimit, category: provider.CategoryRateLimited, transient: true, text: "You are being rate limited", retry: 1500 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%s bot=%v", c.fail, c.bot), func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: c.fail}})
			creds := hookCreds(env)
			if c.bot {
				creds = botCreds()
			}
			_, err := env.Run(p, dest(env, account, creds, providertest.ShortVideo(), ""), 5)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retry {
				t.Fatalf("RetryAfter %v; want %v", pe.RetryAfter, c.retry)
			}
			if strings.Contains(pe.Message, hookToken) || strings.Contains(pe.Message, botToken) {
				t.Fatalf("message %q carries a token", pe.Message)
			}
			if in := env.Introspect(); len(in.Uploads)+len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing", in)
			}
		})
	}
}

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
	for _, bot := range []bool{false, true} {
		for _, c := range []struct {
			name string
			rand func() float64
		}{
			{name: "sends fail", rand: sequence(0.99, 0.99, 0.99, 0.1, 0.1)},
			{name: "half", rand: func() func() float64 {
				var n atomic.Int64
				return func() float64 { return float64((n.Add(1)*7919)%100) / 100 }
			}()},
		} {
			t.Run(fmt.Sprintf("%s bot=%v", c.name, bot), func(t *testing.T) {
				t.Parallel()
				env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5}, rand: c.rand})
				creds := hookCreds(env)
				if bot {
					creds = botCreds()
				}
				v := providertest.ShortVideo()
				outs, err := env.RunRetrying(p, dest(env, account, creds, v, ""), 60)
				if err != nil {
					t.Fatal(err)
				}
				if outs[len(outs)-1].Status != provider.StatusPublished {
					t.Fatalf("outcomes %+v", outs)
				}
				if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 || in.Uploads[0].SHA256 != v.SHA256() {
					t.Fatalf("introspection %+v; want one upload and one post", in)
				}
			})
		}
	}
}

// TestSendFailureSentAgain: a send Discord answered with an error posted nothing, so the send
// Step sends again at once (the Step after the one that armed it publishes), whichever way
// the message goes; a send that got no answer is not sent again.
func TestSendFailureSentAgain(t *testing.T) {
	t.Parallel()
	for _, bot := range []bool{false, true} {
		t.Run(fmt.Sprintf("bot=%v", bot), func(t *testing.T) {
			t.Parallel()
			// The start reads the webhook, or the bot and its channel; then two sends fail.
			draws := []float64{0.99, 0.1, 0.1}
			if bot {
				draws = []float64{0.99, 0.99, 0.1, 0.1}
			}
			env, p := newEnv(t, setup{behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5}, rand: sequence(draws...)})
			creds := hookCreds(env)
			if bot {
				creds = botCreds()
			}
			d := dest(env, account, creds, providertest.ShortVideo(), "")
			if _, err := providertest.Step(context.Background(), p, d); err != nil {
				t.Fatal(err)
			}
			out, err := providertest.Step(context.Background(), p, d)
			if err != nil || out.Status != provider.StatusPublished {
				t.Fatalf("send: %+v, %v; want published after the error answers", out, err)
			}
			refused := 0
			for _, r := range env.Requests(http.MethodPost, "") {
				if r.Status >= 500 {
					refused++
				}
			}
			if sends := len(env.Requests(http.MethodPost, "")); sends != 3 || refused != 2 {
				t.Errorf("%d sends, %d refused; want 3 and 2", sends, refused)
			}
			if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
				t.Fatalf("introspection %+v", in)
			}
		})
	}
}

// TestWebhookCrashWhileArmed: a webhook send armed by an earlier run is never made again.
func TestWebhookCrashWhileArmed(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	d := dest(env, account, hookCreds(env), providertest.ShortVideo(), "")
	if _, err := providertest.Step(context.Background(), p, d); err != nil {
		t.Fatal(err)
	}
	armed := d.State
	restarted := discord.New(discord.Config{HTTPClient: env.Client, Now: env.Clock.Now})
	_, err := restarted.Step(context.Background(), d)
	providertest.WantError(t, err, provider.CategoryInternal, false, "not known whether the video was posted")
	if n := len(env.Requests(http.MethodPost, "")); n != 0 {
		t.Fatalf("%d POSTs; want none", n)
	}
	if out, err := providertest.Step(context.Background(), p, d); err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("send: %+v %v", out, err)
	}
	d.State = armed
	_, err = p.Step(context.Background(), d)
	providertest.WantError(t, err, provider.CategoryInternal, false, "retry this post")
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v", in)
	}
}

// loseFirstAnswer lets the simulator create the first message, then breaks the connection.
func loseFirstAnswer(h http.Handler) http.Handler {
	var broke atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && broke.CompareAndSwap(false, true) {
			h.ServeHTTP(httptest.NewRecorder(), r)
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestAnswerLost(t *testing.T) {
	t.Parallel()
	t.Run("webhook", func(t *testing.T) {
		t.Parallel()
		env, p := newEnv(t, setup{wrap: loseFirstAnswer})
		d := dest(env, account, hookCreds(env), providertest.ShortVideo(), "")
		_, err := env.RunRetrying(p, d, 10)
		providertest.WantError(t, err, provider.CategoryInternal, false, "not known whether the video was posted")
		_, err = p.Step(context.Background(), d)
		providertest.WantError(t, err, provider.CategoryInternal, false, "not known")
		if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
			t.Fatalf("introspection %+v", in)
		}
	})
	t.Run("bot finds its message", func(t *testing.T) {
		t.Parallel()
		env, p := newEnv(t, setup{wrap: loseFirstAnswer})
		d := dest(env, account, botCreds(), providertest.ShortVideo(), "")
		if _, err := providertest.Step(context.Background(), p, d); err != nil {
			t.Fatal(err)
		}
		armed := d.State
		_, err := providertest.Step(context.Background(), p, d)
		providertest.WantError(t, err, provider.CategoryInternal, false, "not known")
		// The publisher, or a new process, steps the armed State again: the bot reads the
		// channel and finds its message.
		d.State = armed
		env.Clock.Advance(10 * time.Minute) // past the nonce window: only the history helps
		restarted := discord.New(discord.Config{HTTPClient: env.Client, Now: env.Clock.Now})
		out, err := providertest.Step(context.Background(), restarted, d)
		if err != nil {
			t.Fatal(err)
		}
		in := env.Introspect()
		if out.Status != provider.StatusPublished || out.ExternalID != in.Published[0].ID || !strings.Contains(out.Message, "not sent again") {
			t.Fatalf("outcome %+v", out)
		}
		if len(in.Uploads) != 1 || len(in.Published) != 1 {
			t.Fatalf("introspection %+v", in)
		}
		if n := len(env.Requests(http.MethodGet, "/messages")); n != 1 {
			t.Fatalf("%d history reads; want 1", n)
		}
	})
}

// TestBotCrashBeforeSend: the State was armed but the process died before sending: the bot
// finds nothing in the channel and sends, once.
func TestBotCrashBeforeSend(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	d := dest(env, account, botCreds(), providertest.ShortVideo(), "")
	if _, err := providertest.Step(context.Background(), p, d); err != nil {
		t.Fatal(err)
	}
	restarted := discord.New(discord.Config{HTTPClient: env.Client, Now: env.Clock.Now})
	outs, err := env.Run(restarted, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != provider.StatusPublished || outs[0].Message != "" {
		t.Fatalf("outcome %+v", outs[0])
	}
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Fatalf("introspection %+v", in)
	}
}

type readErr struct{}

func (readErr) Read([]byte) (int, error) { return 0, errors.New("disk read error") }

func TestVideoReadFailsMidUpload(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	v := providertest.ShortVideo()
	d := dest(env, account, hookCreds(env), v, "")
	open := d.Video.Open
	var failed atomic.Bool
	d.Video.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := open(ctx, off)
		if err != nil || failed.Swap(true) {
			return rc, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(rc, 1<<20), readErr{}), rc}, nil
	}
	outs, err := env.RunRetrying(p, d, 10)
	if err != nil {
		t.Fatal(err)
	}
	if outs[len(outs)-1].Status != provider.StatusPublished {
		t.Fatalf("outcomes %+v", outs)
	}
	if in := env.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 || in.Uploads[0].SHA256 != v.SHA256() {
		t.Fatalf("introspection %+v", in)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	big := providertest.NewVideo(10<<20+1, 10*time.Second, 1080, 1920)
	for _, c := range []struct {
		name     string
		options  string
		creds    map[string]string
		video    *providertest.Video
		cfg      discord.Config
		category string
		text     string
		requests bool
	}{
		{name: "content too long", options: `{"content":"` + strings.Repeat("😀", 1001) + `"}`, category: provider.CategoryInvalidOptions, text: "2002 UTF-16 units"},
		{name: "options not an object", options: `"x"`, category: provider.CategoryInvalidOptions, text: "discord options"},
		{name: "not a webhook URL", creds: map[string]string{"webhook_url": "https://discord.com/api/channels/1"}, category: provider.CategoryInvalidOptions, text: "/webhooks/{id}/{token}"},
		{name: "bot without channel", creds: map[string]string{"bot_token": botToken}, category: provider.CategoryInvalidOptions, text: "no channel_id"},
		{name: "other channel", creds: map[string]string{"bot_token": botToken, "channel_id": "123456789012345678"}, category: provider.CategoryAuthExpired, text: "Unknown Channel", requests: true},
		{name: "nothing", creds: map[string]string{}, category: provider.CategoryAuthExpired, text: "neither a webhook URL nor a bot token"},
		{name: "video over 10 MiB", video: big, category: provider.CategoryMediaRejected, text: "at most 10485760"},
		{name: "refused by the server", video: big, cfg: discord.Config{MaxVideoBytes: 50 << 20}, category: provider.CategoryMediaRejected, text: "Request entity too large", requests: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, p := newEnv(t, setup{cfg: c.cfg})
			v := c.video
			if v == nil {
				v = providertest.ShortVideo()
			}
			creds := c.creds
			if creds == nil {
				creds = hookCreds(env)
			}
			_, err := env.Run(p, dest(env, account, creds, v, c.options), 5)
			providertest.WantError(t, err, c.category, false, c.text)
			if got := len(env.Requests("", "")) > 0; got != c.requests {
				t.Fatalf("requests made = %v; want %v", got, c.requests)
			}
			if in := env.Introspect(); len(in.Uploads)+len(in.Published) != 0 {
				t.Fatalf("introspection %+v", in)
			}
		})
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	id, err := p.Identify(context.Background(), env.BaseURL, hookCreds(env))
	if err != nil {
		t.Fatal(err)
	}
	if want := (provider.Identity{ExternalID: "webhook:" + account, Name: "Reelay hook", Username: "webhook " + account}); id != want {
		t.Fatalf("identity %+v; want %+v", id, want)
	}
	id, err = p.Identify(context.Background(), apiBase(env), botCreds())
	if err != nil {
		t.Fatal(err)
	}
	if want := (provider.Identity{ExternalID: "channel:" + discordsim.ChannelID(account), Name: "#sandbox-videos", Username: "reelay-sandbox"}); id != want {
		t.Fatalf("bot identity %+v; want %+v", id, want)
	}
	bad := map[string]string{"webhook_url": env.BaseURL + "/api/webhooks/" + account + "/not-the-token"}
	_, err = p.Identify(context.Background(), env.BaseURL, bad)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Invalid Webhook Token")
	_, err = p.Identify(context.Background(), apiBase(env), map[string]string{"bot_token": "nope", "channel_id": "1"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "401: Unauthorized")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	env, p := newEnv(t, setup{})
	opts, err := p.Options(context.Background(), env.BaseURL, hookCreds(env))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(opts)
	var got struct {
		Content struct {
			Max int `json:"max"`
		} `json:"content"`
		Target struct {
			Webhook struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"webhook"`
			ChannelID     string `json:"channel_id"`
			GuildID       string `json:"guild_id"`
			MaxVideoBytes int64  `json:"max_video_bytes"`
		} `json:"target"`
	}
	json.Unmarshal(raw, &got)
	if got.Content.Max != 2000 || got.Target.Webhook.ID != account || got.Target.Webhook.Name != "Reelay hook" ||
		got.Target.ChannelID != discordsim.ChannelID(account) || got.Target.GuildID != discordsim.GuildID(account) ||
		got.Target.MaxVideoBytes != discord.DefaultMaxVideoBytes {
		t.Fatalf("options %s", raw)
	}
	opts, err = p.Options(context.Background(), apiBase(env), botCreds())
	if err != nil || opts["target"].(map[string]any)["channel_name"] != "sandbox-videos" {
		t.Fatalf("bot options %v, %v", opts, err)
	}
}
