package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

const testKey = "sk-test-0123456789abcdef-SECRET"

// fakeLLM is a local OpenAI-compatible chat-completions server: each call is answered by the
// next of its replies (the last one repeats), and every request is recorded.
type fakeLLM struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []reply
	requests []fakeRequest
}

// reply is one answer of the fake: a status and a raw body, or the content of a chat
// completion, or a delay first.
type reply struct {
	status  int
	body    string
	content string
	delay   time.Duration
}

type fakeRequest struct {
	Path   string
	Auth   string
	Body   map[string]any
	Prompt string // the messages' contents, joined
}

func newFakeLLM(t *testing.T, replies ...reply) *fakeLLM {
	t.Helper()
	f := &fakeLLM{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		var prompt strings.Builder
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			fmt.Fprintf(&prompt, "%s: %s\n", mm["role"], mm["content"])
		}
		f.mu.Lock()
		f.requests = append(f.requests, fakeRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body, Prompt: prompt.String()})
		rp := f.replies[min(len(f.requests), len(f.replies))-1]
		f.mu.Unlock()
		if rp.delay > 0 {
			select {
			case <-time.After(rp.delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if rp.status != 0 {
			w.WriteHeader(rp.status)
			w.Write([]byte(rp.body))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": rp.content}}},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLLM) calls() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// newTestLLM is an engine on the fake whose log goes to logs.
func newTestLLM(t *testing.T, baseURL string, logs *bytes.Buffer) *LLM {
	t.Helper()
	if logs == nil {
		logs = new(bytes.Buffer)
	}
	l, err := NewLLM(LLMConfig{BaseURL: baseURL, Model: "test-model", APIKey: testKey, Timeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// answer builds a model's JSON answer for platforms from one function.
func answer(platforms []string, copyOf func(p string) map[string]any) string {
	m := map[string]any{}
	for _, p := range platforms {
		m[p] = copyOf(p)
	}
	b, _ := json.Marshal(map[string]any{"adapted": m})
	return string(b)
}

var testPlatforms = []string{platform.TikTok, platform.Bluesky, platform.YouTube, platform.Threads}

func goodCopy(p string) map[string]any {
	c := map[string]any{"hook": "Cold brew, the easy way ☕", "text": "Cold brew, the easy way ☕\n\nCoarse beans, 16 hours.\n\n#coldbrew",
		"hashtags": []string{"#coldbrew"}}
	if p == platform.YouTube {
		c["title"] = "Cold brew, the easy way"
	}
	return c
}

// wantUpstream checks that err is the 502 upstream_error a client sees, saying what.
func wantUpstream(t *testing.T, err error, says string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || ae.Code != apierr.CodeUpstreamError {
		t.Fatalf("error = %v, want a 502 upstream_error", err)
	}
	if !strings.Contains(ae.Message, says) {
		t.Errorf("message %q does not say %q", ae.Message, says)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the API key is in the error: %v", err)
	}
}

func TestLLMAdapt(t *testing.T) {
	f := newFakeLLM(t, reply{content: answer(testPlatforms, func(p string) map[string]any {
		c := goodCopy(p)
		c["hashtags"] = []string{"cold brew", "#Coffee!", "#coldbrew", "coldbrew"} // to be normalised
		return c
	})})
	l := newTestLLM(t, f.URL+"/v1/", nil)
	got, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms, Tone: ToneEducational})
	if err != nil {
		t.Fatal(err)
	}
	if l.Name() != "test-model" {
		t.Errorf("Name = %q", l.Name())
	}
	for _, p := range testPlatforms {
		checkCopy(t, p, got[p], false)
		if want := []string{"#ColdBrew", "#Coffee"}; fmt.Sprint(got[p].Hashtags) != fmt.Sprint(want) {
			t.Errorf("%s hashtags = %q, want %q (normalised, deduplicated)", p, got[p].Hashtags, want)
		}
	}
	if got[platform.YouTube].Title != "Cold brew, the easy way" {
		t.Errorf("youtube title = %q", got[platform.YouTube].Title)
	}
	calls := f.calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Path != "/v1/chat/completions" || c.Auth != "Bearer "+testKey || c.Body["model"] != "test-model" {
		t.Errorf("request: path %q auth %q model %v", c.Path, c.Auth, c.Body["model"])
	}
	if rf, _ := c.Body["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("response_format = %v, want json_object", c.Body["response_format"])
	}
	for _, want := range []string{"Tone: educational", "bluesky: text at most 300 graphemes", "tiktok: text at most 2200 UTF-16",
		"threads: text at most 500 characters, but an emoji counts its UTF-8 bytes", "youtube: text at most 5000 UTF-8 bytes (an emoji counts 4, an accented letter 2); title at most 100 characters",
		"Cold brew keeps for two weeks"} {
		if !strings.Contains(c.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, c.Prompt)
		}
	}
	if strings.Contains(c.Prompt, "jev") {
		t.Errorf("prompt asks for jev without includeJev")
	}
}

func TestLLMAdaptCorrections(t *testing.T) {
	long := strings.Repeat("This sentence is long enough to matter. ", 20) // 800 characters
	overLong := func(p string) map[string]any {
		c := goodCopy(p)
		if p == platform.Bluesky {
			c["text"] = "Hook line.\n\n" + long + "\n\n#coldbrew"
		}
		return c
	}
	missingThreads := func() string {
		return answer([]string{platform.TikTok, platform.Bluesky, platform.YouTube}, goodCopy)
	}
	good := answer(testPlatforms, goodCopy)
	tests := []struct {
		name    string
		replies []reply
		calls   int
		err     string // "" = success
		check   func(t *testing.T, got Adapted, calls []fakeRequest)
	}{
		{"over-long then fixed", []reply{{content: answer(testPlatforms, overLong)}, {content: good}}, 2, "",
			func(t *testing.T, got Adapted, calls []fakeRequest) {
				if got[platform.Bluesky].Text != goodCopy(platform.Bluesky)["text"] {
					t.Errorf("bluesky text is not the corrected answer: %q", got[platform.Bluesky].Text)
				}
				if !strings.Contains(calls[1].Prompt, "bluesky text is 823 graphemes") || !strings.Contains(calls[1].Prompt, "the limit is 300") {
					t.Errorf("second request does not name the problem:\n%s", calls[1].Prompt)
				}
			}},
		{"over-long twice, trimmed", []reply{{content: answer(testPlatforms, overLong)}}, 2, "",
			func(t *testing.T, got Adapted, _ []fakeRequest) {
				text := got[platform.Bluesky].Text
				if !strings.HasPrefix(text, "Hook line.\n\nThis sentence is long enough to matter.") || !strings.HasSuffix(text, "matter.\n\n#coldbrew") {
					t.Errorf("bluesky text not trimmed at a sentence, tags kept: %q", text)
				}
				if hook := got[platform.Bluesky].Hook; hook != "Hook line." {
					t.Errorf("hook %q is not the opening of the text", hook)
				}
			}},
		{"invalid JSON then valid", []reply{{content: "Sure! Here is your copy: {adapted: oops"}, {content: good}}, 2, "", nil},
		{"invalid JSON twice", []reply{{content: "I cannot help with that."}}, 2, "answered an unusable copy twice", nil},
		{"platform missing then given", []reply{{content: missingThreads()}, {content: good}}, 2, "", nil},
		{"platform missing twice", []reply{{content: missingThreads()}}, 2, "threads is missing", nil},
		{"over-long then broken: the first, trimmed", []reply{{content: answer(testPlatforms, overLong)}, {content: "{"}}, 2, "",
			func(t *testing.T, got Adapted, _ []fakeRequest) {
				if !strings.HasPrefix(got[platform.Bluesky].Text, "Hook line.") {
					t.Errorf("the usable first answer was not kept: %q", got[platform.Bluesky].Text)
				}
			}},
		{"fenced JSON and no wrapper", []reply{{content: "```json\n" + strings.TrimSuffix(strings.TrimPrefix(good, `{"adapted":`), "}") + "\n```"}}, 1, "", nil},
		{"hashtags as one string", []reply{{content: answer(testPlatforms, func(p string) map[string]any {
			c := goodCopy(p)
			c["hashtags"] = "#coldbrew, #coffee"
			return c
		})}}, 1, "", func(t *testing.T, got Adapted, _ []fakeRequest) {
			if fmt.Sprint(got[platform.TikTok].Hashtags) != "[#coldbrew #coffee]" || !strings.HasSuffix(got[platform.TikTok].Text, "\n\n#coldbrew #coffee") {
				t.Errorf("hashtags = %q, text %q: #coffee, listed but not in the text, should join the text's tags", got[platform.TikTok].Hashtags, got[platform.TikTok].Text)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLLM(t, tt.replies...)
			got, err := newTestLLM(t, f.URL+"/v1", nil).Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms})
			if n := len(f.calls()); n != tt.calls {
				t.Errorf("%d calls to the model, want %d", n, tt.calls)
			}
			if tt.err != "" {
				wantUpstream(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range testPlatforms {
				checkCopy(t, p, got[p], false)
			}
			if tt.check != nil {
				tt.check(t, got, f.calls())
			}
		})
	}
}

func TestLLMAdaptJEV(t *testing.T) {
	f := newFakeLLM(t, reply{content: answer(testPlatforms, func(p string) map[string]any {
		c := goodCopy(p)
		if p != platform.TikTok { // TikTok's lines are left out: they are made from the text
			c["jev"] = []string{"Cold brew, the easy way ☕", "Coarse beans and sixteen hours in the fridge, that is all it takes"}
		}
		return c
	})})
	got, err := newTestLLM(t, f.URL, nil).Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms, IncludeJEV: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testPlatforms {
		checkCopy(t, p, got[p], true)
	}
	if !strings.Contains(f.calls()[0].Prompt, `"jev"`) {
		t.Error("the prompt does not ask for jev")
	}
}

func TestLLMFailures(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	tests := []struct {
		name    string
		replies []reply
		url     string
		says    string
	}{
		{"server down", nil, downURL, "could not reach the language model"},
		{"key refused", []reply{{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error"}}`}}, "", "the configured API key was refused"},
		{"unknown model", []reply{{status: 404, body: `{"error":"model 'test-model' not found"}`}}, "", "model 'test-model' not found"},
		{"rate limited", []reply{{status: 429, body: `{"error":{"message":"quota"}}`}}, "", "rate limited"},
		{"server error", []reply{{status: 503, body: "<html>upstream connect error</html>"}}, "", "503"},
		{"not chat completions", []reply{{status: 200, body: "<html>hello</html>"}}, "", "did not answer a chat completion"},
		{"too slow", []reply{{delay: 5 * time.Second}}, "", "did not answer within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if url == "" {
				url = newFakeLLM(t, tt.replies...).URL
			}
			var logs bytes.Buffer
			l := newTestLLM(t, url, &logs)
			l.timeout = 300 * time.Millisecond
			_, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms})
			wantUpstream(t, err, tt.says)
			_, err = l.Storyboard(context.Background(), StoryboardRequest{Topic: coldBrew, DurationSeconds: 10})
			wantUpstream(t, err, tt.says)
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("the API key is in the log:\n%s", logs.String())
			}
		})
	}
}

// TestLLMKeyNeverLogged runs the paths that log (debug included) and checks the key is in
// neither the log nor any error.
func TestLLMKeyNeverLogged(t *testing.T) {
	f := newFakeLLM(t,
		reply{content: "not json"},
		reply{content: answer(testPlatforms, goodCopy)},
		reply{status: 401, body: `{"error":"bad key ` + testKey + `"}`})
	var logs bytes.Buffer
	l := newTestLLM(t, f.URL, &logs)
	if _, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms})
	wantUpstream(t, err, "[redacted]")
	if logs.Len() == 0 {
		t.Fatal("nothing was logged: the test proves nothing")
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the API key is in the log:\n%s", logs.String())
	}
	for _, c := range f.calls() {
		if c.Auth != "Bearer "+testKey {
			t.Errorf("Authorization = %q", c.Auth)
		}
	}
}

func TestLLMWithoutKey(t *testing.T) {
	f := newFakeLLM(t, reply{content: answer(testPlatforms, goodCopy)})
	l, err := NewLLM(LLMConfig{BaseURL: f.URL, Model: "llama3.1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms}); err != nil {
		t.Fatal(err)
	}
	if auth := f.calls()[0].Auth; auth != "" {
		t.Errorf("Authorization %q sent without a key", auth)
	}
}

// TestLLMParameterFallback: servers that refuse response_format (some local ones) or
// temperature (reasoning models) are asked again without it, and not asked with it again.
func TestLLMParameterFallback(t *testing.T) {
	f := newFakeLLM(t,
		reply{status: 400, body: `{"error":{"message":"'response_format.type' must be 'json_schema'"}}`},
		reply{status: 400, body: `{"error":{"message":"Unsupported value: 'temperature' does not support 0.7"}}`},
		reply{content: answer(testPlatforms, goodCopy)})
	l := newTestLLM(t, f.URL, nil)
	for range 2 {
		if _, err := l.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: testPlatforms}); err != nil {
			t.Fatal(err)
		}
	}
	calls := f.calls()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4 (two refused, then one per request)", len(calls))
	}
	for i, c := range calls[2:] {
		if _, ok := c.Body["response_format"]; ok {
			t.Errorf("call %d still sends response_format", i+3)
		}
		if _, ok := c.Body["temperature"]; ok {
			t.Errorf("call %d still sends temperature", i+3)
		}
	}
}

func TestLLMStoryboard(t *testing.T) {
	scenes := func(n int, withStyle bool) string {
		var ss []map[string]any
		for i := range n {
			p := fmt.Sprintf("Beans pouring in slow motion, shot %d", i+1)
			if withStyle {
				p += ", watercolor look"
			}
			ss = append(ss, map[string]any{"title": fmt.Sprintf("Shot %d", i+1), "prompt": p, "audioCue": "soft piano", "camera": ""})
		}
		b, _ := json.Marshal(map[string]any{"scenes": ss})
		return string(b)
	}
	tests := []struct {
		name    string
		replies []reply
		calls   int
		err     string
	}{
		{"exact", []reply{{content: scenes(7, true)}}, 1, ""},
		{"more scenes than asked: the first ones", []reply{{content: scenes(9, false)}}, 1, ""},
		{"too few, then right", []reply{{content: scenes(3, false)}, {content: scenes(7, false)}}, 2, ""},
		{"too few twice", []reply{{content: scenes(3, false)}}, 2, "it has 3 scenes; 7 are needed"},
		{"empty prompt twice", []reply{{content: `{"scenes":[{"title":"x","prompt":" "},{},{},{},{},{},{}]}`}}, 2, "scene 1 has no prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLLM(t, tt.replies...)
			req := StoryboardRequest{Topic: coldBrew, DurationSeconds: RoundDuration(32), Style: "watercolor", Camera: "slow dolly-in"}
			sb, err := newTestLLM(t, f.URL, nil).Storyboard(context.Background(), req)
			if n := len(f.calls()); n != tt.calls {
				t.Errorf("%d calls, want %d", n, tt.calls)
			}
			if tt.err != "" {
				wantUpstream(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sb.Scenes) != 7 {
				t.Fatalf("%d scenes, want 7", len(sb.Scenes))
			}
			for i, sc := range sb.Scenes {
				if sc.Timecode != Timecode(i) || sc.Camera != "slow dolly-in" {
					t.Errorf("scene %d: timecode %q camera %q", i, sc.Timecode, sc.Camera)
				}
				if !strings.Contains(sc.Prompt, "watercolor") || !strings.Contains(sc.Prompt, "slow dolly-in") {
					t.Errorf("scene %d prompt lacks the style or camera: %q", i, sc.Prompt)
				}
			}
			first := f.calls()[0].Prompt
			for _, want := range []string{"Scenes: 7 (35 seconds in all)", "Visual style, to use in every prompt: watercolor", "Camera movement, to use in every scene: slow dolly-in"} {
				if !strings.Contains(first, want) {
					t.Errorf("prompt lacks %q", want)
				}
			}
		})
	}
}

func TestNewLLMRefuses(t *testing.T) {
	for name, c := range map[string]LLMConfig{
		"no scheme":         {BaseURL: "localhost:11434/v1", Model: "m"},
		"ftp":               {BaseURL: "ftp://example.com/v1", Model: "m"},
		"no model":          {BaseURL: "http://localhost:11434/v1"},
		"credentials inURL": {BaseURL: "https://user:pass@example.com/v1", Model: "m"},
	} {
		if _, err := NewLLM(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
