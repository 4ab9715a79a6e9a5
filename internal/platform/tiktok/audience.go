package tiktok

// A creator's figures: POST /v2/video/query/?fields=… with {"filters":{"video_ids":[…]}},
// up to 20 ids a call (scope video.list, 600 requests a minute): view_count, like_count,
// comment_count and share_count. TikTok gives no impressions, reach, saves or watch time
// here, and no comments at all (only the Research and Business APIs have them), so the
// provider is an provider.MetricsSource and not an provider.CommentSource.
//
// Which id: the query takes the public video id. The stored external id is that id when the
// status fetch gave one by the end of publishing (publicaly_available_post_id), and the
// publish_id otherwise: a public post still in moderation, an inbox upload the creator
// finished in the app later, a post that is not public. Metrics asks the status fetch for
// every publish_id it is given (POST /v2/post/publish/status/fetch/, 30 requests a minute)
// and queries the post id it answers, keyed back to the publish_id; one without a post id
// yet (or that TikTok no longer knows) has no figures. Nothing is stored: Metrics cannot
// update a destination's external id, so a publish_id is resolved again on every read, and
// an account with more than 30 of them meets the status fetch's rate limit (its figures
// read so far are kept, and the rest wait for the retry).

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

const (
	pathVideoQuery = "/video/query/"
	// videoQueryFields are the Video Object fields Metrics asks for.
	videoQueryFields = "id,title,share_url,view_count,like_count,comment_count,share_count"
	// maxQueryIDs is what one video query takes.
	maxQueryIDs = 20
)

// video is the part of a Video Object Metrics reads; a count TikTok leaves out stays nil.
type video struct {
	ID           string `json:"id"`
	ViewCount    *int64 `json:"view_count"`
	LikeCount    *int64 `json:"like_count"`
	CommentCount *int64 `json:"comment_count"`
	ShareCount   *int64 `json:"share_count"`
}

// Metrics implements provider.MetricsSource.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	base, token, err := p.target(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	out := map[string]provider.Metrics{}
	var postIDs, publishIDs []string
	for _, id := range itemIDs {
		id = strings.TrimSpace(id)
		switch {
		case id == "" || slices.Contains(postIDs, id) || slices.Contains(publishIDs, id):
		case isPostID(id):
			postIDs = append(postIDs, id)
		default:
			publishIDs = append(publishIDs, id)
		}
	}
	// Post ids first: their figures cost no status fetch, and are kept if a fetch fails.
	if err := p.query(ctx, base, token, postIDs, nil, out); err != nil {
		return out, err
	}
	if len(publishIDs) == 0 {
		return out, nil
	}
	var resolved []string
	asked := map[string][]string{} // post id → the publish ids it answers for
	for _, pid := range publishIDs {
		post, err := p.publicPostID(ctx, base, token, pid)
		if err != nil {
			if qerr := p.query(ctx, base, token, resolved, asked, out); qerr != nil {
				return out, qerr
			}
			return out, err
		}
		if m, read := out[post]; read && slices.Contains(postIDs, post) {
			out[pid] = m
			continue
		}
		if post != "" {
			if _, seen := asked[post]; !seen {
				resolved = append(resolved, post)
			}
			asked[post] = append(asked[post], pid)
		}
	}
	return out, p.query(ctx, base, token, resolved, asked, out)
}

// isPostID reports whether id is a public video id (digits) rather than a publish_id
// ("v_pub_file~v2-1.…", "v_inbox_file~v2.…").
func isPostID(id string) bool {
	return strings.Trim(id, "0123456789") == ""
}

// publicPostID asks the status fetch for the public post id of a publish_id: "" when TikTok
// has none yet, or no longer knows the publish_id.
func (p *Provider) publicPostID(ctx context.Context, base, token, publishID string) (string, error) {
	s, err := p.fetchStatus(ctx, base, token, publishID)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Code == "invalid_publish_id" || ae.Code == "token_not_authorized_for_specified_publish_id") {
		return "", nil
	}
	if err != nil {
		return "", classify(err)
	}
	if s.Status != statusPublishComplete || len(s.PostIDs) == 0 {
		return "", nil
	}
	return s.PostIDs[0].String(), nil
}

// query reads the figures of post ids, 20 a call, into out: under the post id itself, or
// under the publish ids asked names for it.
func (p *Provider) query(ctx context.Context, base, token string, postIDs []string, asked map[string][]string, out map[string]provider.Metrics) error {
	for batch := range slices.Chunk(postIDs, maxQueryIDs) {
		var data struct {
			Videos []video `json:"videos"`
		}
		body := map[string]any{"filters": map[string]any{"video_ids": batch}}
		if err := p.call(ctx, base, token, pathVideoQuery+"?fields="+videoQueryFields, body, &data); err != nil {
			return classify(err)
		}
		for _, v := range data.Videos {
			if !slices.Contains(batch, v.ID) {
				continue
			}
			m := provider.Metrics{Views: v.ViewCount, Likes: v.LikeCount, Comments: v.CommentCount, Shares: v.ShareCount}
			keys := asked[v.ID]
			if asked == nil {
				keys = []string{v.ID}
			}
			for _, k := range keys {
				out[k] = m
			}
		}
	}
	return nil
}
