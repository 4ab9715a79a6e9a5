package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// LLMConfig configures the chat-completions engine.
type LLMConfig struct {
	// BaseURL is the API's base, such as https://api.openai.com/v1 or
	// http://localhost:11434/v1 (Ollama); "/chat/completions" is appended.
	BaseURL string
	// Model is the model asked for, and what answers name in `model`.
	Model string
	// APIKey, when set, is sent as a Bearer token. It is never logged nor put in an error.
	APIKey string
	// Timeout bounds each call to the model; 60 s when zero. A request makes at most two
	// calls (the second asks the model to correct its first answer).
	Timeout time.Duration
	// HTTPClient makes the calls (a plain client when nil). The URL is the operator's, so it
	// may be local: no address guard applies.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// LLM is the engine that asks an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama,
// vLLM, llama.cpp's server, LM Studio, ...) for JSON, checks the answer, asks once more when
// it is unusable or over a limit, and trims what is still too long. Whatever the model says,
// the copy it answers fits every platform limit.
type LLM struct {
	endpoint string
	model    string
	key      string
	timeout  time.Duration
	client   *http.Client
	log      *slog.Logger
	// Servers that refuse a parameter (response_format on some local servers, temperature on
	// reasoning models) are asked without it from then on.
	noJSONMode, noTemperature atomic.Bool
}

// DefaultLLMTimeout bounds one call to the model when LLMConfig.Timeout is zero: local models
// on a laptop take tens of seconds for a page of JSON.
const DefaultLLMTimeout = 60 * time.Second

// NewLLM returns the engine, or an error when the configuration cannot work.
func NewLLM(c LLMConfig) (*LLM, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("LLM URL %q must be an absolute http(s) URL such as https://api.openai.com/v1", c.BaseURL)
	}
	if u.User != nil {
		return nil, errors.New("LLM URL must not carry credentials: give the key as the API key")
	}
	if strings.TrimSpace(c.Model) == "" {
		return nil, errors.New("an LLM URL needs a model name")
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	l := &LLM{endpoint: u.String(), model: c.Model, key: c.APIKey,
		timeout: c.Timeout, client: c.HTTPClient, log: c.Logger}
	if l.timeout <= 0 {
		l.timeout = DefaultLLMTimeout
	}
	if l.client == nil {
		l.client = &http.Client{}
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// Name is the configured model's name.
func (l *LLM) Name() string { return l.model }

// chatMessage is one message of a chat completion.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// maxAnswerBytes bounds what is read of an answer: copy for twelve platforms is a few KB.
const maxAnswerBytes = 4 << 20

// upstream is the error of a model that could not be used: the client sees a 502 with what
// went wrong, never the key.
func (l *LLM) upstream(cause error, format string, args ...any) error {
	msg := l.redact(fmt.Sprintf(format, args...))
	e := apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, msg)
	if cause != nil {
		return e.Wrap(errors.New(l.redact(cause.Error())))
	}
	return e
}

// redact removes the key from text that came from elsewhere (an upstream error body may echo
// the Authorization header it refused).
func (l *LLM) redact(s string) string {
	if l.key == "" {
		return s
	}
	return strings.ReplaceAll(s, l.key, "[redacted]")
}

// complete sends one chat completion and returns the content of its first choice.
func (l *LLM) complete(ctx context.Context, msgs []chatMessage, temperature float64) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	for {
		req := chatRequest{Model: l.model, Messages: msgs}
		if !l.noJSONMode.Load() {
			req.ResponseFormat = &responseFormat{Type: "json_object"}
		}
		if !l.noTemperature.Load() {
			req.Temperature = &temperature
		}
		start := time.Now()
		status, body, err := l.post(ctx, req)
		l.log.Debug("language model call", "model", l.model, "status", status, "duration", time.Since(start),
			"json_mode", req.ResponseFormat != nil)
		switch {
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return "", l.upstream(err, "the language model did not answer within %s", l.timeout)
		case err != nil && ctx.Err() != nil:
			return "", fmt.Errorf("language model call: %w", ctx.Err())
		case err != nil:
			return "", l.upstream(err, "could not reach the language model at %s", l.host())
		}
		msg := upstreamMessage(body)
		if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
			// Drop a parameter the server does not take, once, and ask again.
			low := strings.ToLower(msg)
			if req.ResponseFormat != nil && strings.Contains(low, "response_format") {
				l.noJSONMode.Store(true)
				continue
			}
			if req.Temperature != nil && strings.Contains(low, "temperature") {
				l.noTemperature.Store(true)
				continue
			}
		}
		if status < 200 || status > 299 {
			return "", l.upstream(nil, "the language model answered %d%s", status, l.describe(status, msg))
		}
		var cr chatResponse
		if err := json.Unmarshal(body, &cr); err != nil || len(cr.Choices) == 0 {
			// Not a chat-completions answer at all: a proxy's page, a wrong base URL.
			return "", l.upstream(err, "the language model at %s did not answer a chat completion (is the URL the API's base, ending in /v1?)", l.host())
		}
		return cr.Choices[0].Message.Content, nil
	}
}

func (l *LLM) post(ctx context.Context, cr chatRequest) (int, []byte, error) {
	payload, err := json.Marshal(cr)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if l.key != "" {
		req.Header.Set("Authorization", "Bearer "+l.key)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, body, nil
}

func (l *LLM) host() string {
	if u, err := url.Parse(l.endpoint); err == nil {
		return u.Host
	}
	return "the configured URL"
}

// describe says what an upstream status means for the operator, with the server's own words.
func (l *LLM) describe(status int, msg string) string {
	var what string
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		what = "the configured API key was refused"
	case status == http.StatusNotFound:
		what = "no such model or endpoint"
	case status == http.StatusTooManyRequests:
		what = "rate limited or out of quota"
	case status >= 500:
		what = "the model's server failed"
	}
	parts := []string{}
	if what != "" {
		parts = append(parts, what)
	}
	if msg != "" {
		parts = append(parts, l.redact(msg))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ": ")
}

// upstreamMessage extracts an error message from an error body: OpenAI's {"error":{"message"}},
// the {"error":"..."} of several local servers, or the start of the text.
func upstreamMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(e.Error, &s) == nil:
			msg = s
		}
	}
	if msg == "" && !json.Valid(body) {
		msg = string(body)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	return shorten(msg, []platform.TextLimit{{Max: 300, Unit: platform.UnitCharacters}})
}

// checked is a model's answer as reelay reads it: the value to answer, what is wrong with
// it, and whether it can be answered anyway (its problems are over-long texts, which are
// trimmed) or not (not JSON, parts missing).
type checked[T any] struct {
	value    T
	problems []string
	usable   bool
}

// ask asks, checks the answer, and when it has problems asks once more with them listed. The
// better of the two answers is returned: the second when usable, else the first when usable,
// else a 502.
func ask[T any](ctx context.Context, l *LLM, what string, msgs []chatMessage, check func(content string) checked[T]) (T, error) {
	var zero T
	content, err := l.complete(ctx, msgs, 0.7)
	if err != nil {
		return zero, err
	}
	first := check(content)
	if len(first.problems) == 0 {
		return first.value, nil
	}
	l.log.Info("language model answer needs correcting; asking again", "model", l.model, "problems", len(first.problems))
	msgs = append(msgs, chatMessage{Role: "assistant", Content: content}, chatMessage{Role: "user", Content: "Your answer has these problems:\n- " +
		strings.Join(first.problems, "\n- ") + "\nAnswer again with the complete corrected JSON object only."})
	content, err = l.complete(ctx, msgs, 0.7)
	if err != nil {
		if first.usable {
			return first.value, nil
		}
		return zero, err
	}
	second := check(content)
	switch {
	case second.usable:
		return second.value, nil
	case first.usable:
		return first.value, nil
	}
	return zero, l.upstream(nil, "the language model %s answered an unusable %s twice: %s", l.model, what, strings.Join(second.problems, "; "))
}

// jsonObject finds the JSON object in a model's content, which some models wrap in a code
// fence or a sentence despite being asked not to.
func jsonObject(content string) []byte {
	s := strings.TrimSpace(content)
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		s = s[i : j+1]
	}
	return []byte(s)
}

// stringList takes a JSON array of strings, or one string of space- or comma-separated items
// (what models write for hashtags now and then).
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*s = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*s = strings.FieldsFunc(one, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
	return nil
}

type llmCopy struct {
	Text     string     `json:"text"`
	Hook     string     `json:"hook"`
	Hashtags stringList `json:"hashtags"`
	Title    string     `json:"title"`
	JEV      stringList `json:"jev"`
}

var toneGuides = map[string]string{
	ToneViral:        "bold, punchy and curiosity-driven; short lines; emoji welcome",
	ToneEngaging:     "warm and conversational; speak to the viewer and invite comments",
	ToneEducational:  "clear and informative; explain the point step by step",
	ToneHumorous:     "playful and witty; light jokes that fit the subject",
	ToneProfessional: "polished and credible; no slang, no emoji",
}

func unitName(unit string) string {
	switch unit {
	case platform.UnitGraphemes:
		return "graphemes (user-perceived characters)"
	case platform.UnitUTF16:
		return "UTF-16 code units (an emoji counts 2)"
	case platform.UnitBytes:
		return "UTF-8 bytes (an emoji counts 4, an accented letter 2)"
	case platform.UnitEmojiBytes:
		return "characters, but an emoji counts its UTF-8 bytes (usually 4)"
	default:
		return "characters"
	}
}

func (l *LLM) adaptMessages(req AdaptRequest) []chatMessage {
	var sys strings.Builder
	sys.WriteString(`You write social media copy for short vertical videos. Answer with one JSON object and nothing else, shaped like:
{"adapted": {"<platform>": {"hook": "...", "text": "...", "hashtags": ["#tag"], "title": "..."}}}
Rules:
- One entry per platform listed, with exactly those keys.
- hook: the opening line, built on the script's strongest idea (a question, a number, a surprising claim). text starts with it.
- text: the complete post, ready to publish: the hook, the body, a call to action, and the hashtags at its end where the platform uses them; written for that platform's audience in the requested tone.
- hashtags: the hashtags used in text, each "#" followed by letters, digits or underscores only.
- title: only for platforms listed with a title limit.
- Never exceed a limit. Limits are counted in the unit given.
- Say only what the script says; invent no facts, numbers or quotes.`)
	if req.IncludeJEV {
		sys.WriteString("\n- jev: also give, per platform, \"jev\": the on-screen text lines of a jump-cut edit of the video: the hook, one line per key point, then the call to action; each line at most 42 characters.")
	}
	var u strings.Builder
	fmt.Fprintf(&u, "Tone: %s (%s).\nPlatforms and limits:\n", req.Tone, toneGuides[req.Tone])
	for _, name := range req.Platforms {
		lim, _ := LimitsOf(name)
		tg := targets[name]
		t := lim.Text[0] // the platform's own (the interface's 5000 characters when it has none)
		fmt.Fprintf(&u, "- %s: text at most %d %s", name, t.Max, unitName(t.Unit))
		if len(lim.Title) > 0 {
			fmt.Fprintf(&u, "; title at most %d %s", lim.Title[0].Max, unitName(lim.Title[0].Unit))
		}
		switch {
		case tg.tags == 0:
			u.WriteString("; no hashtags")
		case tg.tags == 1:
			u.WriteString("; one hashtag")
		default:
			fmt.Fprintf(&u, "; about %d hashtags", tg.tags)
		}
		if tg.soft > 0 {
			fmt.Fprintf(&u, "; best under %d", tg.soft)
		}
		u.WriteString("\n")
	}
	fmt.Fprintf(&u, "Script:\n\"\"\"\n%s\n\"\"\"", req.Prompt)
	return []chatMessage{{Role: "system", Content: sys.String()}, {Role: "user", Content: u.String()}}
}

// Adapt asks the model for copy, and makes sure of what it answers: every platform present,
// texts within limits (asked again once, then trimmed at sentence boundaries), hashtags
// well-formed.
func (l *LLM) Adapt(ctx context.Context, req AdaptRequest) (Adapted, error) {
	if req.Tone == "" {
		req.Tone = DefaultTone
	}
	check := func(content string) checked[Adapted] {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(jsonObject(content), &raw); err != nil {
			return checked[Adapted]{problems: []string{"it is not valid JSON (" + err.Error() + ")"}}
		}
		if inner, ok := raw["adapted"]; ok {
			raw = nil
			if err := json.Unmarshal(inner, &raw); err != nil {
				return checked[Adapted]{problems: []string{`"adapted" is not an object keyed by platform`}}
			}
		}
		out := Adapted{}
		var structural, long []string
		for _, name := range req.Platforms {
			var c llmCopy
			b, ok := raw[name]
			if !ok {
				structural = append(structural, name+" is missing")
				continue
			}
			if err := json.Unmarshal(b, &c); err != nil {
				structural = append(structural, name+" is not an object with text, hook and hashtags")
				continue
			}
			c.Text, c.Hook, c.Title = strings.TrimSpace(validUTF8(c.Text)), strings.TrimSpace(validUTF8(c.Hook)), strings.TrimSpace(validUTF8(c.Title))
			if c.Text == "" {
				structural = append(structural, name+" has no text")
				continue
			}
			lim, _ := LimitsOf(name)
			if t := lim.Text[0]; !fits(c.Text, lim.Text) {
				long = append(long, fmt.Sprintf("%s text is %d %s long; the limit is %d: shorten it", name, t.Count(c.Text), unitName(t.Unit), t.Max))
			}
			if len(lim.Title) > 0 && c.Title != "" && !fits(c.Title, lim.Title) {
				t := lim.Title[0]
				long = append(long, fmt.Sprintf("%s title is %d %s long; the limit is %d: shorten it", name, t.Count(c.Title), unitName(t.Unit), t.Max))
			}
			out[name] = finishCopy(name, c, lim, req.IncludeJEV)
		}
		return checked[Adapted]{value: out, problems: append(structural, long...), usable: len(structural) == 0}
	}
	return ask(ctx, l, "copy", l.adaptMessages(req), check)
}

// finishCopy makes a model's copy safe to answer: texts trimmed to the limits (whole sentences
// first), hashtags well-formed and unique, a title where the platform has one, jump-cut lines
// when asked for and within their limit.
func finishCopy(name string, c llmCopy, lim Limits, jev bool) Copy {
	out := Copy{Text: trimAtSentences(c.Text, lim.Text)}
	if name == platform.YouTube {
		clean := strings.NewReplacer("<", "‹", ">", "›").Replace
		out.Text, c.Hook, c.Title = clean(out.Text), clean(c.Hook), clean(c.Title)
	}
	// The hook is the opening of the text, as the contract says; a model that wrote another
	// one gets its text's first sentence as the hook.
	out.Hook = c.Hook
	if out.Hook == "" || !strings.HasPrefix(out.Text, out.Hook) {
		out.Hook = firstLine(out.Text)
	}
	// The hashtags are those in the text: one the model listed but left out is added to the
	// text's closing tags when it fits there, else dropped from the list.
	out.Hashtags = []string{}
	seen := map[string]bool{}
	for _, h := range c.Hashtags {
		t := normalizeHashtag(h)
		if t == "" || seen[strings.ToLower(t)] || len(out.Hashtags) == 30 {
			continue
		}
		if !containsTag(out.Text, t) {
			sep := "\n\n"
			if _, tags := splitTrailingTags(out.Text); tags != "" {
				sep = " "
			}
			if !fits(out.Text+sep+t, lim.Text) {
				continue
			}
			out.Text += sep + t
		}
		seen[strings.ToLower(t)] = true
		out.Hashtags = append(out.Hashtags, t)
	}
	if len(lim.Title) > 0 {
		if c.Title == "" {
			c.Title = strings.TrimSpace(stripEmoji(out.Hook))
		}
		out.Title = shorten(c.Title, lim.Title)
	}
	if jev {
		if len(c.JEV) > 0 {
			for _, line := range c.JEV {
				if line = strings.TrimSpace(line); line != "" {
					out.JEV = append(out.JEV, shorten(line, []platform.TextLimit{JEVLineLimit}))
				}
			}
		} else {
			ss := sentences(out.Text)
			body := []string{}
			if len(ss) > 1 {
				body = ss[1:]
			}
			out.JEV = jevLines(out.Hook, body, "")
		}
	}
	return out
}

// containsTag reports whether text has tag as a whole hashtag, in any case (#coldbrew is in
// "... #ColdBrew", #cold is not).
func containsTag(text, tag string) bool {
	low, t := strings.ToLower(text), strings.ToLower(tag)
	for i := 0; ; {
		j := strings.Index(low[i:], t)
		if j < 0 {
			return false
		}
		end := i + j + len(t)
		if r, _ := utf8.DecodeRuneInString(low[end:]); end == len(low) || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return true
		}
		i = end
	}
}

func firstLine(s string) string {
	if ss := sentences(s); len(ss) > 0 {
		return ss[0]
	}
	return s
}

// stripEmoji removes pictographs (and what joins them) from a hook used as a title.
func stripEmoji(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x1F000 || (r >= 0x2600 && r <= 0x27BF) || r == 0x200D || (r >= 0xFE00 && r <= 0xFE0F) {
			continue
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

type llmScene struct {
	Title    string `json:"title"`
	Prompt   string `json:"prompt"`
	AudioCue string `json:"audioCue"`
	Camera   string `json:"camera"`
}

// Scene field bounds: what a video generator reads usefully, and what a page shows.
var (
	sceneTitleLimit  = []platform.TextLimit{{Max: 100, Unit: platform.UnitCharacters}}
	scenePromptLimit = []platform.TextLimit{{Max: 1500, Unit: platform.UnitCharacters}}
	sceneAudioLimit  = []platform.TextLimit{{Max: 500, Unit: platform.UnitCharacters}}
)

// Storyboard asks the model for the scenes' content; the timing (how many scenes, their
// timecodes) is reelay's, never the model's.
func (l *LLM) Storyboard(ctx context.Context, req StoryboardRequest) (Storyboard, error) {
	n := SceneCount(req.DurationSeconds)
	style, camera := strings.TrimSpace(req.Style), strings.TrimSpace(req.Camera)
	sys := `You are a storyboard artist for short vertical (9:16) videos. Answer with one JSON object and nothing else, shaped like:
{"scenes": [{"title": "...", "prompt": "...", "audioCue": "...", "camera": "..."}]}
Rules:
- Exactly the number of scenes asked for, each 5 seconds long, consecutive, following the topic in order: the first scene hooks the viewer, the last pays off.
- prompt: a self-contained visual description for a text-to-video model: subject, setting, action, framing, lighting, visual style and camera movement; no on-screen text.
- audioCue: music and sound for the scene, with its voice-over line in quotes when there is one.
- camera: the scene's camera movement, in a few words.
- title: a short name for the scene.`
	var u strings.Builder
	fmt.Fprintf(&u, "Scenes: %d (%d seconds in all).\n", n, n*SceneSeconds)
	if style != "" {
		fmt.Fprintf(&u, "Visual style, to use in every prompt: %s.\n", style)
	}
	if camera != "" {
		fmt.Fprintf(&u, "Camera movement, to use in every scene: %s.\n", camera)
	}
	fmt.Fprintf(&u, "Topic:\n\"\"\"\n%s\n\"\"\"", req.Topic)

	check := func(content string) checked[Storyboard] {
		var raw struct {
			Scenes []llmScene `json:"scenes"`
		}
		if err := json.Unmarshal(jsonObject(content), &raw); err != nil {
			return checked[Storyboard]{problems: []string{"it is not valid JSON with a scenes array (" + err.Error() + ")"}}
		}
		if len(raw.Scenes) < n {
			return checked[Storyboard]{problems: []string{fmt.Sprintf("it has %d scenes; %d are needed", len(raw.Scenes), n)}}
		}
		// More scenes than asked for: the first n are the storyboard, the rest would run past
		// the duration.
		var out Storyboard
		var problems []string
		for i, sc := range raw.Scenes[:n] {
			sc.Prompt = strings.TrimSpace(validUTF8(sc.Prompt))
			if sc.Prompt == "" {
				problems = append(problems, fmt.Sprintf("scene %d has no prompt", i+1))
				continue
			}
			out.Scenes = append(out.Scenes, finishScene(i, sc, style, camera))
		}
		return checked[Storyboard]{value: out, problems: problems, usable: len(problems) == 0}
	}
	return ask(ctx, l, "storyboard", []chatMessage{{Role: "system", Content: sys}, {Role: "user", Content: u.String()}}, check)
}

// finishScene fills what the model left out and makes sure the style and camera asked for are
// in the prompt.
func finishScene(i int, s llmScene, style, camera string) Scene {
	sc := Scene{Title: strings.TrimSpace(s.Title), Prompt: s.Prompt, Timecode: Timecode(i),
		AudioCue: strings.TrimSpace(s.AudioCue), Camera: strings.TrimSpace(s.Camera)}
	if sc.Title == "" {
		sc.Title = fmt.Sprintf("Scene %d", i+1)
	}
	if sc.Camera == "" {
		sc.Camera = camera
	}
	if sc.Camera == "" {
		sc.Camera = cameraMoves[i%len(cameraMoves)]
	}
	low := strings.ToLower(sc.Prompt)
	if style != "" && !strings.Contains(low, strings.ToLower(style)) {
		sc.Prompt = "Style: " + style + ". " + sc.Prompt
	}
	if camera != "" && !strings.Contains(low, strings.ToLower(camera)) {
		sc.Prompt = strings.TrimRight(sc.Prompt, " ") + " Camera: " + camera + "."
	}
	sc.Title = shorten(sc.Title, sceneTitleLimit)
	sc.Prompt = shorten(sc.Prompt, scenePromptLimit)
	sc.AudioCue = shorten(sc.AudioCue, sceneAudioLimit)
	return sc
}
