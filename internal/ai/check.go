package ai

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Bounds of the AI requests' texts: a script for a short video is a few hundred words, and a
// style or camera note a phrase.
const (
	MaxScriptChars = 10000
	MaxNoteChars   = 200
)

// CheckAdapt validates a request for adapted copy and applies its defaults (the default
// platforms and tone), naming the API's fields (prompt, platforms[i], tone). The HTTP API and
// the web dashboard both check with it.
func CheckAdapt(req *AdaptRequest) error {
	var f apierr.Fields
	CheckScript(&f, "prompt", req.Prompt)
	if req.Tone == "" {
		req.Tone = DefaultTone
	} else if !ValidTone(req.Tone) {
		f.Addf("tone", "must be one of %s", strings.Join(Tones, ", "))
	}
	if len(req.Platforms) == 0 {
		req.Platforms = DefaultPlatforms
	}
	seen := map[string]bool{}
	for i, p := range req.Platforms {
		field := fmt.Sprintf("platforms[%d]", i)
		switch {
		case !platform.Valid(p):
			f.Addf(field, "unknown platform %q; platforms are %s", p, strings.Join(platform.All, ", "))
		case seen[p]:
			f.Addf(field, "%s is listed twice", p)
		}
		seen[p] = true
	}
	return f.Err()
}

// CheckStoryboard validates a storyboard request (topic, durationSeconds, style, camera) and
// answers it with its defaults applied and the duration rounded to whole scenes; duration nil
// is the default.
func CheckStoryboard(topic string, duration *int, style, camera string) (StoryboardRequest, error) {
	var f apierr.Fields
	CheckScript(&f, "topic", topic)
	seconds := DefaultDurationSeconds
	if duration != nil {
		seconds = *duration
		if seconds < MinDurationSeconds || seconds > MaxDurationSeconds {
			f.Addf("durationSeconds", "must be between %d and %d seconds, got %d", MinDurationSeconds, MaxDurationSeconds, seconds)
		}
	}
	CheckNote(&f, "style", style)
	CheckNote(&f, "camera", camera)
	if err := f.Err(); err != nil {
		return StoryboardRequest{}, err
	}
	return StoryboardRequest{Topic: topic, DurationSeconds: RoundDuration(seconds), Style: style, Camera: camera}, nil
}

// CheckScript validates a required script or topic. Its sentences become the platforms'
// copy, so it is held to what a post's texts are: no control characters but newline and tab.
func CheckScript(f *apierr.Fields, field, v string) {
	switch {
	case !utf8.ValidString(v):
		f.Add(field, "must be valid UTF-8")
	case strings.TrimSpace(v) == "":
		f.Add(field, "is required")
	case utf8.RuneCountInString(v) > MaxScriptChars:
		f.Addf(field, "must be at most %d characters, got %d", MaxScriptChars, utf8.RuneCountInString(v))
	default:
		f.NoControl(field, v)
	}
}

// CheckNote validates an optional one-line note (style, camera, a scene's title).
func CheckNote(f *apierr.Fields, field, v string) {
	switch {
	case utf8.RuneCountInString(v) > MaxNoteChars:
		f.Addf(field, "must be at most %d characters, got %d", MaxNoteChars, utf8.RuneCountInString(v))
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		f.Add(field, "must be one line without control characters")
	}
}
