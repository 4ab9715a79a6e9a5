package publish

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/bluesky"
	"github.com/reelay/reelay/internal/platform/discord"
	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/linkedin"
	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/reddit"
	"github.com/reelay/reelay/internal/platform/telegram"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/tiktok"
	"github.com/reelay/reelay/internal/platform/youtube"
)

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const projectID = "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11"

func valid() Request {
	return Request{ProjectID: projectID, VideoURL: "https://cdn.example/v.mp4", Title: "Hello", Caption: "A caption #go"}
}

func TestCheckStatic(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mut    func(r *Request)
		upload bool
		field  string // "" = valid
	}{
		{"valid", func(r *Request) {}, false, ""},
		{"valid upload", func(r *Request) { r.VideoURL = "" }, true, ""},
		{"no project", func(r *Request) { r.ProjectID = "" }, false, "project_id"},
		{"bad project", func(r *Request) { r.ProjectID = "p1" }, false, "project_id"},
		{"no video", func(r *Request) { r.VideoURL = "" }, false, "video_url"},
		{"both videos", func(r *Request) {}, true, "video_url"},
		{"ftp video", func(r *Request) { r.VideoURL = "ftp://x/v.mp4" }, false, "video_url"},
		{"relative video", func(r *Request) { r.VideoURL = "/v.mp4" }, false, "video_url"},
		{"userinfo video", func(r *Request) { r.VideoURL = "https://u:p@x/v.mp4" }, false, "video_url"},
		{"long url", func(r *Request) { r.VideoURL = "https://x/" + strings.Repeat("a", 2048) }, false, "video_url"},
		{"bad thumbnail", func(r *Request) { r.ThumbnailURL = "file:///etc/passwd" }, false, "thumbnail_url"},
		{"title 100", func(r *Request) { r.Title = strings.Repeat("é", 100) }, false, ""},
		{"title 101", func(r *Request) { r.Title = strings.Repeat("é", 101) }, false, "title"},
		{"caption 5001", func(r *Request) { r.Caption = strings.Repeat("c", 5001) }, false, "caption"},
		{"bad utf8", func(r *Request) { r.Title = "\xff" }, false, "title"},
		{"unknown platform", func(r *Request) { r.Platforms = []string{"youtube", "vine"} }, false, "platforms[1]"},
		{"duplicate platform", func(r *Request) { r.Platforms = []string{"tiktok", "tiktok"} }, false, "platforms[1]"},
		{"bad channel id", func(r *Request) { r.ChannelIDs = []string{"c"} }, false, "channel_ids[0]"},
		{"duplicate channel", func(r *Request) { r.ChannelIDs = []string{projectID, projectID} }, false, "channel_ids[1]"},
		{"schedule ok", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00:00+01:00" }, false, ""},
		{"schedule past", func(r *Request) { r.ScheduledFor = "2026-11-21T11:59:59Z" }, false, "scheduled_for"},
		{"schedule no offset", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00:00" }, false, "scheduled_for"},
		{"schedule without seconds", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00Z" }, false, ""},
		{"schedule offset +0100", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00:00+0100" }, false, ""},
		{"schedule offset +01", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00+01" }, false, ""},
		{"schedule minutes, no offset", func(r *Request) { r.ScheduledFor = "2026-11-22T09:00" }, false, "scheduled_for"},
		{"schedule date only", func(r *Request) { r.ScheduledFor = "2026-11-22" }, false, "scheduled_for"},
		{"schedule far", func(r *Request) { r.ScheduledFor = "2028-01-01T00:00:00Z" }, false, "scheduled_for"},
		{"youtube privacy", func(r *Request) { r.YouTube = &youtube.Options{PrivacyStatus: "friends"} }, false, "youtube.privacy_status"},
		{"tiktok mode", func(r *Request) { r.TikTok = &tiktok.Options{Mode: "draft"} }, false, "tiktok.mode"},
		{"tiktok privacy", func(r *Request) { r.TikTok = &tiktok.Options{PrivacyLevel: "public"} }, false, "tiktok.privacy_level"},
		{"linkedin 3000", func(r *Request) { r.LinkedIn = &linkedin.Options{Commentary: strings.Repeat("l", 3000)} }, false, ""},
		{"linkedin 3001", func(r *Request) { r.LinkedIn = &linkedin.Options{Commentary: strings.Repeat("l", 3001)} }, false, "linkedin.commentary"},
		{"linkedin title", func(r *Request) { r.LinkedIn = &linkedin.Options{Title: strings.Repeat("l", 201)} }, false, "linkedin.title"},
		{"pinterest title", func(r *Request) { r.Pinterest = &pinterest.Options{Title: strings.Repeat("p", 101)} }, false, "pinterest.title"},
		{"pinterest description", func(r *Request) { r.Pinterest = &pinterest.Options{Description: strings.Repeat("p", 501)} }, false, "pinterest.description"},
		{"pinterest link", func(r *Request) { r.Pinterest = &pinterest.Options{Link: "javascript:alert(1)"} }, false, "pinterest.link"},
		{"threads", func(r *Request) { r.Threads = &threads.Options{Text: strings.Repeat("t", 501)} }, false, "threads.text"},
		{"facebook description", func(r *Request) { r.Facebook = &facebook.Options{Description: strings.Repeat("f", 5001)} }, false, "facebook.description"},
		{"facebook title", func(r *Request) { r.Facebook = &facebook.Options{Title: strings.Repeat("f", 201)} }, false, "facebook.title"},
		{"bluesky 120 emoji", func(r *Request) { r.Bluesky = &bluesky.Options{Text: strings.Repeat("👩‍👩‍👧", 120)} }, false, ""},
		{"bluesky 300 emoji, over 3000 bytes", func(r *Request) { r.Bluesky = &bluesky.Options{Text: strings.Repeat("👩‍👩‍👧", 300)} }, false, "bluesky.text"},
		{"youtube title with <", func(r *Request) { r.YouTube = &youtube.Options{Title: "a <b> title"} }, false, "youtube.title"},
		{"youtube description with >", func(r *Request) { r.YouTube = &youtube.Options{Description: "1 > 0"} }, false, "youtube.description"},
		{"youtube category", func(r *Request) { r.YouTube = &youtube.Options{CategoryID: json.RawMessage(`"22"`)} }, false, ""},
		{"youtube category not a number", func(r *Request) { r.YouTube = &youtube.Options{CategoryID: json.RawMessage(`"music"`)} }, false, "youtube.category_id"},
		{"reddit flair text without template", func(r *Request) { r.Reddit = &reddit.Options{FlairText: "OC"} }, false, "reddit.flair_text"},
		{"reddit flair text on a template", func(r *Request) { r.Reddit = &reddit.Options{FlairID: "abc", FlairText: "OC"} }, false, ""},
		{"reddit two-letter subreddit", func(r *Request) { r.Reddit = &reddit.Options{Subreddit: "de"} }, false, ""},
		{"instagram 31 hashtags", func(r *Request) { r.Instagram = &instagram.Options{Caption: strings.Repeat("#tag ", 31)} }, false, "instagram.caption"},
		{"instagram 30 hashtags", func(r *Request) { r.Instagram = &instagram.Options{Caption: strings.Repeat("#tag ", 30)} }, false, ""},
		{"instagram 21 mentions", func(r *Request) { r.Instagram = &instagram.Options{Caption: strings.Repeat("@someone ", 21)} }, false, "instagram.caption"},
		{"bluesky 301", func(r *Request) { r.Bluesky = &bluesky.Options{Text: strings.Repeat("b", 301)} }, false, "bluesky.text"},
		{"telegram", func(r *Request) { r.Telegram = &telegram.Options{Caption: strings.Repeat("t", 1025)} }, false, "telegram.caption"},
		{"discord", func(r *Request) { r.Discord = &discord.Options{Content: strings.Repeat("d", 2001)} }, false, "discord.content"},
		{"mastodon", func(r *Request) { r.Mastodon = &mastodon.Options{Text: strings.Repeat("m", 501)} }, false, "mastodon.text"},
		{"mastodon with its extension", func(r *Request) {
			r.Mastodon = &mastodon.Options{Text: "hi", Visibility: "unlisted", Sensitive: true, SpoilerText: "cw", Language: "de", Description: "alt"}
		}, false, ""},
		{"mastodon warning and text together", func(r *Request) {
			r.Mastodon = &mastodon.Options{Text: strings.Repeat("m", 300), SpoilerText: strings.Repeat("w", 201)}
		}, false, "mastodon.spoiler_text"},
		{"mastodon long link counts 23", func(r *Request) {
			r.Mastodon = &mastodon.Options{Text: strings.Repeat("m", 470) + " https://example.com/" + strings.Repeat("p", 80)}
		}, false, ""},
		{"mastodon long link over", func(r *Request) {
			r.Mastodon = &mastodon.Options{Text: strings.Repeat("m", 480) + " https://example.com/" + strings.Repeat("p", 80)}
		}, false, "mastodon.text"},
		{"mastodon visibility", func(r *Request) { r.Mastodon = &mastodon.Options{Visibility: "followers"} }, false, "mastodon.visibility"},
		{"mastodon language", func(r *Request) { r.Mastodon = &mastodon.Options{Language: "eng"} }, false, "mastodon.language"},
		{"mastodon alt text", func(r *Request) { r.Mastodon = &mastodon.Options{Description: strings.Repeat("a", 1501)} }, false, "mastodon.description"},
		{"reddit title", func(r *Request) { r.Reddit = &reddit.Options{Title: strings.Repeat("r", 301)} }, false, "reddit.title"},
		{"reddit subreddit", func(r *Request) { r.Reddit = &reddit.Options{Subreddit: "r/golang"} }, false, "reddit.subreddit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := valid()
			c.mut(&r)
			_, f := r.CheckStatic(testNow, c.upload, false)
			if c.field == "" {
				if len(f) != 0 {
					t.Fatalf("refused: %v", f)
				}
				return
			}
			if f[c.field] == "" {
				t.Fatalf("no problem reported for %s; got %v", c.field, f)
			}
		})
	}
}

func TestScheduleIsUTC(t *testing.T) {
	t.Parallel()
	r := valid()
	r.ScheduledFor = "2026-11-22T10:30:00+02:00"
	at, f := r.CheckStatic(testNow, false, false)
	if len(f) != 0 || at == nil || !at.Equal(time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)) || at.Location() != time.UTC {
		t.Fatalf("scheduled_for = %v, %v", at, f)
	}
}

func TestEffectiveOptions(t *testing.T) {
	t.Parallel()
	decode := func(raw json.RawMessage, _ Derived) map[string]any {
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	r := valid()
	var f apierr.Fields
	yt := decode(r.EffectiveOptions("youtube", &f))
	if yt["title"] != "Hello" || yt["description"] != "A caption #go" || yt["privacy_status"] != "public" || yt["made_for_kids"] != false {
		t.Errorf("youtube defaults: %v", yt)
	}
	tt := decode(r.EffectiveOptions("tiktok", &f))
	if tt["mode"] != "inbox" || tt["privacy_level"] != "PUBLIC_TO_EVERYONE" || tt["title"] != "A caption #go" ||
		tt["allow_comment"] != true || tt["allow_duet"] != true || tt["allow_stitch"] != true || tt["is_aigc"] != false {
		t.Errorf("tiktok defaults: %v", tt)
	}
	ig := decode(r.EffectiveOptions("instagram", &f))
	if ig["caption"] != "A caption #go" || ig["share_to_feed"] != true {
		t.Errorf("instagram defaults: %v", ig)
	}
	// The platform's own value wins over the fallback; an explicit false stays false.
	no := false
	r.Instagram = &instagram.Options{Caption: "IG only", ShareToFeed: &no}
	ig = decode(r.EffectiveOptions("instagram", &f))
	if ig["caption"] != "IG only" || ig["share_to_feed"] != false {
		t.Errorf("instagram explicit: %v", ig)
	}
	if len(f) != 0 {
		t.Fatalf("valid request refused: %v", f)
	}

	// A caption fine for the service is too long for Bluesky: refused naming caption and the
	// field to set instead.
	r = valid()
	r.Caption = strings.Repeat("x", 301)
	f = nil
	r.EffectiveOptions("bluesky", &f)
	if !strings.Contains(f["caption"], "Bluesky") || !strings.Contains(f["caption"], "bluesky.text") {
		t.Errorf("derived limit: %v", f)
	}
	// Setting the platform's own text resolves it.
	r.Bluesky = &bluesky.Options{Text: "short"}
	f = nil
	r.EffectiveOptions("bluesky", &f)
	if len(f) != 0 {
		t.Errorf("own text still refused: %v", f)
	}

	// Mastodon's extension reaches the provider as given; a content warning counts with the
	// caption the text falls back to.
	r = valid()
	r.Mastodon = &mastodon.Options{Visibility: "private", SpoilerText: "spoilers", Language: "fr", Description: "a cat"}
	f = nil
	md := decode(r.EffectiveOptions("mastodon", &f))
	if md["text"] != "A caption #go" || md["visibility"] != "private" || md["spoiler_text"] != "spoilers" || md["language"] != "fr" ||
		md["description"] != "a cat" || len(f) != 0 {
		t.Errorf("mastodon: %v, %v", md, f)
	}
	r.Caption = strings.Repeat("x", 495)
	f = nil
	r.EffectiveOptions("mastodon", &f)
	if !strings.Contains(f["caption"], "mastodon.spoiler_text") {
		t.Errorf("a caption that fits alone but not with the warning: %v", f)
	}

	// Required choices.
	r = valid()
	f = nil
	r.EffectiveOptions("pinterest", &f)
	if f["pinterest.board_id"] == "" {
		t.Errorf("pinterest without a board: %v", f)
	}
	r.Title = ""
	f = nil
	r.EffectiveOptions("reddit", &f)
	if f["reddit.subreddit"] == "" || f["reddit.title"] == "" {
		t.Errorf("reddit without subreddit and title: %v", f)
	}
	// YouTube without a title, a caption or a video name to derive one from.
	r = valid()
	r.Title, r.Caption, r.VideoURL = "", "", "https://cdn.example/videos/"
	f = nil
	r.EffectiveOptions("youtube", &f)
	if !strings.Contains(f["title"], "set title or youtube.title") {
		t.Errorf("youtube without a title to derive: %v", f)
	}
}

// A control character other than newline and tab in the title, the caption or any text of a
// platform object is refused naming the field; newline and tab are kept.
func TestCheckStaticRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	fields := []string{"title", "caption",
		"youtube.title", "youtube.description", "youtube.privacy_status", "instagram.caption",
		"tiktok.title", "tiktok.mode", "tiktok.privacy_level", "linkedin.commentary", "linkedin.title",
		"pinterest.title", "pinterest.description", "pinterest.link", "pinterest.board_id",
		"threads.text", "facebook.description", "facebook.title", "bluesky.text", "telegram.caption",
		"discord.content", "mastodon.text", "mastodon.visibility", "mastodon.spoiler_text",
		"mastodon.language", "mastodon.description", "reddit.title", "reddit.subreddit",
		"reddit.flair_id", "reddit.flair_text"}
	request := func(field, v string) Request {
		body := map[string]any{"project_id": projectID, "video_url": "https://cdn.example/v.mp4", "title": "Hello"}
		if obj, key, ok := strings.Cut(field, "."); ok {
			body[obj] = map[string]any{key: v}
		} else {
			body[field] = v
		}
		raw, _ := json.Marshal(body)
		var r Request
		if err := apierr.DecodeJSON(strings.NewReader(string(raw)), &r); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		return r
	}
	for _, field := range fields {
		for _, c := range []string{"\x00", "\x01", "\x1b", "\r", "\x1f"} {
			r := request(field, "a"+c+"b")
			_, f := r.CheckStatic(testNow, false, false)
			if !strings.Contains(f[field], "control characters") || !strings.Contains(f[field], "at character 2") {
				t.Errorf("%s with %q: %v", field, c, f)
			}
		}
	}
	r := request("caption", "line one\n\tline two")
	if _, f := r.CheckStatic(testNow, false, false); len(f) != 0 {
		t.Errorf("newline and tab refused: %v", f)
	}
}

// NormalizeNewlines turns a browser's CRLF line ends into LF in every text it walks, and
// leaves a lone carriage return to be refused.
func TestNormalizeNewlines(t *testing.T) {
	t.Parallel()
	r := Request{Title: "a\r\nb", Caption: "one\r\ntwo\r\n", PlatformObjects: PlatformObjects{
		Mastodon: &mastodon.Options{SpoilerText: "cw\r\nx"}, Reddit: &reddit.Options{FlairText: "x\ry"}}}
	r.NormalizeNewlines()
	if r.Title != "a\nb" || r.Caption != "one\ntwo\n" || r.Mastodon.SpoilerText != "cw\nx" || r.Reddit.FlairText != "x\ry" {
		t.Errorf("normalised: %q %q %q %q", r.Title, r.Caption, r.Mastodon.SpoilerText, r.Reddit.FlairText)
	}
}

// TestThreadsCountsAsThreads: a Threads text is counted in characters, each emoji as its
// UTF-8 bytes, and may hold at most five distinct links, as Threads' documentation says.
func TestThreadsCountsAsThreads(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, text string
		refused    bool
	}{
		{"300 Japanese characters", strings.Repeat("日本語", 100), false},
		{"500 characters of €", strings.Repeat("€", 500), false},
		{"126 emoji", strings.Repeat("\U0001F600", 126), true},
		{"six links", "https://1.example https://2.example https://3.example https://4.example https://5.example https://6.example", true},
	} {
		r := Request{ProjectID: "9b2f6f37-1a2b-4c3d-8e9f-0a1b2c3d4e5f", VideoURL: "https://cdn.example/v.mp4",
			PlatformObjects: PlatformObjects{Threads: &threads.Options{Text: c.text}}}
		_, f := r.CheckStatic(now, false, false)
		if got := f["threads.text"] != ""; got != c.refused {
			t.Errorf("%s: refused %v (%v), want %v", c.name, got, f, c.refused)
		}
	}
}
