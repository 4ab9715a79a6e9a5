package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform"
)

const script = "Cold brew is easier than you think. Most people make it wrong because they use the wrong grind. " +
	"Use coarse beans, a 1:8 ratio and 16 hours in the fridge. Why pay $6 at a café when cold brew costs 50 cents at home?"

func TestAdapt(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{"prompt": script}})
		if r.Code != http.StatusOK || r.JSON["success"] != true || r.JSON["model"] != ai.BuiltinName {
			t.Fatalf("adapt: %d %s", r.Code, r.Body)
		}
		adapted := r.JSON["adapted"].(map[string]any)
		var got []string
		for p := range adapted {
			got = append(got, p)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(ai.DefaultPlatforms))
		if !slices.Equal(got, want) {
			t.Errorf("platforms %v, want the default %v", got, want)
		}
		for p, v := range adapted {
			c := v.(map[string]any)
			lim, _ := ai.LimitsOf(p)
			if text := c["text"].(string); !lim.Text[0].Check(text) || !strings.HasPrefix(text, c["hook"].(string)) {
				t.Errorf("%s text over its limit or not opening with the hook: %q", p, text)
			}
			if _, ok := c["jev"]; ok {
				t.Errorf("%s has jev without includeJev", p)
			}
		}
		if yt := adapted["youtube"].(map[string]any); yt["title"] == nil || adapted["tiktok"].(map[string]any)["title"] != nil {
			t.Errorf("titles: youtube %v, tiktok %v", yt["title"], adapted["tiktok"].(map[string]any)["title"])
		}

		r = e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{
			"prompt": script, "platforms": []string{"reddit", "bluesky"}, "tone": "professional", "includeJev": true}})
		if r.Code != http.StatusOK {
			t.Fatalf("adapt with options: %d %s", r.Code, r.Body)
		}
		adapted = r.JSON["adapted"].(map[string]any)
		if len(adapted) != 2 || adapted["reddit"] == nil || adapted["bluesky"].(map[string]any)["jev"] == nil {
			t.Errorf("adapted: %s", r.Body)
		}

		// Emoji clusters of many code points, on every platform: the answer still matches the
		// contract (jev lines within maxLength, which counts code points).
		emoji := strings.Repeat("👨‍👩‍👧‍👦🔥🇯🇵", 300) + " Best family trip ever? 👍🏽"
		r = e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{
			"prompt": emoji, "platforms": platform.All, "tone": "humorous", "includeJev": true}})
		if r.Code != http.StatusOK || len(r.JSON["adapted"].(map[string]any)) != len(platform.All) {
			t.Fatalf("emoji adapt: %d %.300s", r.Code, r.Body)
		}
	})
}

func TestAdaptRefusesBadInput(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		tests := []struct {
			name   string
			body   any
			header map[string]string
			status int
			code   string
			field  string
		}{
			{"missing prompt", map[string]any{"tone": "viral"}, nil, 400, "validation_failed", "prompt"},
			{"blank prompt", map[string]any{"prompt": " \n "}, nil, 400, "validation_failed", "prompt"},
			{"prompt too long", map[string]any{"prompt": strings.Repeat("a", 10001)}, nil, 400, "validation_failed", "prompt"},
			{"unknown tone", map[string]any{"prompt": script, "tone": "sarcastic"}, nil, 400, "validation_failed", "tone"},
			{"tone in capitals", map[string]any{"prompt": script, "tone": "Viral"}, nil, 400, "validation_failed", "tone"},
			{"unknown platform", map[string]any{"prompt": script, "platforms": []string{"tiktok", "myspace"}}, nil, 400, "validation_failed", "platforms[1]"},
			{"platform twice", map[string]any{"prompt": script, "platforms": []string{"tiktok", "tiktok"}}, nil, 400, "validation_failed", "platforms[1]"},
			{"platforms not an array", map[string]any{"prompt": script, "platforms": "tiktok"}, nil, 400, "validation_failed", "platforms"},
			{"includeJev not a boolean", map[string]any{"prompt": script, "includeJev": "yes"}, nil, 400, "validation_failed", "includeJev"},
			{"unknown field", map[string]any{"prompt": script, "language": "fr"}, nil, 400, "validation_failed", "language"},
			{"not JSON", "prompt=hi", nil, 400, "invalid_json", ""},
			{"wrong content type", map[string]any{"prompt": script}, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: tt.body, Header: tt.header})
				if r.Code != tt.status || r.errCode() != tt.code {
					t.Fatalf("%d %s, want %d %s", r.Code, r.Body, tt.status, tt.code)
				}
				if tt.field != "" && r.field(tt.field) == "" {
					t.Errorf("error does not name %s: %s", tt.field, r.Body)
				}
			})
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Body: map[string]any{"prompt": script}}); r.Code != http.StatusUnauthorized {
			t.Errorf("without a key: %d", r.Code)
		}
	})
}

func TestStoryboard(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		tests := []struct {
			name     string
			body     map[string]any
			scenes   int
			lastCode string
		}{
			{"default duration", map[string]any{"topic": script}, 6, "00:25-00:30"},
			{"shortest", map[string]any{"topic": script, "durationSeconds": 5}, 1, "00:00-00:05"},
			{"rounded up", map[string]any{"topic": script, "durationSeconds": 32, "style": "cinematic", "camera": "slow dolly-in"}, 7, "00:30-00:35"},
			{"longest", map[string]any{"topic": script, "durationSeconds": 300}, 60, "04:55-05:00"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/create", Key: e.a.Key, Body: tt.body})
				if r.Code != http.StatusOK || r.JSON["model"] != ai.BuiltinName {
					t.Fatalf("%d %s", r.Code, r.Body)
				}
				scenes := r.JSON["storyboard"].(map[string]any)["scenes"].([]any)
				if len(scenes) != tt.scenes {
					t.Fatalf("%d scenes, want %d", len(scenes), tt.scenes)
				}
				for i, s := range scenes {
					sc := s.(map[string]any)
					if sc["timecode"] != ai.Timecode(i) {
						t.Errorf("scene %d timecode %v", i, sc["timecode"])
					}
					if style, ok := tt.body["style"].(string); ok && !strings.Contains(sc["prompt"].(string), style) {
						t.Errorf("scene %d prompt lacks the style: %v", i, sc["prompt"])
					}
					if camera, ok := tt.body["camera"].(string); ok && sc["camera"] != camera {
						t.Errorf("scene %d camera %v, want %s", i, sc["camera"], camera)
					}
				}
				if last := scenes[len(scenes)-1].(map[string]any); last["timecode"] != tt.lastCode {
					t.Errorf("last timecode %v, want %s", last["timecode"], tt.lastCode)
				}
			})
		}

		bad := []struct {
			name  string
			body  any
			field string
		}{
			{"missing topic", map[string]any{"durationSeconds": 30}, "topic"},
			{"blank topic", map[string]any{"topic": "   "}, "topic"},
			{"zero seconds", map[string]any{"topic": script, "durationSeconds": 0}, "durationSeconds"},
			{"too short", map[string]any{"topic": script, "durationSeconds": 4}, "durationSeconds"},
			{"too long", map[string]any{"topic": script, "durationSeconds": 301}, "durationSeconds"},
			{"negative", map[string]any{"topic": script, "durationSeconds": -5}, "durationSeconds"},
			{"fractional", `{"topic":"x","durationSeconds":7.5}`, "durationSeconds"},
			{"as a string", map[string]any{"topic": script, "durationSeconds": "30"}, "durationSeconds"},
			{"style too long", map[string]any{"topic": script, "style": strings.Repeat("s", 201)}, "style"},
			{"camera on two lines", map[string]any{"topic": script, "camera": "pan\nzoom"}, "camera"},
		}
		for _, tt := range bad {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/create", Key: e.a.Key, Body: tt.body})
				if r.Code != http.StatusBadRequest || r.field(tt.field) == "" {
					t.Errorf("%d %s, want 400 naming %s", r.Code, r.Body, tt.field)
				}
			})
		}
	})
}

// chatServer is a local OpenAI-compatible chat-completions server that answers copy for every
// platform and sixty scenes (the engine keeps what it asked for), or fails every call.
func chatServer(t *testing.T, fail bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	calls := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if fail {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		var content []byte
		if strings.Contains(body.Messages[0].Content, "storyboard") {
			var scenes []map[string]string
			for i := range 60 {
				scenes = append(scenes, map[string]string{"title": fmt.Sprint("Shot ", i+1), "prompt": "Steam rising from a glass of cold brew",
					"audioCue": "lo-fi beat", "camera": "slow orbit"})
			}
			content, _ = json.Marshal(map[string]any{"scenes": scenes})
		} else {
			adapted := map[string]any{}
			for _, p := range platform.All {
				adapted[p] = map[string]any{"hook": "Cold brew in 3 steps", "text": "Cold brew in 3 steps\n\nCoarse, cold, 16 hours.\n\n#coldbrew",
					"hashtags": []string{"#coldbrew"}, "title": "Cold brew in 3 steps"}
			}
			content, _ = json.Marshal(map[string]any{"adapted": adapted})
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": string(content)}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func withLLM(t *testing.T, url string) envOption {
	t.Helper()
	llm, err := ai.NewLLM(ai.LLMConfig{BaseURL: url + "/v1", Model: "local-model", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return func(o *httpapi.Options) { o.AI = llm }
}

func TestAdaptWithLanguageModel(t *testing.T) {
	srv, calls := chatServer(t, false)
	each(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{"prompt": script, "platforms": []string{"threads", "youtube"}}})
		if r.Code != http.StatusOK || r.JSON["model"] != "local-model" {
			t.Fatalf("adapt: %d %s", r.Code, r.Body)
		}
		if yt := r.JSON["adapted"].(map[string]any)["youtube"].(map[string]any); yt["title"] != "Cold brew in 3 steps" {
			t.Errorf("youtube copy: %v", yt)
		}
		if _, ok := r.JSON["adapted"].(map[string]any)["threads"].(map[string]any)["title"]; ok {
			t.Errorf("threads has no title field but got one: %s", r.Body)
		}
		r = e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/create", Key: e.a.Key, Body: map[string]any{"topic": script, "durationSeconds": 15, "style": "noir"}})
		if r.Code != http.StatusOK || r.JSON["model"] != "local-model" || len(r.JSON["storyboard"].(map[string]any)["scenes"].([]any)) != 3 {
			t.Fatalf("storyboard: %d %s", r.Code, r.Body)
		}
		// Bad input is refused before the model is asked.
		before := calls.Load()
		if r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{"prompt": script, "tone": "grim"}}); r.Code != http.StatusBadRequest {
			t.Errorf("unknown tone: %d", r.Code)
		}
		if calls.Load() != before {
			t.Error("the model was asked about a refused request")
		}
	}, withLLM(t, srv.URL))
}

func TestAdaptLanguageModelDown(t *testing.T) {
	failing, _ := chatServer(t, true)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for name, url := range map[string]string{"failing": failing.URL, "unreachable": down.URL} {
		t.Run(name, func(t *testing.T) {
			each(t, func(t *testing.T, e *env) {
				for _, rq := range []req{
					{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{"prompt": script}},
					{Method: "POST", Path: "/api/v1/ai/storyboard/create", Key: e.a.Key, Body: map[string]any{"topic": script}},
				} {
					r := e.do(rq)
					if r.Code != http.StatusBadGateway || r.errCode() != "upstream_error" {
						t.Errorf("%s: %d %s, want 502 upstream_error", rq.Path, r.Code, r.Body)
					}
				}
			}, withLLM(t, url))
		})
	}
}

// TestAppUsesConfiguredLanguageModel checks the wiring: REELAY_LLM_* in the configuration
// reach the engine that answers.
func TestAppUsesConfiguredLanguageModel(t *testing.T) {
	srv, calls := chatServer(t, false)
	eachApp(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "POST", Path: "/api/v1/ai/adapt", Key: e.a.Key, Body: map[string]any{"prompt": script}})
		if r.Code != http.StatusOK || r.JSON["model"] != "gpt-test" || calls.Load() == 0 {
			t.Fatalf("adapt: %d %s (model calls %d)", r.Code, r.Body, calls.Load())
		}
	}, func(c *config.Config) { c.LLMURL, c.LLMModel, c.LLMAPIKey = srv.URL+"/v1", "gpt-test", "sk-app" })
}
