package linkedin

// The audience side of a member's posts: their statistics (Member Post Statistics and Member
// Video Statistics, learn.microsoft.com/linkedin/marketing/community-management/members/…) and
// their comments (the Comments API, …/shares/comments-api).
//
// Statistics answer one metric of one post a call (q=entity&entity=(share:…)&queryType=…&
// aggregation=TOTAL): LinkedIn has no batch form, so a post costs seven calls (five post
// metrics, two video metrics). They need the r_member_postAnalytics permission.
//
// Comments are read with GET /rest/socialActions/{post URN}/comments (first-level comments)
// and GET /rest/socialActions/{comment URN}/comments (the replies below one; LinkedIn nests one
// level deep). Reading them needs r_member_social, which LinkedIn grants to select developers.
// A reply is POST /rest/socialActions/{comment URN}/comments {actor, object, message,
// parentComment}, as the member (w_member_social).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

var (
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// API paths of the audience side.
const (
	pathPostStatistics  = "/rest/memberCreatorPostAnalytics"
	pathVideoStatistics = "/rest/memberCreatorVideoAnalytics"
	pathSocialActions   = "/rest/socialActions/"
)

// Bounds of one Comments read: first-level pages of commentPageSize, then the replies of the
// newest threads that have any, commentCalls calls in all.
const (
	commentPageSize = 100
	commentCalls    = 6
)

// statistic is one metric read and where its count goes.
type statistic struct {
	path      string
	queryType string
	set       func(m *provider.Metrics, count int64)
}

// statistics are the metrics read for each post. VIDEO_WATCH_TIME is in milliseconds.
var statistics = []statistic{
	{pathPostStatistics, "IMPRESSION", func(m *provider.Metrics, n int64) { m.Impressions = provider.N(n) }},
	{pathPostStatistics, "MEMBERS_REACHED", func(m *provider.Metrics, n int64) { m.Reach = provider.N(n) }},
	{pathPostStatistics, "RESHARE", func(m *provider.Metrics, n int64) { m.Shares = provider.N(n) }},
	{pathPostStatistics, "REACTION", func(m *provider.Metrics, n int64) { m.Likes = provider.N(n) }},
	{pathPostStatistics, "COMMENT", func(m *provider.Metrics, n int64) { m.Comments = provider.N(n) }},
	{pathVideoStatistics, "VIDEO_PLAY", func(m *provider.Metrics, n int64) { m.Views = provider.N(n) }},
	{pathVideoStatistics, "VIDEO_WATCH_TIME", func(m *provider.Metrics, n int64) { m.WatchTimeSeconds = provider.N(n / 1000) }},
}

// statisticsAnswer is a statistics finder's answer. metricType is an object with one string
// member before version 202605 and a plain string from it.
type statisticsAnswer struct {
	Elements []struct {
		Count      *int64          `json:"count"`
		MetricType json.RawMessage `json:"metricType"`
	} `json:"elements"`
}

// count returns the count of queryType in the answer, if it has one.
func (a statisticsAnswer) count(queryType string) (int64, bool) {
	for _, e := range a.Elements {
		if e.Count != nil && metricTypeName(e.MetricType) == queryType {
			return *e.Count, true
		}
	}
	return 0, false
}

func metricTypeName(raw json.RawMessage) string {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name
	}
	var union map[string]string
	if json.Unmarshal(raw, &union) == nil && len(union) == 1 {
		for _, v := range union {
			return v
		}
	}
	return ""
}

// statisticsEntity is the entity parameter of a post: a Rest.li 2.0 union whose member names
// the URN's type, the URN URL-encoded inside literal parentheses. ok is false for an id that
// names no post (statistics exist for share and ugcPost URNs only).
func statisticsEntity(urn string) (string, bool) {
	switch {
	case strings.HasPrefix(urn, "urn:li:share:"):
		return "(share:" + url.QueryEscape(urn) + ")", true
	case strings.HasPrefix(urn, "urn:li:ugcPost:"):
		return "(ugc:" + url.QueryEscape(urn) + ")", true
	}
	return "", false
}

// Metrics implements provider.MetricsSource. itemIDs are post URNs (what Step returns as
// ExternalID). A post LinkedIn does not know (404) has no figures; a metric LinkedIn answers no
// element for (video metrics a year after the post) stays nil.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	out := map[string]provider.Metrics{}
	for _, id := range itemIDs {
		entity, ok := statisticsEntity(id)
		if !ok {
			continue
		}
		m, found, err := p.postMetrics(ctx, c, entity)
		if err != nil {
			return out, err
		}
		if found {
			out[id] = m
		}
	}
	return out, nil
}

// postMetrics reads every statistic of one post; found is false when LinkedIn does not know it.
func (p *Provider) postMetrics(ctx context.Context, c client, entity string) (m provider.Metrics, found bool, err error) {
	for _, s := range statistics {
		var a statisticsAnswer
		path := s.path + "?q=entity&entity=" + entity + "&queryType=" + s.queryType + "&aggregation=TOTAL"
		if _, err := c.do(ctx, http.MethodGet, path, nil, &a, true); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
				return provider.Metrics{}, false, nil
			}
			return provider.Metrics{}, false, p.audienceError(err, "reading post statistics needs the r_member_postAnalytics permission")
		}
		if n, ok := a.count(s.queryType); ok {
			s.set(&m, n)
		}
	}
	return m, true, nil
}

// audienceError classifies a failed audience call; a refusal (403) names the permission the
// call needs, which is what reconnecting the channel has to grant.
func (p *Provider) audienceError(err error, permission string) *provider.Error {
	pe := p.classify(err)
	if pe.Status == http.StatusForbidden {
		pe.Message += "; " + permission
	}
	return pe
}

// comment is a comment as the Comments API gives it.
type comment struct {
	ID            string `json:"id"`
	CommentURN    string `json:"commentUrn"`
	URN           string `json:"$URN"`
	Actor         string `json:"actor"`
	Object        string `json:"object"`
	ParentComment string `json:"parentComment"`
	Message       struct {
		Text string `json:"text"`
	} `json:"message"`
	Created struct {
		Time int64 `json:"time"`
	} `json:"created"`
	LikesSummary *struct {
		TotalLikes *int64 `json:"totalLikes"`
	} `json:"likesSummary"`
	CommentsSummary struct {
		AggregatedTotalComments int64 `json:"aggregatedTotalComments"`
	} `json:"commentsSummary"`
}

// urn is the comment's URN: commentUrn, or $URN, or built from the object and the id.
func (x comment) urn() string {
	switch {
	case x.CommentURN != "":
		return x.CommentURN
	case x.URN != "":
		return x.URN
	case x.Object != "" && x.ID != "":
		return "urn:li:comment:(" + x.Object + "," + x.ID + ")"
	}
	return ""
}

func (x comment) inbox(parent, self string) provider.Comment {
	if x.ParentComment != "" {
		parent = x.ParentComment
	}
	out := provider.Comment{
		ID: x.urn(), ParentID: parent, Author: x.Actor, Text: x.Message.Text,
		CreatedAt: time.UnixMilli(x.Created.Time).UTC(), Own: x.Actor == self,
	}
	if x.LikesSummary != nil && x.LikesSummary.TotalLikes != nil {
		out.LikeCount = provider.N(*x.LikesSummary.TotalLikes)
	}
	return out
}

type commentsPage struct {
	Paging struct {
		Total *int `json:"total"`
	} `json:"paging"`
	Elements []comment `json:"elements"`
}

// Comments implements provider.CommentSource. The author of a comment is its actor, a member URN: the
// Comments API names commenters no other way. A post LinkedIn does not know has no comments.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	self := authorURN(ch.Account)
	calls := 0
	var top []comment
	for start := 0; calls < commentCalls-1; start += commentPageSize {
		page, err := p.commentsPage(ctx, c, itemID, start)
		calls++
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
				return nil, nil
			}
			return nil, p.audienceError(err, "reading comments needs the r_member_social permission")
		}
		top = append(top, page.Elements...)
		if len(page.Elements) < commentPageSize || page.Paging.Total != nil && start+len(page.Elements) >= *page.Paging.Total {
			break
		}
	}
	out := make([]provider.Comment, 0, len(top))
	for _, x := range top {
		out = append(out, x.inbox("", self))
	}
	// The newest threads first: those are the ones still being answered.
	threads := make([]comment, 0, len(top))
	for _, x := range top {
		if x.CommentsSummary.AggregatedTotalComments > 0 && x.urn() != "" {
			threads = append(threads, x)
		}
	}
	sort.SliceStable(threads, func(i, j int) bool { return threads[i].Created.Time > threads[j].Created.Time })
	for _, x := range threads {
		if calls >= commentCalls {
			break
		}
		page, err := p.commentsPage(ctx, c, x.urn(), 0)
		calls++
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
				continue // deleted since the first page was read
			}
			return out, p.audienceError(err, "reading comments needs the r_member_social permission")
		}
		for _, r := range page.Elements {
			out = append(out, r.inbox(x.urn(), self))
		}
	}
	return out, nil
}

func (p *Provider) commentsPage(ctx context.Context, c client, urn string, start int) (commentsPage, error) {
	var page commentsPage
	path := fmt.Sprintf("%s%s/comments?start=%d&count=%d", pathSocialActions, url.QueryEscape(urn), start, commentPageSize)
	_, err := c.do(ctx, http.MethodGet, path, nil, &page, true)
	return page, err
}

// commentRequest is the body of a comment LinkedIn creates.
type commentRequest struct {
	Actor         string         `json:"actor"`
	Object        string         `json:"object"`
	Message       commentMessage `json:"message"`
	ParentComment string         `json:"parentComment,omitempty"`
}

type commentMessage struct {
	Text string `json:"text"`
}

// Reply implements provider.CommentSource: a comment by the member below the comment answered. LinkedIn
// nests comments one level deep, so a reply to a reply is posted below its first-level comment.
// Comment text is plain (little text is for commentary), so it is sent as it is.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return provider.Comment{}, err
	}
	if ch.Account == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, 0, "the LinkedIn channel has no member id")
	}
	parent := to.ID
	if to.ParentID != "" {
		parent = to.ParentID
	}
	req := commentRequest{Actor: authorURN(ch.Account), Object: itemID, Message: commentMessage{Text: text}, ParentComment: parent}
	var created comment
	h, err := c.do(ctx, http.MethodPost, pathSocialActions+url.QueryEscape(parent)+"/comments", req, &created, true)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && (ae.HTTP == http.StatusBadRequest || ae.HTTP == http.StatusNotFound || ae.HTTP == http.StatusUnprocessableEntity) {
			return provider.Comment{}, provider.Permanent(provider.CategoryInvalidOptions, ae.HTTP, "%s", ae.Error())
		}
		return provider.Comment{}, p.audienceError(err, "commenting needs the w_member_social permission")
	}
	if created.ID == "" {
		created.ID = h.Get("X-RestLi-Id")
	}
	if created.Object == "" {
		created.Object = itemID
	}
	reply := created.inbox(parent, req.Actor)
	if reply.ID == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, http.StatusCreated,
			"LinkedIn created the comment but named it neither in its answer nor in x-restli-id; it is not posted again")
	}
	if reply.Text == "" {
		reply.Text = text
	}
	if created.Created.Time == 0 {
		reply.CreatedAt = p.cfg.Now().UTC()
	}
	return reply, nil
}
