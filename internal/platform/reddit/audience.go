package reddit

// A channel's figures and comments, on the OAuth host with the same User-Agent, bearer token
// and rate-limit handling as publishing:
//
//   - Metrics: GET /api/info?id=t3_…,t3_… with up to 100 fullnames a call (scope read). ups
//     (the same as score since Reddit stopped showing downvotes) is the post's likes,
//     num_comments its comments, view_count its views when Reddit gives one (almost never:
//     it is usually null). Reddit has no shares, impressions, reach, saves or watch time for
//     a post through its API.
//   - Comments: GET /comments/{article}?sort=new&limit=500&depth=10 (scope read), one call:
//     the post and its comment tree, flattened with each reply's parent (a t1_ fullname; a
//     comment on the post itself has none). Comments Reddit leaves out of the tree (its
//     "more" stubs, beyond 500 comments or 10 levels) would need /api/morechildren and are
//     not read. A comment is the channel's own when its author is the post's author, which
//     holds for real and sandbox channels alike.
//   - Reply: POST /api/comment with thing_id (the comment's t1_ fullname: Reddit takes
//     replies at any depth), text and api_type=json (scope submit); refusals come back with
//     HTTP 200 in json.errors.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

const (
	// maxInfoIDs is how many fullnames /api/info takes.
	maxInfoIDs = 100
	// commentLimit and commentDepth are the most of the tree Reddit renders in one call.
	commentLimit = "500"
	commentDepth = "10"
)

var (
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// postFigures is the part of a t3 Metrics reads; a figure Reddit sends as null stays nil.
type postFigures struct {
	Name        string `json:"name"`
	Ups         *int64 `json:"ups"`
	NumComments *int64 `json:"num_comments"`
	ViewCount   *int64 `json:"view_count"`
}

// fullname is the t3_ fullname of a post id, which the external id already is.
func fullname(id string) string {
	if strings.HasPrefix(id, "t3_") {
		return id
	}
	return "t3_" + id
}

// Metrics implements provider.MetricsSource with /api/info. A post Reddit does not list (deleted,
// removed) has no entry.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	asked := map[string][]string{} // fullname → the item ids naming it
	var names []string
	for _, id := range itemIDs {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		fn := fullname(id)
		if _, seen := asked[fn]; !seen {
			names = append(names, fn)
		}
		if !slices.Contains(asked[fn], id) {
			asked[fn] = append(asked[fn], id)
		}
	}
	out := map[string]provider.Metrics{}
	for batch := range slices.Chunk(names, maxInfoIDs) {
		var l listing[postFigures]
		if err := c.get(ctx, "/api/info", url.Values{"id": {strings.Join(batch, ",")}}, &l); err != nil {
			return out, classify(err, "GET /api/info")
		}
		for _, t := range l.Data.Children {
			if t.Kind != "t3" {
				continue
			}
			m := provider.Metrics{Likes: t.Data.Ups, Comments: t.Data.NumComments, Views: t.Data.ViewCount}
			for _, id := range asked[t.Data.Name] {
				out[id] = m
			}
		}
	}
	return out, nil
}

// thing is a child of a comment listing: a t1, or a "more" stub.
type thing struct {
	Kind string      `json:"kind"`
	Data commentData `json:"data"`
}

// commentData is the part of a t1 the inbox reads.
type commentData struct {
	Name           string  `json:"name"`
	ParentID       string  `json:"parent_id"`
	Author         string  `json:"author"`
	AuthorFullname string  `json:"author_fullname"`
	Body           string  `json:"body"`
	CreatedUTC     float64 `json:"created_utc"`
	Ups            *int64  `json:"ups"`
	// Replies is "" or a Listing of things.
	Replies json.RawMessage `json:"replies"`
}

// inboxComment turns a t1 into an provider.Comment; poster is the post author's fullname.
func (d commentData) inboxComment(poster string) provider.Comment {
	c := provider.Comment{
		ID: d.Name, Author: d.Author, Text: d.Body, LikeCount: d.Ups,
		CreatedAt: time.Unix(int64(d.CreatedUTC), 0).UTC(),
		Own:       d.AuthorFullname != "" && d.AuthorFullname == poster,
	}
	if strings.HasPrefix(d.ParentID, "t1_") {
		c.ParentID = d.ParentID
	}
	return c
}

// Comments implements provider.CommentSource with one GET /comments/{article}, newest first within
// each level, each comment followed by its replies.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	article := strings.TrimPrefix(fullname(itemID), "t3_")
	var page []json.RawMessage
	q := url.Values{"sort": {"new"}, "limit": {commentLimit}, "depth": {commentDepth}}
	if err := c.get(ctx, "/comments/"+url.PathEscape(article), q, &page); err != nil {
		return nil, classify(err, "GET /comments/"+article)
	}
	var post listing[struct {
		AuthorFullname string `json:"author_fullname"`
	}]
	var tree listing[commentData]
	if len(page) != 2 || json.Unmarshal(page[0], &post) != nil || json.Unmarshal(page[1], &tree) != nil || len(post.Data.Children) != 1 {
		return nil, provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0,
			"Reddit: GET /comments/%s answered no post and comment listing", article)
	}
	var out []provider.Comment
	flatten(tree, post.Data.Children[0].Data.AuthorFullname, &out)
	return out, nil
}

// flatten appends the t1 things of l and of their replies, depth first.
func flatten(l listing[commentData], poster string, out *[]provider.Comment) {
	for _, t := range l.Data.Children {
		if t.Kind != "t1" {
			continue
		}
		*out = append(*out, t.Data.inboxComment(poster))
		var replies listing[commentData]
		if len(t.Data.Replies) > 0 && t.Data.Replies[0] == '{' && json.Unmarshal(t.Data.Replies, &replies) == nil {
			flatten(replies, poster, out)
		}
	}
}

// Reply implements provider.CommentSource with POST /api/comment on the comment's fullname.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return provider.Comment{}, err
	}
	target := to.ID
	if target == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "Reddit: the comment to answer has no id")
	}
	if !strings.HasPrefix(target, "t1_") {
		target = "t1_" + target
	}
	var out struct {
		JSON struct {
			Errors [][]any `json:"errors"`
			Data   struct {
				Things []thing `json:"things"`
			} `json:"data"`
		} `json:"json"`
	}
	form := url.Values{"thing_id": {target}, "text": {text}, "api_type": {"json"}}
	if err := c.post(ctx, "/api/comment", form, &out); err != nil {
		return provider.Comment{}, classify(err, "POST /api/comment")
	}
	if len(out.JSON.Errors) > 0 {
		return provider.Comment{}, classifyReply(jsonErrors(out.JSON.Errors))
	}
	if len(out.JSON.Data.Things) == 0 || out.JSON.Data.Things[0].Data.Name == "" {
		// Permanent: the comment is probably posted, and posting it again would double it.
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, http.StatusOK,
			"Reddit answered POST /api/comment without the comment; it may have been posted")
	}
	reply := out.JSON.Data.Things[0].Data.inboxComment("")
	reply.Own = true
	if reply.ParentID == "" {
		reply.ParentID = target
	}
	return reply, nil
}

// classifyReply classifies json.errors of /api/comment: the login and the cooldown as for a
// submit, anything else (NO_THING_ID, TOO_LONG, TOO_OLD, THREAD_LOCKED, ...) a refusal of
// this reply.
func classifyReply(errs submitErrors) *provider.Error {
	msg := "Reddit refused the reply: " + errs.Error()
	for _, e := range errs {
		switch e.Code {
		case "USER_REQUIRED", "NOT_AUTHORIZED":
			return provider.Permanent(provider.CategoryAuthExpired, http.StatusOK, "%s", msg)
		case "RATELIMIT":
			return provider.Transient(provider.CategoryRateLimited, http.StatusOK, cooldown(e.Message), "%s", msg)
		}
	}
	return provider.Permanent(provider.CategoryInvalidOptions, http.StatusOK, "%s", msg)
}
