package youtube

// A channel's figures and comments, through the same plain Data API v3 calls as publishing
// (the package comment says why not the client library; the module's google.golang.org/api
// also lacks what youtube/v3 imports, so using it would add dependencies):
//
//   - Metrics: videos.list?part=statistics&id=… with up to 50 ids a call (1 quota unit):
//     viewCount, likeCount and commentCount, which YouTube sends as strings and leaves out
//     when the owner hides them (likes) or turned comments off. Shares, watch time and
//     impressions exist only in the YouTube Analytics API: a second API, scope
//     (yt-analytics.readonly) and host, whose reports lag 48–72 hours; reelay does not read
//     it, and leaves those figures nil.
//   - Comments: commentThreads.list?part=snippet,replies&videoId=…&textFormat=plainText, 100
//     threads a page (1 unit each), and comments.list?parentId=… for threads whose inline
//     replies are only a subset of totalReplyCount, at most maxCommentCalls calls in all.
//   - Reply: comments.insert?part=snippet with {"snippet":{"parentId","textOriginal"}} (50
//     units). YouTube threads are one level deep: a reply always attaches to the thread's
//     top-level comment, so answering a reply answers its thread.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/publish"
)

const (
	// maxVideoIDs is what videos.list takes in its id filter.
	maxVideoIDs = 50
	// maxCommentCalls bounds the calls of one Comments.
	maxCommentCalls = 5
	// commentPage is maxResults of the comment listings, their largest.
	commentPage = 100
)

var (
	_ analytics.Source = (*Provider)(nil)
	_ inbox.Source     = (*Provider)(nil)
)

// channelCall is a call with a channel's credentials.
func (p *Provider) channelCall(ctx context.Context, ch publish.Channel) (*call, error) {
	return p.newCall(ctx, &publish.Destination{BaseURL: ch.BaseURL, Credentials: ch.Credentials})
}

// statistics is the statistics part of a video resource; a missing count is one YouTube
// does not show.
type statistics struct {
	ViewCount    *string `json:"viewCount"`
	LikeCount    *string `json:"likeCount"`
	CommentCount *string `json:"commentCount"`
}

// Metrics implements analytics.Source with videos.list's statistics. A video YouTube does
// not list (deleted, private to another channel) has no entry.
func (p *Provider) Metrics(ctx context.Context, ch publish.Channel, itemIDs []string) (map[string]analytics.Metrics, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return nil, err
	}
	out := map[string]analytics.Metrics{}
	for batch := range slices.Chunk(uniqueIDs(itemIDs), maxVideoIDs) {
		var list struct {
			Items []struct {
				ID         string      `json:"id"`
				Statistics *statistics `json:"statistics"`
			} `json:"items"`
		}
		if err := c.list("videos", "part=statistics&id="+url.QueryEscape(strings.Join(batch, ",")), &list); err != nil {
			return out, err
		}
		for _, it := range list.Items {
			if it.Statistics != nil && slices.Contains(batch, it.ID) {
				out[it.ID] = analytics.Metrics{
					Views:    count(it.Statistics.ViewCount),
					Likes:    count(it.Statistics.LikeCount),
					Comments: count(it.Statistics.CommentCount),
				}
			}
		}
	}
	return out, nil
}

// uniqueIDs drops empty and repeated ids, keeping the order.
func uniqueIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// count reads one of YouTube's string counts; nil when it is missing or unreadable.
func count(s *string) *int64 {
	if s == nil {
		return nil
	}
	n, err := strconv.ParseInt(*s, 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	return analytics.N(n)
}

// comment is a comment resource.
type comment struct {
	ID      string `json:"id"`
	Snippet struct {
		ChannelID         string `json:"channelId"`
		ParentID          string `json:"parentId"`
		TextDisplay       string `json:"textDisplay"`
		TextOriginal      string `json:"textOriginal"`
		AuthorDisplayName string `json:"authorDisplayName"`
		AuthorChannelID   struct {
			Value string `json:"value"`
		} `json:"authorChannelId"`
		LikeCount   *int64    `json:"likeCount"`
		PublishedAt time.Time `json:"publishedAt"`
	} `json:"snippet"`
}

// inboxComment turns a comment resource into an inbox.Comment. The comment is the channel's
// own when its author is the channel of the video (snippet.channelId), which holds for real
// and sandbox channels alike: the video is the channel's.
func (r comment) inboxComment() inbox.Comment {
	text := r.Snippet.TextOriginal
	if text == "" {
		text = r.Snippet.TextDisplay
	}
	return inbox.Comment{
		ID: r.ID, ParentID: r.Snippet.ParentID, Author: r.Snippet.AuthorDisplayName, Text: text,
		CreatedAt: r.Snippet.PublishedAt, LikeCount: r.Snippet.LikeCount,
		Own: r.Snippet.AuthorChannelID.Value != "" && r.Snippet.AuthorChannelID.Value == r.Snippet.ChannelID,
	}
}

// Comments implements inbox.Source: the video's threads, newest first, each top-level comment
// followed by its replies.
func (p *Provider) Comments(ctx context.Context, ch publish.Channel, itemID string) ([]inbox.Comment, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return nil, err
	}
	type thread struct {
		top     comment
		replies []comment
		total   int
	}
	var threads []thread
	calls, token := 0, ""
	for calls < maxCommentCalls {
		q := url.Values{"part": {"snippet,replies"}, "videoId": {itemID}, "maxResults": {strconv.Itoa(commentPage)},
			"textFormat": {"plainText"}, "order": {"time"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var page struct {
			NextPageToken string `json:"nextPageToken"`
			Items         []struct {
				Snippet struct {
					TopLevelComment comment `json:"topLevelComment"`
					TotalReplyCount int     `json:"totalReplyCount"`
				} `json:"snippet"`
				Replies struct {
					Comments []comment `json:"comments"`
				} `json:"replies"`
			} `json:"items"`
		}
		calls++
		if err := c.list("commentThreads", q.Encode(), &page); err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			threads = append(threads, thread{top: it.Snippet.TopLevelComment, replies: it.Replies.Comments, total: it.Snippet.TotalReplyCount})
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	for i := range threads {
		if calls >= maxCommentCalls {
			break
		}
		if t := &threads[i]; t.total > len(t.replies) {
			calls++
			if t.replies, err = c.replies(t.top.ID); err != nil {
				return nil, err
			}
		}
	}
	var out []inbox.Comment
	for _, t := range threads {
		out = append(out, t.top.inboxComment())
		for _, r := range t.replies {
			rc := r.inboxComment()
			if rc.ParentID == "" {
				rc.ParentID = t.top.ID
			}
			out = append(out, rc)
		}
	}
	return out, nil
}

// replies is comments.list?parentId=: the first page of a thread's replies.
func (c *call) replies(parentID string) ([]comment, error) {
	q := url.Values{"part": {"snippet"}, "parentId": {parentID}, "maxResults": {strconv.Itoa(commentPage)}, "textFormat": {"plainText"}}
	var list struct {
		Items []comment `json:"items"`
	}
	if err := c.list("comments", q.Encode(), &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Reply implements inbox.Source with comments.insert. The reply goes to the thread's
// top-level comment: to itself, or its parent when to is a reply.
func (p *Provider) Reply(ctx context.Context, ch publish.Channel, itemID string, to inbox.Comment, text string) (inbox.Comment, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return inbox.Comment{}, err
	}
	parent := to.ID
	if to.ParentID != "" {
		parent = to.ParentID
	}
	body, _ := json.Marshal(map[string]any{"snippet": map[string]string{"parentId": parent, "textOriginal": text}})
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=UTF-8")
	resp, perr := c.do(http.MethodPost, c.base+"/youtube/v3/comments?part=snippet", strings.NewReader(string(body)), int64(len(body)), h)
	if perr != nil {
		return inbox.Comment{}, perr
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return inbox.Comment{}, errorFrom(resp)
	}
	var res comment
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil || res.ID == "" {
		// Permanent: the reply is probably stored, and posting it again would double it.
		return inbox.Comment{}, publish.Permanent(publish.CategoryInternal, resp.StatusCode,
			"YouTube answered the reply without a readable comment resource; it may have been posted")
	}
	reply := res.inboxComment()
	if reply.ParentID == "" {
		reply.ParentID = parent
	}
	if reply.Text == "" {
		reply.Text = text
	}
	return reply, nil
}
