package youtubesim

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// upload uploads a small video of the token's account in one request and returns its id;
// alice's and bob's videos are processed at once.
func (e *ytEnv) upload(token, meta string) string {
	e.t.Helper()
	video := ytTestVideo(e.t, 20_000)
	session := e.start(token, int64(len(video)), meta)
	resp, body := e.put(session, token, "bytes 0-19999/20000", video)
	if resp.StatusCode != 201 {
		e.t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	var v struct{ ID string }
	if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
		e.t.Fatalf("upload answered %s", body)
	}
	return v.ID
}

type ytThreadPage struct {
	NextPageToken string `json:"nextPageToken"`
	Items         []struct {
		ID      string `json:"id"`
		Snippet struct {
			TotalReplyCount int `json:"totalReplyCount"`
			TopLevelComment struct {
				ID      string `json:"id"`
				Snippet struct {
					TextDisplay, AuthorDisplayName string
					TextOriginal                   *string
				} `json:"snippet"`
			} `json:"topLevelComment"`
		} `json:"snippet"`
		Replies struct {
			Comments []json.RawMessage `json:"comments"`
		} `json:"replies"`
	} `json:"items"`
}

func (e *ytEnv) threads(token, query string) (int, ytThreadPage, []byte) {
	e.t.Helper()
	resp, body := e.do("GET", "/youtube/v3/commentThreads?"+query, token, nil, nil)
	var p ytThreadPage
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(body, &p); err != nil {
			e.t.Fatal(err)
		}
	}
	return resp.StatusCode, p, body
}

// TestYouTubeCommentThreads pages through a video's threads and checks the statistics that
// count them, who may read them, and the listing's refusals.
func TestYouTubeCommentThreads(t *testing.T) {
	e := newYTEnv(t, Options{})
	published := e.clock.Now()
	id := e.upload("tok-alice", ytMeta1)
	private := e.upload("tok-alice", `{"snippet":{"title":"Mine only"},"status":{"privacyStatus":"private"}}`)
	e.clock.Advance(2 * time.Hour) // every video has all its comments by then
	want := sim.AudienceComments(id, published, e.clock.Now())

	var seen []string
	token := ""
	for page := 0; ; page++ {
		q := url.Values{"part": {"snippet,replies"}, "videoId": {id}, "maxResults": {"5"}, "textFormat": {"plainText"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		code, p, body := e.threads("tok-alice", q.Encode())
		if code != 200 || page > 5 {
			t.Fatalf("page %d: %d %s", page, code, body)
		}
		for _, it := range p.Items {
			c := it.Snippet.TopLevelComment
			if it.ID != c.ID || c.Snippet.TextOriginal != nil {
				t.Errorf("thread %+v: its id differs, or shows another author's textOriginal", it)
			}
			seen = append(seen, c.Snippet.TextDisplay)
		}
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	if len(seen) != len(want) || len(want) != sim.MaxAudienceComments || seen[0] != want[len(want)-1].Text {
		t.Errorf("threads %q, want the %d audience comments newest first", seen, len(want))
	}

	resp, body := e.do("GET", "/youtube/v3/videos?part=statistics&id="+id, "tok-bob", nil, nil)
	var stats struct {
		Items []struct{ Statistics map[string]string } `json:"items"`
	}
	if err := json.Unmarshal(body, &stats); err != nil || resp.StatusCode != 200 || len(stats.Items) != 1 {
		t.Fatalf("videos.list: %d %s", resp.StatusCode, body)
	}
	a := sim.AudienceOf(id, published, e.clock.Now())
	if s := stats.Items[0].Statistics; s["viewCount"] != strconv.FormatInt(a.Views, 10) || s["likeCount"] != strconv.FormatInt(a.Likes, 10) ||
		s["commentCount"] != strconv.Itoa(len(want)) || s["favoriteCount"] != "0" {
		t.Errorf("statistics = %v, want the audience's %+v", s, a)
	}

	for _, c := range []struct {
		name, token, query string
		code               int
		reason             string
	}{
		{"no filter", "tok-alice", "part=snippet", 400, "missingRequiredParameter"},
		{"two filters", "tok-alice", "part=snippet&videoId=" + id + "&channelId=UCx", 400, "incompatibleParameters"},
		{"no part", "tok-alice", "videoId=" + id, 400, "required"},
		{"unknown part", "tok-alice", "part=statistics&videoId=" + id, 400, "unknownPart"},
		{"maxResults 0", "tok-alice", "part=snippet&maxResults=0&videoId=" + id, 400, "invalidParameter"},
		{"maxResults 101", "tok-alice", "part=snippet&maxResults=101&videoId=" + id, 400, "invalidParameter"},
		{"foreign page token", "tok-alice", "part=snippet&videoId=" + id + "&pageToken=" + ytPageToken("threads|other", 5), 400, "invalidPageToken"},
		{"unknown video", "tok-alice", "part=snippet&videoId=nosuchvideo", 404, "videoNotFound"},
		{"another's private video", "tok-bob", "part=snippet&videoId=" + private, 404, "videoNotFound"},
		{"another's unlisted video", "tok-bob", "part=snippet&videoId=" + id, 200, ""},
		{"fault", "tok-down", "part=snippet&videoId=" + id, 503, "backendError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := e.threads(c.token, c.query)
			if code != c.code {
				t.Fatalf("%d %s, want %d", code, body, c.code)
			}
			if c.reason != "" {
				if _, _, reason := ytErrorOf(t, body); reason != c.reason {
					t.Errorf("reason %s, want %s", reason, c.reason)
				}
			}
		})
	}
}

// TestYouTubeCommentsInsert answers a comment and checks what comments.insert refuses.
func TestYouTubeCommentsInsert(t *testing.T) {
	e := newYTEnv(t, Options{})
	id := e.upload("tok-alice", ytMeta1)
	_, p, _ := e.threads("tok-alice", "part=snippet&videoId="+id)
	top := p.Items[0].ID
	insert := func(token, body string) (int, []byte) {
		resp, b := e.do("POST", "/youtube/v3/comments?part=snippet", token, map[string]string{"Content-Type": "application/json"}, []byte(body))
		return resp.StatusCode, b
	}
	code, body := insert("tok-alice", `{"snippet":{"parentId":"`+top+`","textOriginal":"Thanks <3"}}`)
	var reply struct {
		ID      string
		Snippet struct {
			ParentID, TextDisplay, TextOriginal, ChannelID string
			AuthorChannelID                                struct{ Value string }
		}
	}
	if err := json.Unmarshal(body, &reply); err != nil || code != 200 {
		t.Fatalf("insert: %d %s", code, body)
	}
	if reply.Snippet.ParentID != top || reply.Snippet.TextOriginal != "Thanks <3" || reply.Snippet.TextDisplay != "Thanks &lt;3" ||
		reply.Snippet.AuthorChannelID.Value != reply.Snippet.ChannelID {
		t.Errorf("reply = %+v", reply)
	}
	if r := e.rec.Snapshot(nil).Replies; len(r) != 1 || r[0] != (sim.Reply{Account: "alice", CommentID: top, Text: "Thanks <3"}) {
		t.Errorf("recorded %+v", r)
	}
	_, p, _ = e.threads("tok-alice", "part=snippet,replies&videoId="+id)
	if it := p.Items[0]; it.Snippet.TotalReplyCount != 1 || len(it.Replies.Comments) != 1 {
		t.Errorf("thread after the reply: %+v", it)
	}

	for _, c := range []struct {
		name, token, body string
		code              int
		reason            string
	}{
		{"reply to a reply", "tok-alice", `{"snippet":{"parentId":"` + reply.ID + `","textOriginal":"hi"}}`, 400, "operationNotSupported"},
		{"unknown parent", "tok-alice", `{"snippet":{"parentId":"UgzNoSuchThing000004AaABAg","textOriginal":"hi"}}`, 404, "commentNotFound"},
		{"no parent", "tok-alice", `{"snippet":{"textOriginal":"hi"}}`, 400, "parentIdMissing"},
		{"no text", "tok-alice", `{"snippet":{"parentId":"` + top + `","textOriginal":"  "}}`, 400, "commentTextRequired"},
		{"too long", "tok-alice", `{"snippet":{"parentId":"` + top + `","textOriginal":"` + strings.Repeat("a", ytReplyLimit.Max+1) + `"}}`, 400, "commentTextTooLong"},
		{"not JSON", "tok-alice", `snippet=1`, 400, "parseError"},
		{"rate limited", "tok-slow", `{"snippet":{"parentId":"` + top + `","textOriginal":"hi"}}`, 429, "rateLimitExceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := insert(c.token, c.body)
			if code != c.code {
				t.Fatalf("%d %s, want %d", code, body, c.code)
			}
			if _, _, reason := ytErrorOf(t, body); reason != c.reason {
				t.Errorf("reason %s, want %s", reason, c.reason)
			}
		})
	}
	if n := len(e.rec.Snapshot(nil).Replies); n != 1 {
		t.Errorf("%d replies recorded, want 1", n)
	}
}

// TestYouTubeRepeatedParameters sends the parameters the API declares repeated (part, id) as
// the Go client library does, one value a parameter, with its system parameters (alt=json,
// prettyPrint=false): the answers are those of the comma-separated form.
func TestYouTubeRepeatedParameters(t *testing.T) {
	e := newYTEnv(t, Options{})
	first, second := e.upload("tok-alice", ytMeta1), e.upload("tok-alice", ytMeta1)
	_, p, _ := e.threads("tok-alice", "part=snippet&videoId="+first)
	top := p.Items[0].ID
	resp, body := e.do("POST", "/youtube/v3/comments?alt=json&part=id&part=snippet&prettyPrint=false", "tok-alice",
		map[string]string{"Content-Type": "application/json", "X-Goog-Api-Client": "gl-go/1.26.8 gdcl/0.312.0"},
		[]byte(`{"snippet":{"parentId":"`+top+`","textOriginal":"hi"}}`))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"parentId"`) {
		t.Fatalf("comments.insert with part=id&part=snippet: %d %s", resp.StatusCode, body)
	}

	// videos.list: both parts of both videos.
	resp, body = e.do("GET", "/youtube/v3/videos?alt=json&id="+first+"&id="+second+"&part=status&part=processingDetails&prettyPrint=false", "tok-alice", nil, nil)
	var videos ytListed
	if err := json.Unmarshal(body, &videos); err != nil || resp.StatusCode != 200 || len(videos.Items) != 2 {
		t.Fatalf("videos.list: %d %s", resp.StatusCode, body)
	}
	for _, v := range videos.Items {
		if v.Status.UploadStatus != "processed" || v.ProcessingDetails.ProcessingStatus != "succeeded" {
			t.Errorf("video %s: %+v", v.ID, v)
		}
	}
	// commentThreads.list: the replies part too.
	code, p, body := e.threads("tok-alice", "alt=json&part=snippet&part=replies&prettyPrint=false&videoId="+first)
	if code != 200 || p.Items[0].ID != top || len(p.Items[0].Replies.Comments) != 1 {
		t.Fatalf("commentThreads.list: %d %s", code, body)
	}
	// videoCategories.list by two ids.
	resp, body = e.do("GET", "/youtube/v3/videoCategories?alt=json&id=22&id=27&part=snippet&prettyPrint=false", "tok-alice", nil, nil)
	var cats struct{ Items []struct{ ID string } }
	if err := json.Unmarshal(body, &cats); err != nil || resp.StatusCode != 200 || len(cats.Items) != 2 {
		t.Fatalf("videoCategories.list: %d %s", resp.StatusCode, body)
	}
	// channels.list: both parts.
	resp, body = e.do("GET", "/youtube/v3/channels?alt=json&mine=true&part=id&part=snippet&prettyPrint=false", "tok-alice", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"customUrl":"@alice"`) {
		t.Fatalf("channels.list: %d %s", resp.StatusCode, body)
	}

	// Repeated or not, the values are checked as before; and only JSON is answered.
	for _, c := range []struct {
		name, query string
		code        int
		reason      string
	}{
		{"an unknown part among repeated ones", "/youtube/v3/videos?part=status&part=bogus&id=" + first, 400, "unknownPart"},
		{"more than 50 ids in all", "/youtube/v3/videos?part=id&id=" + strings.Repeat("x,", 30) + "&id=" + strings.Repeat("y,", 20) + "z", 400, "invalidParameter"},
		{"mine and id are two filters", "/youtube/v3/channels?part=id&part=snippet&mine=true&id=UCx", 400, "incompatibleParameters"},
		{"alt=proto", "/youtube/v3/videos?alt=proto&part=id&id=" + first, 400, "invalidParameter"},
		{"alt=media", "/youtube/v3/videoCategories?alt=media&part=snippet&regionCode=US", 400, "invalidParameter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.do("GET", c.query, "tok-alice", nil, nil)
			if code, _, reason := ytErrorOf(t, body); resp.StatusCode != c.code || code != c.code || reason != c.reason {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, body, c.code, c.reason)
			}
		})
	}
}

// TestYouTubeHiddenLikes: the statistics of a video whose owner hides its like count leave
// likeCount out; other channels' videos keep it.
func TestYouTubeHiddenLikes(t *testing.T) {
	e := newYTEnv(t, Options{HiddenLikes: map[string]bool{"alice": true}})
	hidden, shown := e.upload("tok-alice", ytMeta1), e.upload("tok-bob", ytMeta1)
	e.clock.Advance(time.Hour)
	stats := func(token, id string) map[string]string {
		t.Helper()
		resp, body := e.do("GET", "/youtube/v3/videos?part=statistics&id="+id, token, nil, nil)
		var l struct {
			Items []struct{ Statistics map[string]string } `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil || resp.StatusCode != 200 || len(l.Items) != 1 {
			t.Fatalf("videos.list: %d %s", resp.StatusCode, body)
		}
		return l.Items[0].Statistics
	}
	if s := stats("tok-bob", hidden); s["viewCount"] == "" || s["viewCount"] == "0" || s["commentCount"] == "" {
		t.Errorf("hidden likes: %v", s)
	} else if _, ok := s["likeCount"]; ok {
		t.Errorf("hidden likes answered likeCount: %v", s)
	}
	if s := stats("tok-alice", shown); s["likeCount"] == "" {
		t.Errorf("shown likes: %v", s)
	}
}
