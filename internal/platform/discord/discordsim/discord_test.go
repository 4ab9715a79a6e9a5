package discordsim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/discord/discordsim"
	"github.com/reelay/reelay/internal/platform/sim"
)

const (
	dcHookToken = "dc-hook-token"
	dcBotToken  = "dc-bot-token"
	dcAccount   = "sbx_99aa11bb22cc33dd"
)

func newDiscordServer(t *testing.T, b sim.Behavior, o discordsim.Options) (*httptest.Server, *sim.Recorder, *clocktest.Clock) {
	t.Helper()
	rec := &sim.Recorder{}
	clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := sim.Account{ID: dcAccount, Username: "Hook", Behavior: b}
	h := discordsim.NewSim(sim.Config{Accounts: sim.StaticAccounts{dcHookToken: a, dcBotToken: a}, Recorder: rec, Now: clock.Now}, o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, rec, clock
}

type dcPart struct {
	name, value, filename string
	data                  []byte
}

func dcBody(parts ...dcPart) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.filename == "" {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, p.name))
			w, _ := mw.CreatePart(h)
			io.WriteString(w, p.value)
			continue
		}
		w, _ := mw.CreateFormFile(p.name, p.filename)
		w.Write(p.data)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func dcDo(t *testing.T, srv *httptest.Server, method, path, auth, ctype string, body []byte) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("answer %q: %v", raw, err)
		}
	} else if len(raw) > 0 {
		m = map[string]any{"_list": string(raw)}
	}
	return resp.StatusCode, resp.Header, m
}

var hookPath = "/api/v10/webhooks/" + dcAccount + "/" + dcHookToken

func TestDiscordExecuteWebhook(t *testing.T) {
	t.Parallel()
	srv, rec, _ := newDiscordServer(t, sim.Behavior{}, discordsim.Options{})
	ct, body := dcBody(dcPart{name: "payload_json", value: `{"content":"Hello <@1>","attachments":[{"id":0,"filename":"clip.mp4"}],"allowed_mentions":{"parse":[]}}`},
		dcPart{name: "files[0]", filename: "upload.bin", data: bytes.Repeat([]byte("v"), 4096)})
	status, _, m := dcDo(t, srv, http.MethodPost, hookPath+"?wait=true", "", ct, body)
	if status != 200 || m["content"] != "Hello <@1>" || m["channel_id"] != discordsim.ChannelID(dcAccount) || m["webhook_id"] != dcAccount {
		t.Fatalf("%d %v", status, m)
	}
	att := m["attachments"].([]any)[0].(map[string]any)
	if att["filename"] != "clip.mp4" || att["size"] != float64(4096) {
		t.Fatalf("attachment %v", att)
	}
	// Without wait the message is still created, and the answer is 204.
	ct, body = dcBody(dcPart{name: "payload_json", value: `{"content":"no wait"}`})
	if status, _, _ := dcDo(t, srv, http.MethodPost, "/api/webhooks/"+dcAccount+"/"+dcHookToken, "", ct, body); status != 204 {
		t.Fatalf("without wait: %d", status)
	}
	in := rec.Snapshot(nil)
	if len(in.Uploads) != 1 || in.Uploads[0].Bytes != 4096 || len(in.Published) != 2 || in.Published[0].Text != "Hello <@1>" ||
		in.Published[0].URL != fmt.Sprintf("https://discord.com/channels/%s/%s/%s", discordsim.GuildID(dcAccount), discordsim.ChannelID(dcAccount), m["id"]) {
		t.Fatalf("introspection %+v", in)
	}
	status, _, w := dcDo(t, srv, http.MethodGet, hookPath, "", "", nil)
	if status != 200 || w["id"] != dcAccount || w["name"] != "Hook" || w["guild_id"] != discordsim.GuildID(dcAccount) {
		t.Fatalf("GET webhook %d %v", status, w)
	}
}

func TestDiscordRefuses(t *testing.T) {
	t.Parallel()
	file := dcPart{name: "files[0]", filename: "v.mp4", data: []byte("video")}
	for _, c := range []struct {
		name   string
		method string
		path   string
		auth   string
		ctype  string
		body   []byte
		parts  []dcPart
		opts   discordsim.Options
		status int
		code   float64
		text   string
	}{
		{name: "wrong webhook token", path: "/api/webhooks/" + dcAccount + "/nope?wait=true", parts: []dcPart{file}, status: 401, code: 50027, text: "Invalid Webhook Token"},
		{name: "token of another webhook", path: "/api/webhooks/123456/" + dcHookToken, parts: []dcPart{file}, status: 401, code: 50027},
		{name: "content too long", path: hookPath, parts: []dcPart{{name: "payload_json", value: `{"content":"` + strings.Repeat("😀", 1001) + `"}`}}, status: 400, code: 50035, text: "BASE_TYPE_MAX_LENGTH"},
		{name: "empty", path: hookPath, parts: []dcPart{{name: "payload_json", value: `{"content":""}`}}, status: 400, code: 50006},
		{name: "attachment without file", path: hookPath, parts: []dcPart{{name: "payload_json", value: `{"attachments":[{"id":1,"filename":"x.mp4"}]}`}, file}, status: 400, code: 50035, text: "ATTACHMENT_NOT_FOUND"},
		{name: "bad payload_json", path: hookPath, parts: []dcPart{{name: "payload_json", value: `{"content":`}, file}, status: 400, code: 50109},
		{name: "bad mention kind", path: hookPath, parts: []dcPart{{name: "payload_json", value: `{"content":"x","allowed_mentions":{"parse":["channels"]}}`}}, status: 400, code: 50035, text: "ENUM_TYPE_COERCE"},
		{name: "odd file field", path: hookPath, parts: []dcPart{{name: "video", filename: "v.mp4", data: []byte("v")}}, status: 400, code: 50035, text: "files[n]"},
		{name: "bad wait", path: hookPath + "?wait=maybe", parts: []dcPart{file}, status: 400, code: 50035, text: "BOOLEAN_TYPE_COERCE"},
		{name: "file too large", path: hookPath, parts: []dcPart{{name: "files[0]", filename: "v.mp4", data: make([]byte, 1001)}}, opts: discordsim.Options{MaxUploadBytes: 1000}, status: 413, code: 40005},
		{name: "form urlencoded", path: hookPath, ctype: "application/x-www-form-urlencoded", body: []byte("content=hi"), status: 400, code: 50035},
		// Discord's API lives below /api: a path without it is nobody's.
		{name: "webhook without /api", path: "/webhooks/" + dcAccount + "/" + dcHookToken + "?wait=true", parts: []dcPart{file}, status: 404, text: "404: Not Found"},
		{name: "bot call without /api", method: http.MethodGet, path: "/v10/users/@me", auth: "Bot " + dcBotToken, status: 404, text: "404: Not Found"},
		{name: "bot without auth", method: http.MethodGet, path: "/api/v10/users/@me", status: 401, text: "401: Unauthorized"},
		{name: "bot in another channel", path: "/api/v10/channels/42/messages", auth: "Bot " + dcBotToken, parts: []dcPart{file}, status: 404, code: 10003},
		{name: "nonce too long", path: "/api/v10/channels/" + discordsim.ChannelID(dcAccount) + "/messages", auth: "Bot " + dcBotToken,
			parts: []dcPart{{name: "payload_json", value: `{"content":"x","nonce":"` + strings.Repeat("n", 26) + `","enforce_nonce":true}`}}, status: 400, code: 50035, text: "nonce"},
		{name: "history limit", method: http.MethodGet, path: "/api/v10/channels/" + discordsim.ChannelID(dcAccount) + "/messages?limit=101", auth: "Bot " + dcBotToken, status: 400, code: 50035},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, rec, _ := newDiscordServer(t, sim.Behavior{}, c.opts)
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			ctype, body := c.ctype, c.body
			if c.parts != nil {
				ctype, body = dcBody(c.parts...)
			}
			status, _, m := dcDo(t, srv, method, c.path, c.auth, ctype, body)
			raw, _ := json.Marshal(m)
			if status != c.status || m["code"] != c.code || !strings.Contains(string(raw), c.text) {
				t.Fatalf("%d %s; want %d, code %v, with %q", status, raw, c.status, c.code, c.text)
			}
			if in := rec.Snapshot(nil); len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing published", in)
			}
		})
	}
}

func TestDiscordFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		code   float64
		msg    string
	}{
		{fail: sim.FailUnavailable, status: 500, msg: "500: Internal Server Error"},
		{fail: sim.FailAuth, status: 404, code: 10015, msg: "Unknown Webhook"},
		{fail: sim.FailRateLimit, status: 429, msg: "You are being rate limited."},
		{fail: sim.FailReject, status: 400, code: 20009, msg: "Explicit content cannot be sent to the desired recipient(s)"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			srv, rec, _ := newDiscordServer(t, sim.Behavior{Fail: c.fail}, discordsim.Options{})
			ct, body := dcBody(dcPart{name: "files[0]", filename: "v.mp4", data: []byte("v")})
			status, h, m := dcDo(t, srv, http.MethodPost, hookPath+"?wait=true", "", ct, body)
			if status != c.status || m["message"] != c.msg || (c.status != 429 && m["code"] != c.code) {
				t.Fatalf("%d %v", status, m)
			}
			if c.status == 429 && (m["retry_after"] != 1.5 || m["global"] != false || h.Get("Retry-After") != "2" ||
				h.Get("X-RateLimit-Remaining") != "0" || h.Get("X-RateLimit-Scope") != "user") {
				t.Fatalf("rate limit answer %v %v", m, h)
			}
			if in := rec.Snapshot(nil); len(in.Uploads)+len(in.Published) != 0 {
				t.Fatalf("introspection %+v", in)
			}
		})
	}
}

func TestDiscordBotNonceAndHistory(t *testing.T) {
	t.Parallel()
	srv, rec, clock := newDiscordServer(t, sim.Behavior{}, discordsim.Options{})
	path := "/api/v10/channels/" + discordsim.ChannelID(dcAccount) + "/messages"
	send := func(nonce string) map[string]any {
		ct, body := dcBody(dcPart{name: "payload_json", value: `{"content":"n","nonce":"` + nonce + `","enforce_nonce":true,"attachments":[{"id":0,"filename":"v.mp4"}]}`},
			dcPart{name: "files[0]", filename: "v.mp4", data: []byte("video")})
		status, _, m := dcDo(t, srv, http.MethodPost, path, "Bot "+dcBotToken, ct, body)
		if status != 200 {
			t.Fatalf("%d %v", status, m)
		}
		return m
	}
	first := send("abc")
	if again := send("abc"); again["id"] != first["id"] {
		t.Fatalf("same nonce made a second message %v", again["id"])
	}
	if other := send("def"); other["id"] == first["id"] {
		t.Fatal("another nonce answered the first message")
	}
	clock.Advance(6 * time.Minute)
	if late := send("abc"); late["id"] == first["id"] {
		t.Fatal("the nonce outlived its window")
	}
	if in := rec.Snapshot(nil); len(in.Published) != 3 || len(in.Uploads) != 4 {
		t.Fatalf("introspection %+v; want 3 messages from 4 uploads", in)
	}
	_, _, list := dcDo(t, srv, http.MethodGet, path+"?after="+first["id"].(string)+"&limit=1", "Bot "+dcBotToken, "", nil)
	var msgs []map[string]any
	json.Unmarshal([]byte(list["_list"].(string)), &msgs)
	if len(msgs) != 1 || msgs[0]["id"] == first["id"] || msgs[0]["author"].(map[string]any)["id"] != discordsim.BotID(dcAccount) {
		t.Fatalf("history %v", msgs)
	}
}

// With the default options a webhook refuses a real MP4 one byte over 10 MiB (the attachment
// limit of a server without boosts, discord.com/developers/docs/reference#uploading-files)
// with 413, code 40005, and takes one of exactly 10 MiB.
func TestDiscordWebhookTenMiB(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size   int64
		status int
	}{{10<<20 + 1, 413}, {10 << 20, 200}} {
		srv, rec, _ := newDiscordServer(t, sim.Behavior{}, discordsim.Options{})
		video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Size: c.size})
		if int64(len(video)) != c.size {
			t.Fatalf("made %d bytes, want %d", len(video), c.size)
		}
		ct, body := dcBody(dcPart{name: "files[0]", filename: "v.mp4", data: video})
		status, _, m := dcDo(t, srv, http.MethodPost, hookPath+"?wait=true", "", ct, body)
		if status != c.status || (c.status == 413 && m["code"] != 40005.0) {
			t.Fatalf("%d bytes: %d %v, want %d", c.size, status, m, c.status)
		}
		if published := len(rec.Snapshot(nil).Published); (published == 1) != (c.status == 200) {
			t.Fatalf("%d bytes: %d published", c.size, published)
		}
	}
}
