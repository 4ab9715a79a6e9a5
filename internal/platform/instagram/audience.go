package instagram

// Figures, comments and replies of published Reels. The item id is the IG media id that
// media_publish answered (Outcome.ExternalID).
//
//   - Metrics: GET /{ig-media-id}/insights?metric=views,reach,likes,comments,shares,saved,
//     ig_reels_video_view_total_time, one call per Reel (a Graph batch request would still
//     count each call it holds against the rate limits). Views,
//     reach, likes, comments, shares and saves map as named; watch time is
//     ig_reels_video_view_total_time, in milliseconds. impressions is not asked: it is retired
//     for media made after July 2024 and fails the whole read. Instagram answers an empty set,
//     not zeros, for figures it does not have yet: those stay nil.
//   - Comments: GET /{ig-media-id}/comments with each comment's replies expanded inline (the
//     first page of them), up to maxCommentPages pages. A comment is the channel's own when
//     its author (from.id) is the channel's Instagram account.
//   - Reply: POST /{ig-comment-id}/replies?message=. Only top-level comments take replies, so
//     a reply's parent is answered; hidden comments refuse replies (invalid_options).

import (
	"cmp"
	"context"
	"encoding/json"
	"net/url"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

var (
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// insightMetrics are the Reels insights Metrics reads.
var insightMetrics = []string{"views", "reach", "likes", "comments", "shares", "saved", "ig_reels_video_view_total_time"}

// maxCommentPages bounds the pages of comments one Comments call reads.
const maxCommentPages = 5

// commentFields are the fields read of a comment (and of each of its replies).
const commentFields = "id,text,username,timestamp,like_count,from{id,username}"

// channelGraph is a Graph client with the channel's token.
func (p *Provider) channelGraph(ch provider.Channel) (metagraph.Client, error) {
	token, err := metagraph.AccessToken("Instagram", "access token", ch.Credentials)
	if err != nil {
		return metagraph.Client{}, err
	}
	base := p.cfg.BaseURL
	if ch.BaseURL != "" {
		base = ch.BaseURL
	}
	return graph(base, token, p.cfg.HTTPClient), nil
}

// Metrics implements provider.MetricsSource. A Reel Graph does not show (deleted, or not the
// channel's) is left out.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return nil, err
	}
	insights := func(ctx context.Context, id string) (map[string]json.RawMessage, error) {
		return g.Insights(ctx, "/"+url.PathEscape(id)+"/insights", insightMetrics)
	}
	return metagraph.Metrics(ctx, itemIDs, insights, classify, figures)
}

// figures are a Reel's figures of its insights.
func figures(vals map[string]json.RawMessage) provider.Metrics {
	m := provider.Metrics{}
	metagraph.Counts(vals, map[string]**int64{
		"views": &m.Views, "reach": &m.Reach, "likes": &m.Likes, "comments": &m.Comments, "shares": &m.Shares, "saved": &m.Saves,
	})
	if ms, ok := metagraph.Count(vals["ig_reels_video_view_total_time"]); ok {
		m.WatchTimeSeconds = provider.N((ms + 500) / 1000)
	}
	return m
}

// igComment is an IG Comment as Comments reads it.
type igComment struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Username  string `json:"username"`
	Timestamp string `json:"timestamp"`
	LikeCount *int64 `json:"like_count"`
	ParentID  string `json:"parent_id"`
	From      *struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"from"`
	Replies *struct {
		Data []igComment `json:"data"`
	} `json:"replies"`
}

func (c igComment) comment(account, parent string) provider.Comment {
	out := provider.Comment{ID: c.ID, ParentID: parent, Author: c.Username, Text: c.Text, LikeCount: c.LikeCount}
	if c.From != nil {
		out.Own = c.From.ID == account
		if out.Author == "" {
			out.Author = c.From.Username
		}
	}
	if t, err := metagraph.ParseTime(c.Timestamp); err == nil {
		out.CreatedAt = t
	}
	return out
}

// Comments implements provider.CommentSource.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return nil, err
	}
	q := url.Values{"fields": {commentFields + ",replies{" + commentFields + ",parent_id}"}, "limit": {"50"}}
	rows, err := metagraph.List[igComment](ctx, g, "/"+url.PathEscape(itemID)+"/comments", q, maxCommentPages)
	if err != nil {
		return nil, classify(err)
	}
	var out []provider.Comment
	for _, c := range rows {
		out = append(out, c.comment(ch.Account, ""))
		if c.Replies != nil {
			for _, r := range c.Replies.Data {
				out = append(out, r.comment(ch.Account, c.ID))
			}
		}
	}
	return out, nil
}

// Reply implements provider.CommentSource. The reply is read back for the author and time Instagram
// stored; when that read fails the reply is still posted, and is answered as sent.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return provider.Comment{}, err
	}
	target := to.ID
	if to.ParentID != "" {
		target = to.ParentID // only top-level comments take replies
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := g.Post(ctx, "/"+url.PathEscape(target)+"/replies", url.Values{"message": {text}}, &created); err != nil {
		return provider.Comment{}, classify(err)
	}
	if created.ID == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0, "Instagram: the reply was posted but Instagram answered no id")
	}
	sent := provider.Comment{ID: created.ID, ParentID: target, Text: text, CreatedAt: p.cfg.Now().UTC(), Own: true}
	return metagraph.ReadBack(ctx, g, sent, commentFields+",parent_id", func(c igComment) provider.Comment {
		return c.comment(ch.Account, cmp.Or(c.ParentID, target))
	}), nil
}
