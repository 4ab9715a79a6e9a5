package ai

import (
	"context"
	"fmt"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Storyboard timing: the interface's scenes are 5 seconds long.
const (
	SceneSeconds           = 5
	DefaultDurationSeconds = 30
	MinDurationSeconds     = 5
	// MaxDurationSeconds is the longest storyboard, 60 scenes: five minutes covers every
	// platform's short-video format (YouTube Shorts 3 min, Threads 5 min).
	MaxDurationSeconds = 300
)

// StoryboardRequest is what POST /ai/storyboard/create asks for. DurationSeconds is a
// multiple of SceneSeconds within bounds (see RoundDuration).
type StoryboardRequest struct {
	Topic           string
	DurationSeconds int
	Style           string
	Camera          string
}

// Scene is one 5-second scene.
type Scene struct {
	Title string `json:"title"`
	// Prompt is the visual prompt for generating the scene, with the style and camera in it.
	Prompt string `json:"prompt"`
	// Timecode is the span of the scene, "MM:SS-MM:SS".
	Timecode string `json:"timecode"`
	AudioCue string `json:"audioCue"`
	// Camera is the camera movement.
	Camera string `json:"camera"`
}

// Storyboard is a video as consecutive scenes.
type Storyboard struct {
	Scenes []Scene `json:"scenes"`
}

// errTopicRequired answers a topic with nothing to storyboard in it.
var errTopicRequired = apierr.Field("topic", "is required")

// RoundDuration rounds a duration up to whole scenes, so that the storyboard covers at least
// the time asked for (32 s → 35 s, 7 scenes); 0 is the default duration.
func RoundDuration(seconds int) int {
	if seconds == 0 {
		return DefaultDurationSeconds
	}
	return (seconds + SceneSeconds - 1) / SceneSeconds * SceneSeconds
}

// SceneCount is the number of scenes of a storyboard of the given (rounded) duration.
func SceneCount(seconds int) int { return RoundDuration(seconds) / SceneSeconds }

// Timecode is the span of the scene at index i (from 0), e.g. "00:05-00:10".
func Timecode(i int) string {
	from, to := i*SceneSeconds, (i+1)*SceneSeconds
	return fmt.Sprintf("%02d:%02d-%02d:%02d", from/60, from%60, to/60, to%60)
}

// cameraMoves are the built-in engine's movements, in an order that keeps consecutive shots
// different; the hook opens with a push-in and the last scene pulls back.
var cameraMoves = []string{
	"handheld tracking shot", "slow dolly-in", "static close-up", "smooth orbit around the subject",
	"top-down overhead shot", "slow pan left to right", "low-angle tilt up", "rack focus from foreground to subject",
}

// shotSizes vary the framing when one sentence of the topic spans several scenes.
var shotSizes = []string{"wide establishing shot", "medium shot", "close-up detail shot", "over-the-shoulder shot"}

// beat is what one scene of the built-in storyboard shows and says.
type beat struct {
	text  string // the sentences of the topic this scene covers
	first bool   // the first scene of its sentence (later ones are new angles on it)
	angle int    // which framing (shotSizes) it takes
}

// beats spreads the topic's sentences over n scenes in order: several sentences share a scene
// when there are more sentences than scenes, and a sentence spans several scenes, each from
// another angle, when there are fewer.
func beats(ss []string, n int) []beat {
	out := make([]beat, n)
	m := len(ss)
	if m >= n {
		next := 0
		for i := range n {
			size := m / n
			if i < m%n {
				size++
			}
			out[i] = beat{text: strings.Join(ss[next:next+size], " "), first: true, angle: i}
			next += size
		}
		return out
	}
	prev, angle := -1, 0
	for i := range n {
		j := i * m / n
		if j != prev {
			angle = 0
		} else {
			angle++
		}
		out[i] = beat{text: ss[j], first: j != prev, angle: angle}
		prev = j
	}
	return out
}

// sceneText bounds what a scene quotes from the topic: a scene is five seconds, about a dozen
// spoken words, and a prompt that runs on dilutes what the generator focuses on.
var sceneText = []platform.TextLimit{{Max: 200, Unit: platform.UnitCharacters}}

// Storyboard splits the topic into scenes that follow its sentences: the first scene is the
// hook, the last the payoff, the rest the topic in order; the voice-over says the topic's own
// words.
func (Builtin) Storyboard(ctx context.Context, req StoryboardRequest) (Storyboard, error) {
	ss := sentences(req.Topic)
	if len(ss) == 0 {
		return Storyboard{}, errTopicRequired
	}
	n := SceneCount(req.DurationSeconds)
	bs := beats(ss, n)
	kws := keywords(ss)
	style := strings.TrimSpace(req.Style)
	camera := strings.TrimSpace(req.Camera)
	scenes := make([]Scene, n)
	for i, b := range bs {
		role := "Beat"
		switch {
		case i == 0:
			role = "Hook"
		case i == n-1 && n > 2:
			role = "Payoff"
		case i == 1 && n > 3:
			role = "Setup"
		}
		move := camera
		if move == "" {
			switch {
			case i == 0:
				move = "fast push-in"
			case i == n-1 && n > 1:
				move = "slow pull-back reveal"
			default:
				move = cameraMoves[(i-1)%len(cameraMoves)]
			}
		}
		text := shorten(b.text, sceneText)
		shot := shotSizes[b.angle%len(shotSizes)]
		if i == 0 && b.angle == 0 {
			shot = "striking close-up"
		}
		var p strings.Builder
		p.WriteString("Vertical 9:16 video")
		if style != "" {
			if strings.HasSuffix(strings.ToLower(style), "style") {
				fmt.Fprintf(&p, ", %s", style)
			} else {
				fmt.Fprintf(&p, ", %s style", style)
			}
		}
		fmt.Fprintf(&p, ". %s, %s, showing: %s", capitalize(shot), move, strings.TrimRight(text, ".!?。！？…"))
		if focus := sceneFocus(kws, b.text); focus != "" {
			fmt.Fprintf(&p, ". Focus on %s", focus)
		}
		switch {
		case i == 0:
			p.WriteString(". Bold, high-contrast first frame that stops the scroll")
		case i == n-1 && n > 1:
			p.WriteString(". Calm, resolved final frame with space for a caption")
		}
		p.WriteString(". No on-screen text.")
		title := role + ": " + sceneTitle(b.text)
		if !b.first {
			title += " (" + shot + ")" // another angle on the sentence before
		}
		scenes[i] = Scene{
			Title:    title,
			Prompt:   p.String(),
			Timecode: Timecode(i),
			AudioCue: audioCue(i, n, b, text),
			Camera:   move,
		}
	}
	return Storyboard{Scenes: scenes}, nil
}

// sceneTitle is a few words naming the scene: the start of its text.
func sceneTitle(text string) string {
	return shorten(strings.TrimRight(text, ".!?。"), []platform.TextLimit{{Max: 40, Unit: platform.UnitCharacters}})
}

// sceneFocus names the topic's keywords that this scene's text mentions (at most two).
func sceneFocus(kws []keyword, text string) string {
	low := strings.ToLower(text)
	var picked []string
	covered := ""
	for _, kw := range kws {
		w := strings.Join(kw.parts, " ")
		lw := strings.ToLower(w)
		if strings.Contains(low, lw) && !strings.Contains(covered, lw) && len(picked) < 2 {
			picked = append(picked, w)
			covered += " " + lw + " "
		}
	}
	return strings.Join(picked, " and ")
}

// audioCue: the music's shape over the video, and the voice-over of the scene's sentence on the
// first scene it appears in.
func audioCue(i, n int, b beat, text string) string {
	var music string
	switch {
	case i == 0:
		music = "Punchy beat drop on the first frame"
	case i == n-1 && n > 1:
		music = "Music resolves and fades out"
	case i == n/2:
		music = "Music lifts into the main groove"
	default:
		music = "Steady beat continues"
	}
	if b.first {
		return fmt.Sprintf("%s; voice-over: \"%s\"", music, text)
	}
	return music + "; ambient sound of the scene, no voice-over"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}
