package web

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestSafeNext(t *testing.T) {
	cases := map[string]string{
		"":                       "/",
		"/posts?status=failed":   "/posts?status=failed",
		"/posts/abc#x":           "/posts/abc#x",
		"https://evil.example/":  "/",
		"//evil.example/":        "/",
		"/\\evil.example":        "/",
		"\\\\evil.example":       "/",
		"javascript:alert(1)":    "/",
		"/signin?next=/x":        "/",
		"/ok\r\nSet-Cookie: x=1": "/",
		"posts":                  "/",
		"/%2F%2Fevil.example":    "/%2F%2Fevil.example",
		"/a\x00b":                "/",
	}
	for in, want := range cases {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSectionsFollowTheRegistry(t *testing.T) {
	// Bluesky counts graphemes and its text falls back to the caption (or title).
	// Then the fit every platform object takes, with its choices.
	sec := sectionOf("bluesky")
	if len(sec.Fields) != 2 || sec.Fields[0].Key != "text" || sec.Fields[0].Unit != "graphemes" || sec.Fields[0].Max != 300 ||
		sec.Fields[0].Fallback != "caption_or_title" || sec.Fields[1].Key != "fit" || sec.Fields[1].Kind != "choice" ||
		len(sec.Fields[1].Choices) != 3 {
		t.Errorf("bluesky section: %+v", sec.Fields)
	}
	// TikTok: a choice with the registry's choices, booleans, a title counted in UTF-16 units.
	kinds := map[string]optionField{}
	for _, f := range sectionOf("tiktok").Fields {
		kinds[f.Key] = f
	}
	if f := kinds["mode"]; f.Kind != "choice" || len(f.Choices) != 2 || f.Default != "inbox" {
		t.Errorf("tiktok mode: %+v", f)
	}
	if f := kinds["allow_duet"]; f.Kind != "boolean" || f.Default != "true" {
		t.Errorf("tiktok allow_duet: %+v", f)
	}
	if f := kinds["title"]; f.Unit != "utf16" || f.Max != 2200 {
		t.Errorf("tiktok title: %+v", f)
	}
	// YouTube's description is counted in bytes and falls back to the caption only.
	for _, f := range sectionOf("youtube").Fields {
		if f.Key == "description" && (f.Unit != "bytes" || f.Fallback != "caption" || f.Kind != "textarea") {
			t.Errorf("youtube description: %+v", f)
		}
	}
}

// TestNoticesCoverRedirects holds the redirects that announce an outcome (done=...) to the
// notices the pages know, so that none lands on a page that says nothing.
func TestNoticesCoverRedirects(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	done := regexp.MustCompile(`done=([a-z_]+)`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range done.FindAllStringSubmatch(string(src), -1) {
			found++
			if _, ok := notices[m[1]]; !ok && m[1] != "refreshed" {
				t.Errorf("%s redirects with done=%s, which no notice announces", f, m[1])
			}
		}
	}
	if found < 5 {
		t.Fatalf("only %d done= redirects found", found)
	}
}
