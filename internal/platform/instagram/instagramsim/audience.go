package instagramsim

// The Instagram simulator's figures and comments. Sources: developers.facebook.com/docs/
// instagram-platform reference/instagram-media/insights (metrics, the retired ones, "an empty
// data set instead of 0"), instagram-graph-api/reference/ig-comment (fields),
// ig-media/comments, ig-comment/replies ("You can only reply to top-level comments; replies
// to a reply will be added to the top-level comment. You cannot reply to hidden comments.")
// and the hide parameter of POST /{ig-comment-id}.
//
// What it reproduces:
//   - GET /{ig-media-id}/insights?metric=views,reach,likes,comments,shares,saved,
//     total_interactions,ig_reels_avg_watch_time,ig_reels_video_view_total_time: lifetime
//     rows from the item's audience (AudienceOf at the media's publishing time); views →
//     views, reach → reach, likes → likes, comments → audience comments plus the account's
//     replies, shares → shares, saved → saves, total_interactions → their sum, the watch times
//     in milliseconds. Until a first view is counted the answer is an empty set. The retired
//     metrics (plays, clips_replays_count, ig_reels_aggregated_all_plays_count, impressions,
//     video_views) fail the whole read with code 100, as Graph answers since April 2025; any
//     other unknown name fails with the list of valid ones;
//   - GET /{ig-media-id}/comments: the top-level comments (AudienceComments), oldest first,
//     paged by cursor, with field expansion (from{id,username}, replies{...});
//   - POST /{ig-comment-id}/replies?message=: a reply by the account; a reply to a reply goes
//     to its top-level comment; hidden comments refuse replies; the message is limited as
//     platform.Capabilities' reply_text says;
//   - POST /{ig-comment-id}?hide=true|false; GET /{ig-comment-id}.
//
// Meta documents no wording for an over-long or a hidden-comment reply: those answers are the
// simulator's own.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/metagraph/metasim"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Reels metrics of the media insights reference, and the retired ones.
var (
	igReelsMetrics   = []string{"views", "reach", "likes", "comments", "shares", "saved", "total_interactions", "ig_reels_avg_watch_time", "ig_reels_video_view_total_time"}
	igRetiredMetrics = []string{"plays", "clips_replays_count", "ig_reels_aggregated_all_plays_count", "impressions", "video_views"}
)

// igComment is a comment on a Reel: from the audience, or a reply the account posted.
type igComment struct {
	ID       string    `json:"id"`
	Media    string    `json:"media"`
	Parent   string    `json:"parent,omitempty"` // the top-level comment a reply answers; "" for a top-level comment
	FromID   string    `json:"from_id"`
	Username string    `json:"username"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
	Own      bool      `json:"own,omitempty"`
}

// igCommentID is the id of the item's audience comment number n.
func igCommentID(mediaID string, n int) string {
	return metasim.DerivedID(17850000000000000, 1e13, "ig-comment", mediaID, fmt.Sprint(n))
}

// igScopedID is the Instagram-scoped id of an audience commenter.
func igScopedID(username string) string {
	return metasim.DerivedID(6000000000000000, 1e15, "ig-user", username)
}

// audience is the top-level comments on m by now, oldest first.
func (s *igSim) audience(m igMedia, now time.Time) []igComment {
	var out []igComment
	for _, c := range sim.AudienceComments(m.ID, m.Timestamp, now) {
		out = append(out, igComment{ID: igCommentID(m.ID, c.N), Media: m.ID, FromID: igScopedID(c.Author), Username: c.Author, Text: c.Text, At: c.At})
	}
	return out
}

// replies is the replies under the comment parent of m, oldest first.
func (s *igSim) replies(m igMedia, parent string) []igComment {
	var out []igComment
	for _, r := range m.Replies {
		if r.Parent == parent {
			out = append(out, r)
		}
	}
	return out
}

// ownedMedia is the account's media id, or Graph's answer for an object the token cannot see.
func (s *igSim) ownedMedia(ctx context.Context, acct sim.Account, id, method string) (igMedia, *metasim.Error) {
	m, _, ok, err := sim.Load[igMedia](ctx, s.cfg.State, igKey(igMediaKind, id))
	if err != nil {
		return igMedia{}, metasim.Internal()
	}
	if !ok || m.Account != acct.ID {
		return igMedia{}, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(method, id))
	}
	return m, nil
}

// comment finds a comment on one of the account's Reels, with the Reel.
func (s *igSim) comment(ctx context.Context, acct sim.Account, id string, now time.Time) (igComment, igMedia, bool, error) {
	all, err := s.accountMedia(ctx, acct.ID)
	if err != nil {
		return igComment{}, igMedia{}, false, err
	}
	for _, m := range all {
		for _, r := range m.Replies {
			if r.ID == id {
				return r, m, true, nil
			}
		}
		for _, c := range s.audience(m, now) {
			if c.ID == id {
				return c, m, true, nil
			}
		}
	}
	return igComment{}, igMedia{}, false, nil
}

// insights is GET /{ig-media-id}/insights.
func (s *igSim) insights(ctx context.Context, acct sim.Account, mediaID string, p url.Values) (any, *metasim.Error) {
	names, gerr := metasim.Metrics(p, true)
	if gerr != nil {
		return nil, gerr
	}
	for i, n := range names {
		switch {
		case slices.Contains(igRetiredMetrics, n):
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) The Media Insights API does not support the %s metric for this media product type.", n))
		case !slices.Contains(igReelsMetrics, n):
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) metric[%d] must be one of the following values: %s", i, strings.Join(igReelsMetrics, ", ")))
		}
	}
	now := s.cfg.Now()
	m, gerr := s.ownedMedia(ctx, acct, mediaID, http.MethodGet)
	if gerr != nil {
		return nil, gerr
	}
	a := sim.AudienceOf(m.ID, m.Timestamp, now)
	data := []any{}
	if a.Views == 0 {
		// "If insights data you are requesting does not exist or is currently unavailable,
		// the API returns an empty data set instead of 0 for individual metrics."
		return map[string]any{"data": data}, nil
	}
	comments := a.Comments
	for _, c := range s.audience(m, now) {
		comments += int64(len(s.replies(m, c.ID)))
	}
	values := map[string]int64{
		"views": a.Views, "reach": a.Reach, "likes": a.Likes, "comments": comments, "shares": a.Shares, "saved": a.Saves,
		"total_interactions":             a.Likes + comments + a.Shares + a.Saves,
		"ig_reels_avg_watch_time":        a.WatchSeconds * 1000 / a.Views,
		"ig_reels_video_view_total_time": a.WatchSeconds * 1000,
	}
	titles := map[string][2]string{
		"views":                          {"Views", "The number of times the reel was played or displayed."},
		"reach":                          {"Accounts reached", "The number of unique accounts that have seen the reel at least once."},
		"likes":                          {"Likes", "The number of likes on the reel."},
		"comments":                       {"Comments", "The number of comments on the reel."},
		"shares":                         {"Shares", "The number of shares of the reel."},
		"saved":                          {"Saved", "The number of saves of the reel."},
		"total_interactions":             {"Interactions", "The number of likes, saves, comments and shares on the reel."},
		"ig_reels_avg_watch_time":        {"Average watch time", "The average time spent playing the reel, in milliseconds."},
		"ig_reels_video_view_total_time": {"Watch time", "The total time the reel was played, including replays, in milliseconds."},
	}
	for _, n := range names {
		data = append(data, metasim.Insight(m.ID, "insights", n, titles[n][0], titles[n][1], values[n]))
	}
	return map[string]any{"data": data}, nil
}

// commentFields is every field of an IG Comment node c of m.
func (s *igSim) commentFields(m igMedia, c igComment) map[string]any {
	all := map[string]any{
		"id": c.ID, "text": c.Text, "timestamp": metasim.Timestamp(c.At), "username": c.Username,
		"like_count": 0, "hidden": m.Hidden[c.ID],
		"from":      map[string]any{"id": c.FromID, "username": c.Username},
		"media":     map[string]any{"id": c.Media, "media_product_type": "REELS"},
		"parent_id": nil, "user": nil, "legacy_instagram_comment_id": nil,
	}
	if c.Own {
		// "user" is returned to the comment's author only.
		all["user"] = map[string]any{"id": c.FromID}
	}
	if c.Parent != "" {
		all["parent_id"] = c.Parent
		all["replies"] = metasim.List{Type: "IGComment"}
		return all
	}
	var rows []map[string]any
	for _, r := range s.replies(m, c.ID) {
		rows = append(rows, s.commentFields(m, r))
	}
	all["replies"] = metasim.List{Type: "IGComment", Rows: rows}
	return all
}

// comments is GET /{ig-media-id}/comments: the top-level comments, oldest first.
func (s *igSim) comments(ctx context.Context, acct sim.Account, mediaID string, p url.Values) (any, *metasim.Error) {
	start, limit, gerr := metasim.Paging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	m, gerr := s.ownedMedia(ctx, acct, mediaID, http.MethodGet)
	if gerr != nil {
		return nil, gerr
	}
	next := metasim.Next(s.cfg.BaseURL, "/"+mediaID+"/comments", p)
	return metasim.Page(s.audience(m, now), start, limit, next, func(c igComment) (map[string]any, *metasim.Error) {
		return metasim.Select(s.commentFields(m, c), "IGComment", p.Get("fields"), "timestamp,text,id")
	})
}

// changeMedia runs fn on the Reel id within one transaction and writes what it left; fn's
// *metasim.Error is answered as it is.
func (s *igSim) changeMedia(ctx context.Context, id string, fn func(tx sim.Tx, m *igMedia) *metasim.Error) *metasim.Error {
	var gerr *metasim.Error
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		m, rec, found, err := sim.LoadTx[igMedia](tx, igKey(igMediaKind, id))
		if err != nil || !found {
			return err
		}
		if gerr = fn(tx, &m); gerr != nil {
			return nil
		}
		return sim.Save(tx, rec, m)
	})
	if err != nil {
		return metasim.Internal()
	}
	return gerr
}

// reply is POST /{ig-comment-id}/replies.
func (s *igSim) reply(ctx context.Context, acct sim.Account, commentID string, p url.Values) (any, *metasim.Error) {
	msg := p.Get("message")
	if msg == "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The parameter message is required")
	}
	if lim := s.caps.ReplyText; !lim.Check(msg) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) The comment is too long: %d of at most %d characters", lim.Count(msg), lim.Max))
	}
	now := s.cfg.Now()
	c, m, ok, err := s.comment(ctx, acct, commentID, now)
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, commentID))
	}
	parent := c.ID
	if c.Parent != "" {
		parent = c.Parent // a reply to a reply is added to the top-level comment
	}
	r := igComment{ID: metasim.RandomID(17860000000000000), Media: c.Media, Parent: parent, FromID: acct.ID, Username: acct.Username, Text: msg, At: now, Own: true}
	gerr := s.changeMedia(ctx, m.ID, func(tx sim.Tx, m *igMedia) *metasim.Error {
		if m.Hidden[c.ID] {
			return metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The comment is hidden: hidden comments cannot be replied to")
		}
		m.Replies = append(m.Replies, r)
		if err := sim.RecordTx(tx, platform.Instagram, sim.Reply{Account: acct.ID, CommentID: commentID, Text: msg}); err != nil {
			return metasim.Internal()
		}
		return nil
	})
	if gerr != nil {
		return nil, gerr
	}
	return map[string]string{"id": r.ID}, nil
}

// hide is POST /{ig-comment-id}?hide=true|false.
func (s *igSim) hide(ctx context.Context, acct sim.Account, commentID string, p url.Values) (any, *metasim.Error) {
	hide, ok := metasim.ParseBool(p.Get("hide"))
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param hide must be a boolean")
	}
	_, m, ok, err := s.comment(ctx, acct, commentID, s.cfg.Now())
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, commentID))
	}
	gerr := s.changeMedia(ctx, m.ID, func(_ sim.Tx, m *igMedia) *metasim.Error {
		if m.Hidden == nil {
			m.Hidden = map[string]bool{}
		}
		m.Hidden[commentID] = hide
		return nil
	})
	if gerr != nil {
		return nil, gerr
	}
	return map[string]bool{"success": true}, nil
}
