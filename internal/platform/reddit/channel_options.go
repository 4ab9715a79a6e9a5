package reddit

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/reelay/reelay/internal/provider"
)

// Identify returns who the credentials (access_token) belong to: GET /api/v1/me. ExternalID
// is the account's fullname (t2_ and its id), Username and Name its Reddit name. A rejected
// token is an auth_expired *provider.Error. baseURL "" means the configured one.
func (p *Provider) Identify(ctx context.Context, baseURL string, creds map[string]string) (provider.Identity, error) {
	c, err := p.client(baseURL, creds)
	if err != nil {
		return provider.Identity{}, err
	}
	m, err := c.me(ctx)
	if err != nil {
		return provider.Identity{}, classify(err, "GET /api/v1/me")
	}
	avatar := m.Snoo
	if avatar == "" {
		avatar = m.IconImg
	}
	return provider.Identity{ExternalID: "t2_" + m.ID, Name: m.Name, Username: m.Name, AvatarURL: avatar}, nil
}

// maxSubredditPages bounds the subscription pages Options reads (100 each).
const maxSubredditPages = 10

// Options returns the channel's publish options: the registry's, with the subreddits the
// account is subscribed to (GET /subreddits/mine/subscriber, every page up to 1000) as the
// choices of subreddit. Errors are *provider.Error values, classified as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, creds map[string]string) (map[string]any, error) {
	c, err := p.client(baseURL, creds)
	if err != nil {
		return nil, err
	}
	choices := []any{}
	after := ""
	for range maxSubredditPages {
		q := url.Values{"limit": {"100"}}
		if after != "" {
			q.Set("after", after)
		}
		var l listing[subreddit]
		if err := c.get(ctx, "/subreddits/mine/subscriber", q, &l); err != nil {
			return nil, classify(err, "GET /subreddits/mine/subscriber")
		}
		for _, ch := range l.Data.Children {
			s := ch.Data
			choices = append(choices, map[string]any{"id": s.DisplayName, "title": s.Title,
				"allow_videos": s.AllowVideos, "over18": s.Over18})
		}
		if l.Data.After == nil || *l.Data.After == "" || len(l.Data.Children) == 0 {
			break
		}
		after = *l.Data.After
	}
	opts := staticOptions()
	sub := map[string]any{"type": "string", "required": true, "choices": choices,
		"note": "the subreddits this account is subscribed to (any other subreddit name works too); GET /channels/{id}/options?subreddit={name} tells its flair and rules"}
	opts["subreddit"] = sub
	return opts, nil
}

// SubredditOptions returns what posting a video to one subreddit takes: whether it allows
// video (GET /r/{subreddit}/about), its post requirements (GET
// /api/v1/{subreddit}/post_requirements: flair required, title lengths and words) and its
// link flair templates (GET /r/{subreddit}/api/link_flair_v2) as the choices of flair_id. A
// subreddit that does not exist or cannot be seen is an invalid_options *provider.Error.
func (p *Provider) SubredditOptions(ctx context.Context, baseURL string, creds map[string]string, name string) (map[string]any, error) {
	c, err := p.client(baseURL, creds)
	if err != nil {
		return nil, err
	}
	name = cleanSubreddit(name)
	if name == "" {
		return nil, provider.Permanent(provider.CategoryInvalidOptions, 0, "a subreddit name is required")
	}
	sub, err := c.about(ctx, name)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && (ae.status == http.StatusNotFound || ae.status == http.StatusForbidden) {
			return nil, provider.Permanent(provider.CategoryInvalidOptions, ae.status, "r/%s does not exist or cannot be seen by this account (%s)", name, ae.Error())
		}
		return nil, classify(err, "GET /r/"+name+"/about")
	}
	name = sub.DisplayName
	req, err := c.requirements(ctx, name)
	if err != nil {
		return nil, classify(err, "GET /api/v1/"+name+"/post_requirements")
	}
	flairNote := "the subreddit's link flair templates that posters may use"
	flairs, err := c.flairs(ctx, name)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != http.StatusForbidden {
			return nil, classify(err, "GET /r/"+name+"/api/link_flair_v2")
		}
		flairNote = "the subreddit has no link flair, or does not show it to this account"
	}
	choices := []any{}
	for _, f := range flairs {
		if f.ModOnly {
			continue
		}
		choices = append(choices, map[string]any{"id": f.ID, "text": f.Text, "text_editable": f.TextEditable})
	}
	requirements := map[string]any{
		"is_flair_required":         req.IsFlairRequired,
		"title_required_strings":    nonNil(req.TitleRequired),
		"title_blacklisted_strings": nonNil(req.TitleBlacklist),
	}
	if req.TitleMin != nil {
		requirements["title_text_min_length"] = *req.TitleMin
	}
	if req.TitleMax != nil {
		requirements["title_text_max_length"] = *req.TitleMax
	}
	if req.Guidelines != nil && *req.Guidelines != "" {
		requirements["guidelines_text"] = *req.Guidelines
	}
	allows := sub.AllowVideos && sub.SubmissionType != "self"
	flairOpt := map[string]any{"type": "string", "choices": choices, "required": req.IsFlairRequired, "note": flairNote}
	return map[string]any{
		"subreddit": map[string]any{"name": name, "title": sub.Title, "over18": sub.Over18,
			"allow_videos": allows, "submission_type": sub.SubmissionType},
		"post_requirements": requirements,
		"flair_id":          flairOpt,
		"flair_text": map[string]any{"type": "string",
			"note": "custom flair text, only for templates with text_editable; needs flair_id"},
		"nsfw": map[string]any{"type": "boolean", "default": sub.Over18},
	}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
