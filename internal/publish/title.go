package publish

import (
	"encoding/json"
	"net/url"
	"path"
	"strings"
	"unicode"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// YouTube needs a title, and the contract keeps the request's title optional (docs/CONTRACT.md,
// Publishing): a request that gives
// neither youtube.title nor title gets one made from what it does give (derivedTitle). Every
// text reelay fills in for a platform, that title as well as the title and caption standing in
// for a platform's own text, is reported in the answers (Derived), so that nothing is sent
// that the caller cannot see.

// Derived names the texts of one platform's payload that reelay filled in, each with where it
// came from: {"title": "caption_first_line", "description": "caption"}.
type Derived = platform.Derived

// Where a text reelay filled in came from: the values of Derived.
const (
	FromTitle            = platform.FromTitle   // the post's title
	FromCaption          = platform.FromCaption // the post's caption
	FromCaptionFirstLine = "caption_first_line" // the caption's first line, cut to the platform's limit
	FromVideoFileName    = "video_file_name"    // the uploaded video's file name, without its extension
	FromVideoURL         = "video_url"          // the last segment of video_url's path, without its extension
)

// derivedTitle is YouTube's title for a request that gives none: the caption's first line that
// is not blank, else the uploaded file's name without its extension, else the last segment of
// video_url's path (percent-decoded, without its extension); the first of them that leaves
// something once made fit for YouTube (fitText). from is one of FromCaptionFirstLine,
// FromVideoFileName and FromVideoURL; title is "" when none of them gives one.
func (r *Request) derivedTitle() (title, from string) {
	caps, _ := registry.CapabilitiesOf(platform.YouTube)
	lim := caps.Text["title"]
	for _, c := range []struct{ text, from string }{
		{firstLine(r.Caption), FromCaptionFirstLine},
		{fileStem(r.VideoFileName), FromVideoFileName},
		{urlStem(r.VideoURL), FromVideoURL},
	} {
		if t := fitText(lim, c.text); t != "" {
			return t, c.from
		}
	}
	return "", ""
}

// fitText makes s a text the platform takes under lim: without the characters it refuses,
// with its spaces, tabs and control characters run together into single spaces, and cut to the
// limit at the last space that fits (at a character boundary when one word is longer than the
// limit). Hashtags and everything else are kept.
//
// The characters dropped are those the registry says the platform refuses (lim.Forbidden):
// for a YouTube title, < and >, which the YouTube Data API's videos resource refuses in
// snippet.title (https://developers.google.com/youtube/v3/docs/videos#snippet.title). A made
// title is never one the platform would refuse, so they are dropped rather than reported.
func fitText(lim platform.TextLimit, s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune(lim.Forbidden, r):
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if lim.Check(s) {
		return s
	}
	cut := lim.Truncate(s)
	if !strings.HasPrefix(s[len(cut):], " ") {
		if i := strings.LastIndexByte(cut, ' '); i > 0 {
			cut = cut[:i]
		}
	}
	return strings.TrimSpace(cut)
}

// firstLine is the first line of s that is not blank.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// fileStem is a file name without its directory (either separator: a browser on Windows may
// send one) and its extension.
func fileStem(name string) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	return strings.TrimSuffix(name, path.Ext(name))
}

// urlStem is the file name a URL's path ends with, percent-decoded and without its extension;
// "" when the path ends in "/".
func urlStem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	p := u.EscapedPath()
	seg, err := url.PathUnescape(p[strings.LastIndexByte(p, '/')+1:])
	if err != nil {
		return ""
	}
	return fileStem(seg)
}

// storedRequest is a request as its post keeps it (store.Post.Request): the request, the
// uploaded video's file name (which a derived YouTube title may come from, so that an edit
// derives it again the same way), and what reelay filled in for each platform, for the answers
// that report it.
type storedRequest struct {
	Request
	FileName string             `json:"video_file_name,omitempty"`
	Derived  map[string]Derived `json:"derived,omitempty"`
}

// stored is r as its post keeps it, with derived by platform.
func (r *Request) stored(derived map[string]Derived) (json.RawMessage, error) {
	return json.Marshal(storedRequest{Request: *r, FileName: r.VideoFileName, Derived: derived})
}

// loadRequest reads a post's stored request back.
func loadRequest(raw json.RawMessage) (Request, error) {
	var s storedRequest
	if err := json.Unmarshal(raw, &s); err != nil {
		return Request{}, err
	}
	s.Request.VideoFileName = s.FileName
	return s.Request, nil
}

// DerivedTexts answers, by platform, the texts reelay filled in for p's destinations (nil for a
// post stored before they were kept).
func DerivedTexts(p store.Post) map[string]Derived {
	var s struct {
		Derived map[string]Derived `json:"derived"`
	}
	if json.Unmarshal(p.Request, &s) != nil {
		return nil
	}
	return s.Derived
}
