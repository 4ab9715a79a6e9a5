package threads

// Figures, replies and answers of published posts. The item id is the Threads media id that
// threads_publish answered (Outcome.ExternalID).
//
//   - Metrics: GET /{threads-media-id}/insights?metric=views,likes,replies,reposts,quotes,
//     shares, one call per post (the Threads API reads one media's insights a call). views, likes and replies (every
//     reply under the post, nested ones included) map to views, likes and comments; shares is
//     the sum of reposts, quotes and shares, the three ways a post is passed on. Threads gives
//     no reach, impressions, saves or watch time.
//   - Comments: GET /{threads-media-id}/conversation, every reply below the post flattened, up
//     to maxReplyPages pages, oldest first; a reply's parent is replied_to (none when it
//     answers the post itself); is_reply_owned_by_me marks the channel's own. Threads gives no
//     like count for replies.
//   - Reply: a reply is a post: POST /{threads-user-id}/threads media_type=TEXT, text,
//     reply_to_id, then POST /{threads-user-id}/threads_publish creation_id. A container that
//     is not ready yet fails transiently: it is never published by itself, so the retry's new
//     container cannot double the reply. A threads_publish whose answer is lost may have
//     published: a retry then answers twice (Threads offers no idempotency key).

import (
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

// insightMetrics are the media insights Metrics reads.
var insightMetrics = []string{"views", "likes", "replies", "reposts", "quotes", "shares"}

// maxReplyPages bounds the pages of a conversation one Comments call reads.
const maxReplyPages = 5

// replyFields are the fields read of a reply.
const replyFields = "id,text,username,timestamp,replied_to,is_reply_owned_by_me"

// channelGraph is a Graph client with the channel's token.
func (p *Provider) channelGraph(ch provider.Channel) (metagraph.Client, error) {
	token, err := metagraph.AccessToken("Threads", "access token", ch.Credentials)
	if err != nil {
		return metagraph.Client{}, err
	}
	return p.graph(ch.BaseURL, token), nil
}

// Metrics implements provider.MetricsSource. A post Threads does not show (deleted, or not the
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

// figures are a post's figures of its insights.
func figures(vals map[string]json.RawMessage) provider.Metrics {
	m := provider.Metrics{}
	metagraph.Counts(vals, map[string]**int64{"views": &m.Views, "likes": &m.Likes, "replies": &m.Comments})
	for _, name := range []string{"reposts", "quotes", "shares"} {
		if n, ok := metagraph.Count(vals[name]); ok {
			if m.Shares == nil {
				m.Shares = provider.N(0)
			}
			*m.Shares += n
		}
	}
	return m
}

// reply is a Threads reply as Comments reads it.
type reply struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Username  string `json:"username"`
	Timestamp string `json:"timestamp"`
	RepliedTo *struct {
		ID string `json:"id"`
	} `json:"replied_to"`
	Own bool `json:"is_reply_owned_by_me"`
}

// comment is the reply as an inbox comment on the post itemID.
func (r reply) comment(itemID string) provider.Comment {
	c := provider.Comment{ID: r.ID, Author: r.Username, Text: r.Text, Own: r.Own}
	if r.RepliedTo != nil && r.RepliedTo.ID != itemID {
		c.ParentID = r.RepliedTo.ID
	}
	if t, err := metagraph.ParseTime(r.Timestamp); err == nil {
		c.CreatedAt = t
	}
	return c
}

// Comments implements provider.CommentSource.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return nil, err
	}
	q := url.Values{"fields": {replyFields}, "reverse": {"false"}, "limit": {"100"}}
	rows, err := metagraph.List[reply](ctx, g, "/"+url.PathEscape(itemID)+"/conversation", q, maxReplyPages)
	if err != nil {
		return nil, classify(err)
	}
	out := make([]provider.Comment, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.comment(itemID))
	}
	return out, nil
}

// Reply implements provider.CommentSource. The published reply is read back for the author and time
// Threads stored; when that read fails the reply is still published, and is answered as sent.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	g, err := p.channelGraph(ch)
	if err != nil {
		return provider.Comment{}, err
	}
	if ch.Account == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0, "Threads: the channel has no Threads user id")
	}
	user := "/" + url.PathEscape(ch.Account)
	var container, published struct {
		ID string `json:"id"`
	}
	form := url.Values{"media_type": {"TEXT"}, "text": {text}, "reply_to_id": {to.ID}}
	if err := g.Post(ctx, user+"/threads", form, &container); err != nil {
		return provider.Comment{}, classify(err)
	}
	if container.ID == "" {
		return provider.Comment{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Threads: reply container creation answered no id")
	}
	if err := g.Post(ctx, user+"/threads_publish", url.Values{"creation_id": {container.ID}}, &published); err != nil {
		if notReady(err) {
			return provider.Comment{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Threads: the reply container is not ready to publish yet")
		}
		return provider.Comment{}, classify(err)
	}
	if published.ID == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0, "Threads: the reply was published but Threads answered no id")
	}
	sent := provider.Comment{ID: published.ID, ParentID: to.ID, Text: text, CreatedAt: p.cfg.Now().UTC(), Own: true}
	return metagraph.ReadBack(ctx, g, sent, replyFields, func(r reply) provider.Comment { return r.comment(itemID) }), nil
}
