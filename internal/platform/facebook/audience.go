package facebook

// Figures, comments and replies of published Reels, with the Page token. The item id is the
// reel's video id (Outcome.ExternalID): video_insights and the comments edge both hang off it.
//
//   - Metrics: GET /{video-id}/video_insights?metric=blue_reels_play_count,
//     post_impressions_unique,post_video_view_time,post_video_likes_by_reaction_type,
//     post_video_social_actions, one call per reel (a Graph batch request would still count
//     each call it holds against the rate limits).
//     Views are blue_reels_play_count (plays, replays not counted), reach
//     post_impressions_unique, watch time post_video_view_time (milliseconds), likes the sum
//     of the reactions by type, comments and shares the COMMENT and SHARE counts of
//     post_video_social_actions (a breakdown present without a key counts 0: Graph leaves
//     zero counts out). Facebook gives no impressions or saves for reels.
//   - Comments: GET /{video-id}/comments?filter=stream&order=chronological, every comment
//     and reply with its parent, up to maxCommentPages pages; the Page's own are those whose
//     author (from.id) is the Page.
//   - Reply: POST /{comment-id}/comments message=. Facebook threads comments two levels deep,
//     so a reply's top-level comment is answered.

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

// insightMetrics are the Reels metrics Metrics reads.
var insightMetrics = []string{"blue_reels_play_count", "post_impressions_unique", "post_video_view_time",
	"post_video_likes_by_reaction_type", "post_video_social_actions"}

// maxCommentPages bounds the pages of comments one Comments call reads.
const maxCommentPages = 5

// commentFields are the fields read of a comment.
const commentFields = "id,message,from{id,name},created_time,like_count,parent{id}"

// channelGraph is a Graph client with the channel's Page token.
func (p *Provider) channelGraph(ch provider.Channel) (metagraph.Client, error) {
	token, err := metagraph.AccessToken("Facebook", "Page access token", ch.Credentials)
	if err != nil {
		return metagraph.Client{}, err
	}
	return p.graph(ch.BaseURL, token), nil
}

// Metrics implements provider.MetricsSource. A reel Graph does not show (deleted, or another
// Page's) or has no figures for yet (not published) is left out.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return nil, err
	}
	// Each reel's video_insights is read within the API timeout.
	insights := func(ctx context.Context, videoID string) (map[string]json.RawMessage, error) {
		ctx, cancel := p.apiContext(ctx)
		defer cancel()
		return g.Insights(ctx, "/"+url.PathEscape(videoID)+"/video_insights", insightMetrics)
	}
	return metagraph.Metrics(ctx, itemIDs, insights, classify, figures)
}

// figures are a reel's figures of its video_insights.
func figures(vals map[string]json.RawMessage) provider.Metrics {
	m := provider.Metrics{}
	metagraph.Counts(vals, map[string]**int64{"blue_reels_play_count": &m.Views, "post_impressions_unique": &m.Reach})
	if ms, ok := metagraph.Count(vals["post_video_view_time"]); ok {
		m.WatchTimeSeconds = provider.N((ms + 500) / 1000)
	}
	if reactions, ok := metagraph.Breakdown(vals["post_video_likes_by_reaction_type"]); ok {
		var sum int64
		for _, n := range reactions {
			sum += n
		}
		m.Likes = provider.N(sum)
	}
	if actions, ok := metagraph.Breakdown(vals["post_video_social_actions"]); ok {
		m.Comments, m.Shares = provider.N(actions["COMMENT"]), provider.N(actions["SHARE"])
	}
	return m
}

// fbComment is a comment as Comments reads it.
type fbComment struct {
	ID          string `json:"id"`
	Message     string `json:"message"`
	CreatedTime string `json:"created_time"`
	LikeCount   *int64 `json:"like_count"`
	From        *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"from"`
	Parent *struct {
		ID string `json:"id"`
	} `json:"parent"`
}

func (c fbComment) comment(page string) provider.Comment {
	out := provider.Comment{ID: c.ID, Text: c.Message, LikeCount: c.LikeCount}
	if c.From != nil {
		out.Author, out.Own = c.From.Name, c.From.ID == page
	}
	if c.Parent != nil {
		out.ParentID = c.Parent.ID
	}
	if t, err := metagraph.ParseTime(c.CreatedTime); err == nil {
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
	ctx, cancel := p.apiContext(ctx)
	defer cancel()
	q := url.Values{"filter": {"stream"}, "order": {"chronological"}, "fields": {commentFields}, "limit": {"100"}}
	rows, err := metagraph.List[fbComment](ctx, g, "/"+url.PathEscape(itemID)+"/comments", q, maxCommentPages)
	if err != nil {
		return nil, classify(err)
	}
	out := make([]provider.Comment, 0, len(rows))
	for _, c := range rows {
		out = append(out, c.comment(ch.Account))
	}
	return out, nil
}

// Reply implements provider.CommentSource. The reply is read back for the author and time Facebook
// stored; when that read fails the reply is still posted, and is answered as sent.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return provider.Comment{}, err
	}
	ctx, cancel := p.apiContext(ctx)
	defer cancel()
	target := to.ID
	if to.ParentID != "" {
		target = to.ParentID // comments are two levels deep
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := g.Post(ctx, "/"+url.PathEscape(target)+"/comments", url.Values{"message": {text}}, &created); err != nil {
		return provider.Comment{}, classify(err)
	}
	if created.ID == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0, "Facebook: the reply was posted but Facebook answered no id")
	}
	sent := provider.Comment{ID: created.ID, ParentID: target, Text: text, CreatedAt: p.cfg.Now().UTC(), Own: true}
	return metagraph.ReadBack(ctx, g, sent, commentFields, func(s fbComment) provider.Comment {
		c := s.comment(ch.Account)
		c.ParentID = cmp.Or(c.ParentID, target)
		return c
	}), nil
}
