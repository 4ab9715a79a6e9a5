package tiktoksim

// The TikTok simulator's figures: POST /v2/video/query/?fields=… (developers.tiktok.com
// tiktok-api-v2-video-query, tiktok-api-v2-video-object, tiktok-api-v2-rate-limit).
//
//   - fields (query) is required and takes Video Object fields only (id, create_time,
//     cover_image_url, share_url, video_description, duration, height, width, title,
//     embed_html, embed_link, like_count, comment_count, share_count, view_count, is_aigc);
//     another name is invalid_params (the simulator's choice, as for user info). The body
//     {"filters":{"video_ids":[…]}} is required, with 1 to 20 ids.
//   - The answer is data.videos with the asked fields of the ids that are the caller's
//     public posts, in the order asked: "verifies that the videos belong to the user", and
//     the video.list scope reads public videos only. Another creator's post, a post whose
//     public id has not been given yet (moderation, privacy) and an unknown id are left out,
//     not refused.
//   - Figures are AudienceOf the post id from the moment the post was complete
//     (PUBLISH_COMPLETE; for an inbox upload, when the creator posted it): view_count views,
//     like_count likes, comment_count the audience's comments (TikTok has no comment API, so
//     no replies), share_count shares.
//   - The endpoint needs the video.list scope and allows 600 requests per minute and token
//     (TikTok counts per app), answering 429 rate_limit_exceeded beyond; the account's faults
//     apply as on every endpoint.
//
// Not reproduced: cover_image_url is a fixed placeholder on the simulator, not a 6-hour CDN
// link.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// tiktokMaxQueryIDs is how many video ids one query takes.
const tiktokMaxQueryIDs = 20

// tiktokVideoFields are the fields of the Video Object.
var tiktokVideoFields = []string{
	"id", "create_time", "cover_image_url", "share_url", "video_description", "duration", "height", "width",
	"title", "embed_html", "embed_link", "like_count", "comment_count", "share_count", "view_count", "is_aigc",
}

func (t *Sim) videoQuery(w http.ResponseWriter, r *http.Request, acc sim.Account, _ string) {
	raw := strings.TrimSpace(r.URL.Query().Get("fields"))
	if raw == "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "The fields parameter is required.", nil)
		return
	}
	var fields []string
	for _, f := range strings.Split(raw, ",") {
		if f = strings.TrimSpace(f); !slices.Contains(tiktokVideoFields, f) {
			tiktokError(w, http.StatusBadRequest, "invalid_params", "Unknown video field "+strconv.Quote(f)+".", nil)
			return
		}
		fields = append(fields, f)
	}
	var req struct {
		Filters *struct {
			VideoIDs []string `json:"video_ids"`
		} `json:"filters"`
	}
	if msg := decodeTikTokJSON(r, &req); msg != "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", msg, nil)
		return
	}
	switch {
	case req.Filters == nil || len(req.Filters.VideoIDs) == 0:
		tiktokError(w, http.StatusBadRequest, "invalid_params", "filters.video_ids is required.", nil)
		return
	case len(req.Filters.VideoIDs) > tiktokMaxQueryIDs:
		tiktokError(w, http.StatusBadRequest, "invalid_params",
			"Up to "+strconv.Itoa(tiktokMaxQueryIDs)+" video IDs can be included per request.", nil)
		return
	}
	posts, err := t.accountPosts(r.Context(), acc.ID)
	if err != nil {
		tiktokInternal(w)
		return
	}
	now := t.cfg.Now()
	videos := []map[string]any{}
	for _, id := range req.Filters.VideoIDs {
		p, ok, err := t.publicPost(r.Context(), posts, id, now)
		if err != nil {
			tiktokInternal(w)
			return
		}
		if ok {
			videos = append(videos, t.videoObject(p, fields, now))
		}
	}
	tiktokOK(w, map[string]any{"videos": videos})
}

// publicPost is the post among the account's posts whose public id is id, once TikTok gives
// that id.
func (t *Sim) publicPost(ctx context.Context, posts []tiktokPost, id string, now time.Time) (tiktokPost, bool, error) {
	for _, p := range posts {
		if p.PostID != id {
			continue
		}
		p, ok, err := t.post(ctx, p.PublishID)
		if err != nil || !ok {
			return p, false, err
		}
		if _, _, ids := t.statusOf(p, now); len(ids) > 0 {
			return p, true, nil
		}
	}
	return tiktokPost{}, false, nil
}

// videoObject renders the asked fields of a published post.
func (t *Sim) videoObject(p tiktokPost, fields []string, now time.Time) map[string]any {
	a := sim.AudienceOf(p.PostID, p.FinishedAt, now)
	share := "https://www.tiktok.com/@" + url.PathEscape(t.creatorOf(p.Account).Username) + "/video/" + p.PostID
	all := map[string]any{
		"id": p.PostID, "create_time": p.FinishedAt.Unix(),
		"cover_image_url":   t.cfg.BaseURL + "/cover/" + p.PostID + ".jpeg",
		"share_url":         share,
		"video_description": p.Title, "title": p.Title,
		"duration": int(p.Duration / time.Second), "height": p.Height, "width": p.Width,
		"embed_html": `<blockquote class="tiktok-embed" cite="` + share + `" data-video-id="` + p.PostID +
			`"><section></section></blockquote>`,
		"embed_link": "https://www.tiktok.com/player/v1/" + p.PostID,
		"like_count": a.Likes, "comment_count": a.Comments, "share_count": a.Shares, "view_count": a.Views,
		"is_aigc": p.AIGC,
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}
