package telegramsim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/telegram/telegramsim"
)

const (
	tgToken   = "tg-sim-token"
	tgAccount = "sbx_00aa11bb22cc33dd"
)

func newTelegramServer(t *testing.T, b sim.Behavior, o telegramsim.Options) (*httptest.Server, *sim.Recorder) {
	t.Helper()
	rec := &sim.Recorder{}
	h := telegramsim.NewSim(sim.Config{Accounts: sim.StaticAccounts{tgToken: {ID: tgAccount, Username: "Sim channel", Behavior: b}}, Recorder: rec}, o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, rec
}

type tgPart struct {
	name, value, filename string
	data                  []byte
}

func tgMultipart(t *testing.T, parts ...tgPart) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.filename == "" {
			mw.WriteField(p.name, p.value)
			continue
		}
		w, _ := mw.CreateFormFile(p.name, p.filename)
		w.Write(p.data)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

type tgAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func tgDo(t *testing.T, srv *httptest.Server, token, method, ctype string, body []byte) (int, tgAnswer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bot"+token+"/"+method, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a tgAnswer
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer %q is not JSON: %v", raw, err)
	}
	if !a.OK && a.ErrorCode != resp.StatusCode {
		t.Fatalf("error_code %d but HTTP %d", a.ErrorCode, resp.StatusCode)
	}
	return resp.StatusCode, a
}

// mp4ish starts like an MP4 (an ftyp box).
func mp4ish(n int) []byte {
	b := make([]byte, n)
	copy(b, []byte("\x00\x00\x00\x18ftypisom"))
	return b
}

func tgJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil)
	return b.Bytes()
}

func TestTelegramSendVideo(t *testing.T) {
	t.Parallel()
	srv, rec := newTelegramServer(t, sim.Behavior{}, telegramsim.Options{})
	video := mp4ish(5000)
	ct, body := tgMultipart(t,
		tgPart{name: "video", filename: "v.mp4", data: video},
		tgPart{name: "chat_id", value: "@" + tgAccount},
		tgPart{name: "caption", value: "Hi *there*"},
		tgPart{name: "width", value: "1080"}, tgPart{name: "height", value: "1920"}, tgPart{name: "duration", value: "9"},
		tgPart{name: "supports_streaming", value: "true"},
		tgPart{name: "thumbnail", value: "attach://th"}, tgPart{name: "th", filename: "t.jpg", data: tgJPEG(t, 180, 320)},
	)
	status, a := tgDo(t, srv, tgToken, "sendVideo", ct, body)
	if status != 200 || !a.OK {
		t.Fatalf("%d %+v", status, a)
	}
	var msg struct {
		MessageID int64 `json:"message_id"`
		Chat      struct {
			ID       int64  `json:"id"`
			Type     string `json:"type"`
			Username string `json:"username"`
		} `json:"chat"`
		Caption string `json:"caption"`
		Video   struct {
			FileID   string `json:"file_id"`
			Width    int    `json:"width"`
			FileSize int64  `json:"file_size"`
		} `json:"video"`
	}
	json.Unmarshal(a.Result, &msg)
	if msg.MessageID != 1 || msg.Chat.ID != telegramsim.ChatID(tgAccount) || msg.Chat.Type != "channel" || msg.Chat.Username != tgAccount ||
		msg.Caption != "Hi *there*" || msg.Video.FileID == "" || msg.Video.Width != 1080 || msg.Video.FileSize != 5000 {
		t.Fatalf("message %s", a.Result)
	}
	// The numeric chat id names the same channel; the next message id follows.
	ct, body = tgMultipart(t, tgPart{name: "chat_id", value: fmt.Sprint(telegramsim.ChatID(tgAccount))}, tgPart{name: "video", filename: "v.mp4", data: video})
	if status, a = tgDo(t, srv, tgToken, "sendVideo", ct, body); status != 200 || !strings.Contains(string(a.Result), `"message_id":2`) {
		t.Fatalf("%d %s", status, a.Result)
	}
	in := rec.Snapshot(nil)
	if len(in.Uploads) != 2 || in.Uploads[0].Bytes != 5000 || len(in.Published) != 2 ||
		in.Published[0].URL != "https://t.me/"+tgAccount+"/1" || in.Published[0].Text != "Hi *there*" {
		t.Fatalf("introspection %+v", in)
	}
}

func TestTelegramDocumentForNonMP4(t *testing.T) {
	t.Parallel()
	srv, _ := newTelegramServer(t, sim.Behavior{}, telegramsim.Options{})
	ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount}, tgPart{name: "video", filename: "v.webm", data: []byte("\x1a\x45\xdf\xa3 webm")})
	_, a := tgDo(t, srv, tgToken, "sendVideo", ct, body)
	if !a.OK || !strings.Contains(string(a.Result), `"document"`) || strings.Contains(string(a.Result), `"video"`) {
		t.Fatalf("%+v", a)
	}
}

func TestTelegramRefuses(t *testing.T) {
	t.Parallel()
	video := tgPart{name: "video", filename: "v.mp4", data: mp4ish(3000)}
	chat := tgPart{name: "chat_id", value: "@" + tgAccount}
	for _, c := range []struct {
		name   string
		token  string
		method string
		ctype  string
		body   []byte
		parts  []tgPart
		opts   telegramsim.Options
		status int
		desc   string
	}{
		{name: "unknown token", token: "nope", method: "getMe", status: 401, desc: "Unauthorized"},
		{name: "unknown method", method: "sendTelepathy", status: 404, desc: "Not Found"},
		{name: "video by URL", method: "sendVideo", ctype: "application/x-www-form-urlencoded", body: []byte("chat_id=%40" + tgAccount + "&video=https%3A%2F%2Fexample.com%2Fv.mp4"), status: 400, desc: "wrong remote file identifier"},
		{name: "no video", method: "sendVideo", parts: []tgPart{chat}, status: 400, desc: "there is no video in the request"},
		{name: "no chat", method: "sendVideo", parts: []tgPart{video}, status: 400, desc: "chat_id is empty"},
		{name: "other chat", method: "sendVideo", parts: []tgPart{video, {name: "chat_id", value: "@elsewhere"}}, status: 400, desc: "chat not found"},
		{name: "caption too long", method: "sendVideo", parts: []tgPart{video, chat, {name: "caption", value: strings.Repeat("😀", 513)}}, status: 400, desc: "message caption is too long"},
		{name: "bad parse_mode", method: "sendVideo", parts: []tgPart{video, chat, {name: "parse_mode", value: "markdown3"}}, status: 400, desc: "unsupported parse_mode"},
		{name: "bad width", method: "sendVideo", parts: []tgPart{video, chat, {name: "width", value: "wide"}}, status: 400, desc: "invalid width"},
		{name: "bad boolean", method: "sendVideo", parts: []tgPart{video, chat, {name: "supports_streaming", value: "yes please"}}, status: 400, desc: "expected a Boolean"},
		{name: "dangling attach", method: "sendVideo", parts: []tgPart{chat, {name: "video", value: "attach://missing"}}, status: 400, desc: "there is no video"},
		{name: "thumbnail too wide", method: "sendVideo", parts: []tgPart{video, chat, {name: "thumbnail", value: "attach://t"}, {name: "t", filename: "t.jpg", data: tgJPEG(t, 400, 200)}}, status: 400, desc: "must not exceed 320"},
		{name: "thumbnail not JPEG", method: "sendVideo", parts: []tgPart{video, chat, {name: "thumbnail", value: "attach://t"}, {name: "t", filename: "t.png", data: []byte("\x89PNG\r\n\x1a\n")}}, status: 400, desc: "JPEG"},
		{name: "thumbnail by URL", method: "sendVideo", parts: []tgPart{video, chat, {name: "thumbnail", value: "https://example.com/t.jpg"}}, status: 400, desc: "attach://"},
		{name: "file over the limit", method: "sendVideo", parts: []tgPart{chat, {name: "video", filename: "v.mp4", data: mp4ish(2001)}}, opts: telegramsim.Options{MaxVideoBytes: 2000}, status: 413, desc: "Request Entity Too Large"},
		{name: "chat not found", method: "getChat", ctype: "application/json", body: []byte(`{"chat_id":"@elsewhere"}`), status: 400, desc: "chat not found"},
		{name: "member of nobody", method: "getChatMember", ctype: "application/x-www-form-urlencoded", body: []byte("chat_id=%40" + tgAccount + "&user_id=abc"), status: 400, desc: "invalid user_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTelegramServer(t, sim.Behavior{}, c.opts)
			token := c.token
			if token == "" {
				token = tgToken
			}
			ctype, body := c.ctype, c.body
			if c.parts != nil {
				ctype, body = tgMultipart(t, c.parts...)
			}
			status, a := tgDo(t, srv, token, c.method, ctype, body)
			if status != c.status || a.OK || !strings.Contains(a.Description, c.desc) {
				t.Fatalf("%d %+v; want %d with %q", status, a, c.status, c.desc)
			}
			if in := rec.Snapshot(nil); len(in.Uploads)+len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing", in)
			}
		})
	}
}

func TestTelegramFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		desc   string
		retry  int
	}{
		{fail: sim.FailUnavailable, status: 500, desc: "Internal Server Error"},
		{fail: sim.FailAuth, status: 401, desc: "Unauthorized"},
		{fail: sim.FailRateLimit, status: 429, desc: "Too Many Requests: retry after 7", retry: 7},
		{fail: sim.FailReject, status: 400, desc: "VIDEO_FILE_INVALID"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTelegramServer(t, sim.Behavior{Fail: c.fail}, telegramsim.Options{})
			ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount}, tgPart{name: "video", filename: "v.mp4", data: mp4ish(100)})
			status, a := tgDo(t, srv, tgToken, "sendVideo", ct, body)
			if status != c.status || !strings.Contains(a.Description, c.desc) || a.Parameters.RetryAfter != c.retry {
				t.Fatalf("%d %+v", status, a)
			}
			if in := rec.Snapshot(nil); len(in.Uploads)+len(in.Published) != 0 {
				t.Fatalf("introspection %+v; want nothing", in)
			}
		})
	}
}

func TestTelegramChatAndMember(t *testing.T) {
	t.Parallel()
	srv, _ := newTelegramServer(t, sim.Behavior{}, telegramsim.Options{})
	_, me := tgDo(t, srv, tgToken, "GETME", "", nil) // method names are case-insensitive
	var bot struct {
		ID    int64 `json:"id"`
		IsBot bool  `json:"is_bot"`
	}
	json.Unmarshal(me.Result, &bot)
	if bot.ID != telegramsim.BotID(tgAccount) || !bot.IsBot {
		t.Fatalf("getMe %s", me.Result)
	}
	_, ch := tgDo(t, srv, tgToken, "getChat", "application/x-www-form-urlencoded", []byte("chat_id=%40"+tgAccount))
	if !strings.Contains(string(ch.Result), `"title":"Sim channel"`) || !strings.Contains(string(ch.Result), `"type":"channel"`) {
		t.Fatalf("getChat %s", ch.Result)
	}
	_, m := tgDo(t, srv, tgToken, "getChatMember", "application/json", []byte(fmt.Sprintf(`{"chat_id":"@%s","user_id":%d}`, tgAccount, bot.ID)))
	if !strings.Contains(string(m.Result), `"status":"administrator"`) || !strings.Contains(string(m.Result), `"can_post_messages":true`) {
		t.Fatalf("getChatMember %s", m.Result)
	}
}

// A real VP9 WebM is no video to Telegram ("Telegram clients support MPEG4 videos (other
// formats may be sent as Document)", core.telegram.org/bots/api#sendvideo): the message
// carries a document, never a video, which the provider reports.
func TestTelegramVP9WebMIsNoVideo(t *testing.T) {
	t.Parallel()
	srv, _ := newTelegramServer(t, sim.Behavior{}, telegramsim.Options{})
	webm := simtest.VP9WebM(t, 360, 640, 3*time.Second)
	ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount}, tgPart{name: "video", filename: "v.webm", data: webm})
	_, a := tgDo(t, srv, tgToken, "sendVideo", ct, body)
	if !a.OK || !strings.Contains(string(a.Result), `"document"`) || strings.Contains(string(a.Result), `"video"`) {
		t.Fatalf("%+v", a)
	}
}
