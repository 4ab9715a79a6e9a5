package youtube

// A channel's figures and comments, from the Data API v3 as publishing (the package comment
// says which calls use the client library and why the others do not):
//
//   - Metrics: videos.list?part=statistics&id=… with up to 50 ids a call (1 quota unit), by
//     hand: viewCount, likeCount and commentCount, which YouTube sends as strings and leaves
//     out when the owner hides them (likes) or turned comments off. Shares, watch time and
//     impressions exist only in the YouTube Analytics API: a second API, scope
//     (yt-analytics.readonly) and host, whose reports lag 48–72 hours; reelay does not read
//     it, and leaves those figures nil.
//   - Comments, through the library: commentThreads.list?part=snippet,replies&videoId=…
//     &textFormat=plainText, 100 threads a page (1 unit each), and comments.list?parentId=…
//     for threads whose inline replies are only a subset of totalReplyCount, at most
//     maxCommentCalls calls in all.
//   - Reply, through the library: comments.insert?part=snippet with {"snippet":{"parentId",
//     "textOriginal"}} (50 units). YouTube threads are one level deep: a reply always attaches to the thread's
//     top-level comment, so answering a reply answers its thread.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	ytapi "google.golang.org/api/youtube/v3"

	"github.com/reelay/reelay/internal/provider"
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
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// channelCall is a call with a channel's credentials.
func (p *Provider) channelCall(ctx context.Context, ch provider.Channel) (*call, error) {
	return p.newCall(ctx, &provider.Destination{BaseURL: ch.BaseURL, Credentials: ch.Credentials})
}

// statistics is the statistics part of a video resource; a missing count is one YouTube
// does not show.
type statistics struct {
	ViewCount    *string `json:"viewCount"`
	LikeCount    *string `json:"likeCount"`
	CommentCount *string `json:"commentCount"`
}

// Metrics implements provider.MetricsSource with videos.list's statistics. A video YouTube does
// not list (deleted, private to another channel) has no entry.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return nil, err
	}
	out := map[string]provider.Metrics{}
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
				out[it.ID] = provider.Metrics{
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
	return provider.N(n)
}

// inboxComment turns a comment resource into an provider.Comment. The comment is the channel's
// own when its author is the channel of the video (snippet.channelId), which holds for real
// and sandbox channels alike: the video is the channel's. A comment always has a like count:
// the library cannot tell 0 from none, and YouTube shows it for every comment.
func inboxComment(r *ytapi.Comment) (provider.Comment, error) {
	c := provider.Comment{ID: r.Id}
	sn := r.Snippet
	if sn == nil {
		return c, nil
	}
	c.ParentID, c.Author, c.Text, c.LikeCount = sn.ParentId, sn.AuthorDisplayName, sn.TextOriginal, provider.N(sn.LikeCount)
	if c.Text == "" {
		c.Text = sn.TextDisplay
	}
	if sn.PublishedAt != "" {
		at, err := time.Parse(time.RFC3339, sn.PublishedAt)
		if err != nil {
			return c, fmt.Errorf("comment %s: publishedAt %q: %w", r.Id, sn.PublishedAt, err)
		}
		c.CreatedAt = at
	}
	c.Own = sn.AuthorChannelId != nil && sn.AuthorChannelId.Value != "" && sn.AuthorChannelId.Value == sn.ChannelId
	return c, nil
}

// Comments implements provider.CommentSource: the video's threads, newest first, each top-level comment
// followed by its replies.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return nil, err
	}
	api, err := c.api()
	if err != nil {
		return nil, err
	}
	type thread struct {
		top     *ytapi.Comment
		replies []*ytapi.Comment
		total   int64
	}
	var threads []thread
	calls, token := 0, ""
	for calls < maxCommentCalls {
		call := api.CommentThreads.List([]string{"snippet", "replies"}).VideoId(itemID).MaxResults(commentPage).
			TextFormat("plainText").Order("time").Context(ctx)
		if token != "" {
			call = call.PageToken(token)
		}
		calls++
		page, err := call.Do()
		if err != nil {
			return nil, libraryError(ctx, "commentThreads.list", err)
		}
		for _, it := range page.Items {
			if it == nil || it.Snippet == nil || it.Snippet.TopLevelComment == nil {
				continue
			}
			t := thread{top: it.Snippet.TopLevelComment, total: it.Snippet.TotalReplyCount}
			if it.Replies != nil {
				t.replies = it.Replies.Comments
			}
			threads = append(threads, t)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	for i := range threads {
		if calls >= maxCommentCalls {
			break
		}
		if t := &threads[i]; t.total > int64(len(t.replies)) {
			calls++
			if t.replies, err = replies(ctx, api, t.top.Id); err != nil {
				return nil, err
			}
		}
	}
	var out []provider.Comment
	for _, t := range threads {
		top, err := inboxComment(t.top)
		if err != nil {
			return nil, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "unreadable commentThreads.list answer: %v", err)
		}
		out = append(out, top)
		for _, r := range t.replies {
			if r == nil {
				continue
			}
			rc, err := inboxComment(r)
			if err != nil {
				return nil, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "unreadable comments.list answer: %v", err)
			}
			if rc.ParentID == "" {
				rc.ParentID = top.ID
			}
			out = append(out, rc)
		}
	}
	return out, nil
}

// replies is comments.list?parentId=: the first page of a thread's replies.
func replies(ctx context.Context, api *ytapi.Service, parentID string) ([]*ytapi.Comment, error) {
	list, err := api.Comments.List([]string{"snippet"}).ParentId(parentID).MaxResults(commentPage).
		TextFormat("plainText").Context(ctx).Do()
	if err != nil {
		return nil, libraryError(ctx, "comments.list", err)
	}
	return list.Items, nil
}

// Reply implements provider.CommentSource with comments.insert. The reply goes to the thread's
// top-level comment: to itself, or its parent when to is a reply.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	c, err := p.channelCall(ctx, ch)
	if err != nil {
		return provider.Comment{}, err
	}
	api, err := c.api()
	if err != nil {
		return provider.Comment{}, err
	}
	parent := to.ID
	if to.ParentID != "" {
		parent = to.ParentID
	}
	res, err := api.Comments.Insert([]string{"snippet"}, &ytapi.Comment{
		Snippet: &ytapi.CommentSnippet{ParentId: parent, TextOriginal: text},
	}).Context(ctx).Do()
	if err != nil && !unreadableAnswer(ctx, err) {
		return provider.Comment{}, libraryError(ctx, "comments.insert", err)
	}
	var reply provider.Comment
	if err == nil && res.Id != "" {
		reply, err = inboxComment(res)
	}
	if err != nil || res.Id == "" {
		// Permanent: the reply is probably stored, and posting it again would double it.
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0,
			"YouTube answered the reply without a readable comment resource; it may have been posted")
	}
	if reply.ParentID == "" {
		reply.ParentID = parent
	}
	if reply.Text == "" {
		reply.Text = text
	}
	return reply, nil
}
