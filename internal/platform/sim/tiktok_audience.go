package sim

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
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tiktokMaxQueryIDs is how many video ids one query takes.
const tiktokMaxQueryIDs = 20

// tiktokVideoFields are the fields of the Video Object.
var tiktokVideoFields = []string{
	"id", "create_time", "cover_image_url", "share_url", "video_description", "duration", "height", "width",
	"title", "embed_html", "embed_link", "like_count", "comment_count", "share_count", "view_count", "is_aigc",
}

func (t *TikTok) videoQuery(w http.ResponseWriter, r *http.Request, acc Account, _ string) {
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
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	videos := []map[string]any{}
	for _, id := range req.Filters.VideoIDs {
		if p := t.publicPost(acc, id, now); p != nil {
			videos = append(videos, t.videoObject(p, fields, now))
		}
	}
	tiktokOK(w, map[string]any{"videos": videos})
}

// publicPost is the account's post whose public id is id, once TikTok gives that id (under
// t.mu).
func (t *TikTok) publicPost(acc Account, id string, now time.Time) *tiktokPost {
	for _, p := range t.posts {
		if p.postID != id || p.account.ID != acc.ID {
			continue
		}
		t.advance(p, now)
		if _, _, ids := t.statusOf(p, now); len(ids) > 0 {
			return p
		}
	}
	return nil
}

// videoObject renders the asked fields of a published post (under t.mu).
func (t *TikTok) videoObject(p *tiktokPost, fields []string, now time.Time) map[string]any {
	a := AudienceOf(p.postID, p.finishedAt, now)
	share := "https://www.tiktok.com/@" + url.PathEscape(t.creatorOf(p.account).Username) + "/video/" + p.postID
	all := map[string]any{
		"id": p.postID, "create_time": p.finishedAt.Unix(),
		"cover_image_url":   t.cfg.BaseURL + "/cover/" + p.postID + ".jpeg",
		"share_url":         share,
		"video_description": p.title, "title": p.title,
		"duration": int(p.info.Duration / time.Second), "height": p.info.Height, "width": p.info.Width,
		"embed_html": `<blockquote class="tiktok-embed" cite="` + share + `" data-video-id="` + p.postID +
			`"><section></section></blockquote>`,
		"embed_link": "https://www.tiktok.com/player/v1/" + p.postID,
		"like_count": a.Likes, "comment_count": a.Comments, "share_count": a.Shares, "view_count": a.Views,
		"is_aigc": p.aigc,
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}
