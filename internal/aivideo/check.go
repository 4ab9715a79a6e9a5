package aivideo

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
)

// maxAPIKeyChars bounds a provider key given with a request; real ones are under 200.
const maxAPIKeyChars = 1000

// CheckGenerate validates a request for a clip (prompt, imageUrl, aspectRatio, apiKey, as the
// API names them) and answers its input with the aspect ratio defaulted. The HTTP API and the
// web dashboard both check with it.
func CheckGenerate(prompt, imageURL, aspect, apiKey string) (GenerateInput, error) {
	var f apierr.Fields
	ai.CheckScript(&f, "prompt", prompt)
	aspect = CheckAspect(&f, aspect)
	CheckMediaLink(&f, "imageUrl", imageURL)
	CheckProviderKey(&f, apiKey)
	if err := f.Err(); err != nil {
		return GenerateInput{}, err
	}
	return GenerateInput{Prompt: prompt, ImageURL: imageURL, AspectRatio: aspect}, nil
}

// CheckStitch validates a request to render and join storyboard scenes (scenes[i].prompt,
// .videoUrl and .title, aspectRatio, apiKey, as the API names them) and answers its input with
// the aspect ratio defaulted. The HTTP API and the web dashboard both check with it.
func CheckStitch(scenes []Scene, aspect, apiKey string) (StitchInput, error) {
	var f apierr.Fields
	switch {
	case len(scenes) == 0:
		f.Add("scenes", "is required: at least one scene")
	case len(scenes) > MaxScenes:
		f.Addf("scenes", "must have at most %d scenes, got %d", MaxScenes, len(scenes))
	}
	for i, sc := range scenes {
		field := fmt.Sprintf("scenes[%d]", i)
		ai.CheckScript(&f, field+".prompt", sc.Prompt)
		CheckMediaLink(&f, field+".videoUrl", sc.VideoURL)
		ai.CheckNote(&f, field+".title", sc.Title)
	}
	aspect = CheckAspect(&f, aspect)
	CheckProviderKey(&f, apiKey)
	if err := f.Err(); err != nil {
		return StitchInput{}, err
	}
	return StitchInput{Scenes: scenes, AspectRatio: aspect}, nil
}

// CheckAspect validates an aspect ratio and returns it, defaulted.
func CheckAspect(f *apierr.Fields, v string) string {
	switch v {
	case "":
		return DefaultAspect
	case Vertical, Horizontal:
		return v
	}
	f.Addf("aspectRatio", "must be %s or %s, got %q", Vertical, Horizontal, v)
	return ""
}

// CheckMediaLink validates an optional media URL's form; what it serves is checked when it is
// fetched.
func CheckMediaLink(f *apierr.Fields, field, v string) {
	if v == "" {
		return
	}
	if _, err := media.ParseURL(v); err != nil {
		f.Add(field, err.Error())
	}
}

// CheckProviderKey validates an optional video provider key.
func CheckProviderKey(f *apierr.Fields, v string) {
	switch {
	case utf8.RuneCountInString(v) > maxAPIKeyChars:
		f.Addf("apiKey", "must be at most %d characters", maxAPIKeyChars)
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }):
		f.Add("apiKey", "must not contain spaces or control characters")
	}
}
