package sim

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
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Reels metrics of the media insights reference, and the retired ones.
var (
	igReelsMetrics   = []string{"views", "reach", "likes", "comments", "shares", "saved", "total_interactions", "ig_reels_avg_watch_time", "ig_reels_video_view_total_time"}
	igRetiredMetrics = []string{"plays", "clips_replays_count", "ig_reels_aggregated_all_plays_count", "impressions", "video_views"}
)

// igComment is a comment on a Reel: from the audience, or a reply the account posted.
type igComment struct {
	id, media string
	parent    string // the top-level comment a reply answers; "" for a top-level comment
	fromID    string
	username  string
	text      string
	at        time.Time
	own       bool
}

// igCommentID is the id of the item's audience comment number n.
func igCommentID(mediaID string, n int) string {
	return metaDerivedID(17850000000000000, 1e13, "ig-comment", mediaID, fmt.Sprint(n))
}

// igScopedID is the Instagram-scoped id of an audience commenter.
func igScopedID(username string) string {
	return metaDerivedID(6000000000000000, 1e15, "ig-user", username)
}

// audienceLocked is the top-level comments on m by now, oldest first. The caller holds s.mu.
func (s *igSim) audienceLocked(m *igMedia, now time.Time) []igComment {
	var out []igComment
	for _, c := range AudienceComments(m.id, m.timestamp, now) {
		out = append(out, igComment{id: igCommentID(m.id, c.N), media: m.id, fromID: igScopedID(c.Author), username: c.Author, text: c.Text, at: c.At})
	}
	return out
}

// repliesLocked is the replies under the comment parent, oldest first. The caller holds s.mu.
func (s *igSim) repliesLocked(parent string) []igComment {
	var out []igComment
	for _, id := range s.replyOrder {
		if r := s.replies[id]; r.parent == parent {
			out = append(out, *r)
		}
	}
	return out
}

// ownedMediaLocked is the account's media id, or Graph's answer for an object the token
// cannot see. The caller holds s.mu.
func (s *igSim) ownedMediaLocked(acct Account, id, method string) (*igMedia, *igError) {
	m, ok := s.media[id]
	if !ok || m.account != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(method, id))
	}
	return m, nil
}

// commentLocked finds a comment on one of the account's Reels. The caller holds s.mu.
func (s *igSim) commentLocked(acct Account, id string, now time.Time) (igComment, bool) {
	if r, ok := s.replies[id]; ok {
		return *r, s.media[r.media].account == acct.ID
	}
	for _, mid := range s.order {
		m := s.media[mid]
		if m.account != acct.ID {
			continue
		}
		for _, c := range s.audienceLocked(m, now) {
			if c.id == id {
				return c, true
			}
		}
	}
	return igComment{}, false
}

// insights is GET /{ig-media-id}/insights.
func (s *igSim) insights(acct Account, mediaID string, p url.Values) (any, *igError) {
	names, gerr := metaMetrics(p, true)
	if gerr != nil {
		return nil, gerr
	}
	for i, n := range names {
		switch {
		case slices.Contains(igRetiredMetrics, n):
			return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) The Media Insights API does not support the %s metric for this media product type.", n))
		case !slices.Contains(igReelsMetrics, n):
			return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) metric[%d] must be one of the following values: %s", i, strings.Join(igReelsMetrics, ", ")))
		}
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, gerr := s.ownedMediaLocked(acct, mediaID, http.MethodGet)
	if gerr != nil {
		return nil, gerr
	}
	a := AudienceOf(m.id, m.timestamp, now)
	data := []any{}
	if a.Views == 0 {
		// "If insights data you are requesting does not exist or is currently unavailable,
		// the API returns an empty data set instead of 0 for individual metrics."
		return map[string]any{"data": data}, nil
	}
	comments := a.Comments
	for _, c := range s.audienceLocked(m, now) {
		comments += int64(len(s.repliesLocked(c.id)))
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
		data = append(data, metaInsight(m.id, "insights", n, titles[n][0], titles[n][1], values[n]))
	}
	return map[string]any{"data": data}, nil
}

// commentFieldsLocked is every field of an IG Comment node. The caller holds s.mu.
func (s *igSim) commentFieldsLocked(c igComment) map[string]any {
	all := map[string]any{
		"id": c.id, "text": c.text, "timestamp": metaTimestamp(c.at), "username": c.username,
		"like_count": 0, "hidden": s.hidden[c.id],
		"from":      map[string]any{"id": c.fromID, "username": c.username},
		"media":     map[string]any{"id": c.media, "media_product_type": "REELS"},
		"parent_id": nil, "user": nil, "legacy_instagram_comment_id": nil,
	}
	if c.own {
		// "user" is returned to the comment's author only.
		all["user"] = map[string]any{"id": c.fromID}
	}
	if c.parent != "" {
		all["parent_id"] = c.parent
		all["replies"] = metaList{typ: "IGComment"}
		return all
	}
	var rows []map[string]any
	for _, r := range s.repliesLocked(c.id) {
		rows = append(rows, s.commentFieldsLocked(r))
	}
	all["replies"] = metaList{typ: "IGComment", rows: rows}
	return all
}

// comments is GET /{ig-media-id}/comments: the top-level comments, oldest first.
func (s *igSim) comments(acct Account, mediaID string, p url.Values) (any, *igError) {
	start, limit, gerr := metaPaging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, gerr := s.ownedMediaLocked(acct, mediaID, http.MethodGet)
	if gerr != nil {
		return nil, gerr
	}
	next := metaNext(s.cfg.BaseURL, "/"+mediaID+"/comments", p)
	return metaPage(s.audienceLocked(m, now), start, limit, next, func(c igComment) (map[string]any, *igError) {
		return metaSelect(s.commentFieldsLocked(c), "IGComment", p.Get("fields"), "timestamp,text,id")
	})
}

// reply is POST /{ig-comment-id}/replies.
func (s *igSim) reply(acct Account, commentID string, p url.Values) (any, *igError) {
	msg := p.Get("message")
	if msg == "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter message is required")
	}
	if lim := s.caps.ReplyText; !lim.Check(msg) {
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) The comment is too long: %d of at most %d characters", lim.Count(msg), lim.Max))
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.commentLocked(acct, commentID, now)
	if !ok {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, commentID))
	}
	if s.hidden[c.id] {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The comment is hidden: hidden comments cannot be replied to")
	}
	parent := c.id
	if c.parent != "" {
		parent = c.parent // a reply to a reply is added to the top-level comment
	}
	r := &igComment{id: s.nextID(17860000000000000), media: c.media, parent: parent, fromID: acct.ID, username: acct.Username, text: msg, at: now, own: true}
	s.replies[r.id] = r
	s.replyOrder = append(s.replyOrder, r.id)
	s.cfg.Recorder.RecordReply(Reply{Account: acct.ID, CommentID: commentID, Text: msg})
	return map[string]string{"id": r.id}, nil
}

// hide is POST /{ig-comment-id}?hide=true|false.
func (s *igSim) hide(acct Account, commentID string, p url.Values) (any, *igError) {
	hide, ok := igBool(p.Get("hide"))
	if !ok {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param hide must be a boolean")
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.commentLocked(acct, commentID, now); !ok {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, commentID))
	}
	s.hidden[commentID] = hide
	return map[string]bool{"success": true}, nil
}
