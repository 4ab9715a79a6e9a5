package facebooksim

// The Facebook Reels simulator's figures and comments. Sources: developers.facebook.com/docs/
// graph-api/reference/video/video_insights, docs/video-api/guides/insights (Reels metrics:
// plays, post reach, average and total time watched, reactions, comments and shares; the
// answer's data[{name, period, values[{value}], title, description, id}]), the "Introducing
// Reels metrics API" post, docs/graph-api/reference/object/comments (filter, order, summary)
// and docs/graph-api/reference/comment (fields; ids {object-id}_{comment-id}).
//
// What it reproduces:
//   - GET /{video-id}/video_insights[?metric=...&period=lifetime]: lifetime rows from the
//     reel's audience (AudienceOf from the time the reel was published):
//     blue_reels_play_count → views, post_impressions_unique → reach, post_video_view_time →
//     watch time in milliseconds, post_video_avg_time_watched → that over views,
//     post_video_likes_by_reaction_type → likes split into LIKE, LOVE and HAHA,
//     post_video_social_actions → {COMMENT: audience comments plus the Page's, SHARE: shares},
//     fb_reels_replay_count a quarter of the plays and fb_reels_total_plays plays plus replays
//     (the simulator's choice). Without metric, every one; an unknown one is code 100; another
//     period than lifetime, or a reel not yet published, answers an empty set;
//   - GET /{video-id}/comments (filter=toplevel, the default, or stream; order chronological or
//     reverse_chronological; summary=true; cursor paging; fields with from{...}, parent{...})
//     and GET /{comment-id}/comments (its replies); GET /{comment-id};
//   - POST /{comment-id}/comments message= (a reply by the Page, recorded) and
//     POST /{video-id}/comments (a comment by the Page). Facebook threads comments two levels
//     deep: a reply to a reply goes under its top-level comment. The message is limited as
//     platform.Capabilities' reply_text says.
//
// Not simulated: the other Reels metrics (post_video_followers, post_video_retention_graph,
// ...), which answer as unknown; attachments on comments. The wording of an over-long message
// is the simulator's own.

import (
	"cmp"
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

// fbReelMetrics are the Reels metrics of video_insights the simulator answers.
var fbReelMetrics = []string{
	"blue_reels_play_count", "fb_reels_total_plays", "fb_reels_replay_count", "post_impressions_unique",
	"post_video_avg_time_watched", "post_video_view_time", "post_video_likes_by_reaction_type", "post_video_social_actions",
}

// fbComment is a comment on a reel: from the audience, or posted by the Page.
type fbComment struct {
	ID       string    `json:"id"`
	Video    string    `json:"video"`
	Parent   string    `json:"parent,omitempty"` // the top-level comment a reply answers; "" for a top-level comment
	FromID   string    `json:"from_id"`
	FromName string    `json:"from_name"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// fbCommentID is the id of the reel's audience comment number n ({object-id}_{comment-id}).
func fbCommentID(videoID string, n int) string {
	return videoID + "_" + metasim.DerivedID(1_000_000_000_000_000, 1e15, "fb-comment", videoID, fmt.Sprint(n))
}

// fbUserID is the app-scoped id of an audience commenter.
func fbUserID(name string) string {
	return metasim.DerivedID(100_000_000_000_000, 9e14, "fb-user", name)
}

// fbNonZero drops the zero counts of a breakdown: Graph leaves them out.
func fbNonZero(counts map[string]int64) map[string]int64 {
	for k, n := range counts {
		if n == 0 {
			delete(counts, k)
		}
	}
	return counts
}

// thread is every comment on the published reel v by now, oldest first.
func (s *fbSim) thread(v fbVideo, now time.Time) []fbComment {
	if !v.Done {
		return nil
	}
	var out []fbComment
	for _, c := range sim.AudienceComments(v.ID, v.At, now) {
		out = append(out, fbComment{ID: fbCommentID(v.ID, c.N), Video: v.ID, FromID: fbUserID(c.Author), FromName: c.Author, Text: c.Text, At: c.At})
	}
	out = append(out, v.Comments...)
	slices.SortStableFunc(out, func(a, b fbComment) int { return a.At.Compare(b.At) })
	return out
}

// findComment finds a comment on one of the Page's reels (its id starts with the reel's),
// with the reel's whole thread.
func (s *fbSim) findComment(ctx context.Context, acct sim.Account, id string, now time.Time) (fbComment, []fbComment, bool, error) {
	video, _, found := strings.Cut(id, "_")
	if !found {
		return fbComment{}, nil, false, nil
	}
	v, ok, err := s.video(ctx, acct, video)
	if err != nil || !ok {
		return fbComment{}, nil, false, err
	}
	thread := s.thread(v, now)
	for _, c := range thread {
		if c.ID == id {
			return c, thread, true, nil
		}
	}
	return fbComment{}, nil, false, nil
}

// insights is GET /{video-id}/video_insights.
func (s *fbSim) insights(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	names, _ := metasim.Metrics(p, false)
	if len(names) == 0 {
		names = fbReelMetrics
	}
	for _, n := range names {
		if !slices.Contains(fbReelMetrics, n) {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The value must be a valid insights metric")
		}
	}
	now := s.cfg.Now()
	v, ok, err := s.video(ctx, acct, id)
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	data := []any{}
	if period := p.Get("period"); !v.Done || (period != "" && period != "lifetime") {
		return map[string]any{"data": data}, nil
	}
	a := sim.AudienceOf(v.ID, v.At, now)
	comments := int64(len(s.thread(v, now)))
	avg := int64(0)
	if a.Views > 0 {
		avg = a.WatchSeconds * 1000 / a.Views
	}
	love, haha := a.Likes/5, a.Likes/10
	values := map[string]any{
		"blue_reels_play_count":             a.Views,
		"fb_reels_replay_count":             a.Views / 4,
		"fb_reels_total_plays":              a.Views + a.Views/4,
		"post_impressions_unique":           a.Reach,
		"post_video_avg_time_watched":       avg,
		"post_video_view_time":              a.WatchSeconds * 1000,
		"post_video_likes_by_reaction_type": fbNonZero(map[string]int64{"REACTION_LIKE": a.Likes - love - haha, "REACTION_LOVE": love, "REACTION_HAHA": haha}),
		"post_video_social_actions":         fbNonZero(map[string]int64{"COMMENT": comments, "SHARE": a.Shares}),
	}
	titles := map[string][2]string{
		"blue_reels_play_count":             {"Plays", "Lifetime: The number of times your reel started to play, not counting replays."},
		"fb_reels_replay_count":             {"Replays", "Lifetime: The number of times your reel was played again after its first play."},
		"fb_reels_total_plays":              {"Total plays", "Lifetime: The number of times your reel started to play, replays included."},
		"post_impressions_unique":           {"Post reach", "Lifetime: The number of people who saw your reel at least once."},
		"post_video_avg_time_watched":       {"Average time watched", "Lifetime: The average time your reel was played, in milliseconds."},
		"post_video_view_time":              {"Time watched", "Lifetime: The total time your reel was played, replays included, in milliseconds."},
		"post_video_likes_by_reaction_type": {"Reactions by type", "Lifetime: The number of reactions on your reel, by type."},
		"post_video_social_actions":         {"Comments and shares", "Lifetime: The number of comments and shares of your reel."},
	}
	for _, n := range names {
		data = append(data, metasim.Insight(v.ID, "video_insights", n, titles[n][0], titles[n][1], values[n]))
	}
	return map[string]any{"data": data}, nil
}

// commentFields is every field of a comment of thread.
func (s *fbSim) commentFields(c fbComment, thread []fbComment) map[string]any {
	from := func(o fbComment) map[string]any { return map[string]any{"id": o.FromID, "name": o.FromName} }
	children := 0
	var parent map[string]any
	for _, o := range thread {
		if o.Parent == c.ID {
			children++
		}
		if c.Parent != "" && o.ID == c.Parent {
			parent = map[string]any{"id": o.ID, "created_time": metasim.Timestamp(o.At), "from": from(o), "message": o.Text}
		}
	}
	_, number, _ := strings.Cut(c.ID, "_")
	all := map[string]any{
		"id": c.ID, "message": c.Text, "created_time": metasim.Timestamp(c.At), "from": from(c),
		"like_count": 0, "comment_count": children, "is_hidden": false, "can_comment": c.Parent == "",
		"permalink_url": fbReelURL(c.Video) + "?comment_id=" + number,
		"object":        map[string]any{"id": c.Video}, "attachment": nil, "message_tags": nil, "parent": nil,
	}
	if parent != nil {
		all["parent"] = parent
	}
	return all
}

// listComments is GET /{video-id}/comments and GET /{comment-id}/comments.
func (s *fbSim) listComments(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	filter := cmp.Or(p.Get("filter"), "toplevel")
	if filter != "toplevel" && filter != "stream" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param filter must be one of {toplevel, stream}, got %q", filter))
	}
	order := cmp.Or(p.Get("order"), "chronological")
	if order != "chronological" && order != "reverse_chronological" && order != "ranked" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param order must be one of {chronological, reverse_chronological, ranked}, got %q", order))
	}
	summary, ok := metasim.Bool(p, "summary", false)
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param summary must be a boolean")
	}
	start, limit, gerr := metasim.Paging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	var thread, rows []fbComment
	v, isVideo, err := s.video(ctx, acct, id)
	if err != nil {
		return nil, metasim.Internal()
	}
	_, t, isComment, err := s.findComment(ctx, acct, id, now)
	if err != nil {
		return nil, metasim.Internal()
	}
	if isVideo {
		thread = s.thread(v, now)
		for _, c := range thread {
			if filter == "stream" || c.Parent == "" {
				rows = append(rows, c)
			}
		}
	} else if isComment {
		thread = t
		for _, c := range thread {
			if c.Parent == id {
				rows = append(rows, c)
			}
		}
	} else {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	// Ranked order is Facebook's relevance; the simulator has none, so it is chronological.
	if order == "reverse_chronological" {
		slices.Reverse(rows)
	}
	page, gerr := metasim.Page(rows, start, limit, metasim.Next(s.cfg.BaseURL, "/"+id+"/comments", p), func(c fbComment) (map[string]any, *metasim.Error) {
		return metasim.Select(s.commentFields(c, thread), "Comment", p.Get("fields"), "created_time,from,message,id")
	})
	if gerr != nil {
		return nil, gerr
	}
	if summary {
		page.(map[string]any)["summary"] = map[string]any{"order": order, "total_count": len(rows), "can_comment": true}
	}
	return page, nil
}

// comment is POST /{object-id}/comments: a comment on one of the Page's published reels, or a
// reply to a comment there (a reply to a reply joins its top-level comment, two levels deep).
func (s *fbSim) comment(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	msg := p.Get("message")
	if p.Get("attachment_url") != "" || p.Get("attachment_id") != "" || p.Get("source") != "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Comment attachments are not supported by this simulator")
	}
	if msg == "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Missing message or attachment")
	}
	if lim := s.caps.ReplyText; !lim.Check(msg) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param message must be at most %d characters long", lim.Max))
	}
	now := s.cfg.Now()
	c := fbComment{FromID: acct.ID, FromName: fbPageName(acct), Text: msg, At: now}
	reply := false
	if to, _, ok, err := s.findComment(ctx, acct, id, now); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		c.Video, c.Parent, reply = to.Video, to.ID, true
		if to.Parent != "" {
			c.Parent = to.Parent // two levels deep: a reply to a reply joins its top-level comment
		}
	} else if v, ok, err := s.video(ctx, acct, id); err != nil {
		return nil, metasim.Internal()
	} else if ok && v.Done {
		c.Video = v.ID
	} else {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, id))
	}
	c.ID = c.Video + "_" + metasim.RandomID(2_000_000_000_000_000)
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		v, rec, found, err := sim.LoadTx[fbVideo](tx, fbKey(fbVideoKind, c.Video))
		if err != nil || !found {
			return err
		}
		v.Comments = append(v.Comments, c)
		if reply {
			if err := sim.RecordTx(tx, platform.Facebook, sim.Reply{Account: acct.ID, CommentID: id, Text: msg}); err != nil {
				return err
			}
		}
		return sim.Save(tx, rec, v)
	})
	if err != nil {
		return nil, metasim.Internal()
	}
	return map[string]string{"id": c.ID}, nil
}
