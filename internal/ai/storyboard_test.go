package ai

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestSceneMath(t *testing.T) {
	tests := []struct {
		seconds, rounded, scenes int
		last                     string
	}{
		{0, 30, 6, "00:25-00:30"}, // the default
		{5, 5, 1, "00:00-00:05"},
		{6, 10, 2, "00:05-00:10"},
		{30, 30, 6, "00:25-00:30"},
		{32, 35, 7, "00:30-00:35"},
		{59, 60, 12, "00:55-01:00"},
		{61, 65, 13, "01:00-01:05"},
		{299, 300, 60, "04:55-05:00"},
		{300, 300, 60, "04:55-05:00"},
	}
	for _, tt := range tests {
		if got := RoundDuration(tt.seconds); got != tt.rounded {
			t.Errorf("RoundDuration(%d) = %d, want %d", tt.seconds, got, tt.rounded)
		}
		if got := SceneCount(tt.seconds); got != tt.scenes {
			t.Errorf("SceneCount(%d) = %d, want %d", tt.seconds, got, tt.scenes)
		}
		if got := Timecode(tt.scenes - 1); got != tt.last {
			t.Errorf("last timecode for %d s = %q, want %q", tt.seconds, got, tt.last)
		}
	}
	if Timecode(0) != "00:00-00:05" || Timecode(1) != "00:05-00:10" {
		t.Errorf("first timecodes: %q %q", Timecode(0), Timecode(1))
	}
}

func TestBuiltinStoryboard(t *testing.T) {
	topic := "Cold brew is easier than you think. Grind the beans coarse. Steep them for 16 hours in the fridge. Strain twice through a paper filter."
	tests := []struct {
		name     string
		req      StoryboardRequest
		scenes   int
		narrated []string // the topic's sentences, in the order the voice-over says them
	}{
		{"fewer sentences than scenes", StoryboardRequest{Topic: topic, DurationSeconds: 30, Style: "cinematic", Camera: "slow dolly-in"}, 6,
			[]string{"Cold brew is easier", "Grind the beans", "Steep them", "Strain twice"}},
		{"as many", StoryboardRequest{Topic: topic, DurationSeconds: 20, Style: "anime style"}, 4,
			[]string{"Cold brew is easier", "Grind the beans", "Steep them", "Strain twice"}},
		{"more sentences than scenes", StoryboardRequest{Topic: topic, DurationSeconds: 10}, 2,
			[]string{"Cold brew is easier", "Grind the beans", "Steep them", "Strain twice"}},
		{"one scene", StoryboardRequest{Topic: "Just one idea", DurationSeconds: 5}, 1, []string{"Just one idea"}},
		{"rounded up", StoryboardRequest{Topic: topic, DurationSeconds: RoundDuration(32)}, 7, nil},
		{"longest", StoryboardRequest{Topic: topic, DurationSeconds: 300}, 60, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb, err := Builtin{}.Storyboard(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(sb.Scenes) != tt.scenes {
				t.Fatalf("%d scenes, want %d", len(sb.Scenes), tt.scenes)
			}
			var audio strings.Builder
			for i, sc := range sb.Scenes {
				if sc.Timecode != Timecode(i) {
					t.Errorf("scene %d timecode %q, want %q", i, sc.Timecode, Timecode(i))
				}
				if sc.Title == "" || sc.Prompt == "" || sc.AudioCue == "" || sc.Camera == "" {
					t.Errorf("scene %d has an empty field: %+v", i, sc)
				}
				if tt.req.Style != "" && !strings.Contains(sc.Prompt, tt.req.Style) {
					t.Errorf("scene %d prompt lacks the style %q: %q", i, tt.req.Style, sc.Prompt)
				}
				if strings.Contains(sc.Prompt, "style style") {
					t.Errorf("scene %d prompt repeats 'style': %q", i, sc.Prompt)
				}
				if tt.req.Camera != "" && (sc.Camera != tt.req.Camera || !strings.Contains(sc.Prompt, tt.req.Camera)) {
					t.Errorf("scene %d does not use the camera %q: %+v", i, tt.req.Camera, sc)
				}
				if tt.req.Camera == "" && i > 0 && sc.Camera == sb.Scenes[i-1].Camera {
					t.Errorf("scenes %d and %d repeat the camera movement %q", i-1, i, sc.Camera)
				}
				audio.WriteString(sc.AudioCue + "\n")
			}
			// The voice-over follows the topic in order.
			rest := audio.String()
			for _, s := range tt.narrated {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("voice-over lacks %q (or has it out of order): %s", s, audio.String())
				}
				rest = rest[i+len(s):]
			}
			if !strings.HasPrefix(sb.Scenes[0].Title, "Hook") {
				t.Errorf("first scene is not the hook: %q", sb.Scenes[0].Title)
			}
		})
	}
}

func TestBuiltinStoryboardDeterministic(t *testing.T) {
	req := StoryboardRequest{Topic: coldBrew, DurationSeconds: 45, Style: "film noir"}
	a, _ := Builtin{}.Storyboard(context.Background(), req)
	b, _ := Builtin{}.Storyboard(context.Background(), req)
	if !reflect.DeepEqual(a, b) {
		t.Error("two storyboards of the same request differ")
	}
	if _, err := (Builtin{}).Storyboard(context.Background(), StoryboardRequest{Topic: "  ", DurationSeconds: 30}); err == nil {
		t.Error("blank topic accepted")
	}
}
