package threadssim

// The Threads simulator's figures and replies. Sources: developers.facebook.com/documentation/
// threads: insights (media metrics views, likes, replies, reposts, quotes, shares; "when the
// requested media is a root post, this number includes total replies"), retrieve-and-manage-
// replies (GET /{media-id}/replies and /conversation, their fields, reverse), reference/
// reply-management, posts (a reply is a container with reply_to_id, then threads_publish) and
// overview (1000 replies per profile per 24 hours).
//
// What it reproduces:
//   - GET /{threads-media-id}/insights?metric=...: lifetime rows from the post's audience
//     (AudienceOf at its publishing time): views → views, likes → likes, replies → the
//     audience replies plus the profile's own, reposts, quotes and shares → shares, split a
//     half, a quarter and a quarter (the simulator's choice: the audience has one share count);
//   - GET /{threads-media-id}/replies (direct replies) and /conversation (every reply below,
//     flattened), reverse chronological unless reverse=false, paged by cursor, with fields;
//     audience replies (AudienceComments) answer the post itself;
//   - POST /{threads-user-id}/threads media_type=TEXT, text, reply_to_id → a container ready at
//     once; threads_publish makes it a reply (recorded), counted against the reply quota that
//     threads_publishing_limit reports; GET /{reply-id}.
//
// Insights of replies are not simulated: they answer as objects the token cannot see. The
// wording of an unknown reply_to_id and of a spent reply quota is the simulator's own.

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

// thMetrics are the media insights metrics of the Threads insights reference.
var thMetrics = []string{"views", "likes", "replies", "reposts", "quotes", "shares"}

// thReply is a reply in a post's conversation: from the audience, or published by the profile.
type thReply struct {
	ID       string    `json:"id"`
	Root     string    `json:"root"`   // the post the conversation is under
	Parent   string    `json:"parent"` // the post or reply answered
	Username string    `json:"username"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
	Own      bool      `json:"own,omitempty"`
}

// thReplyID is the id of the post's audience reply number n.
func thReplyID(mediaID string, n int) string {
	return metasim.DerivedID(17950000000000000, 1e13, "threads-reply", mediaID, fmt.Sprint(n))
}

// thShares splits the audience's shares into Threads' reposts, quotes and shares.
func thShares(n int64) (reposts, quotes, shares int64) {
	quotes, shares = n/4, n/4
	return n - quotes - shares, quotes, shares
}

// thread is every reply under the post m by now, oldest first.
func (s *thSim) thread(m thMedia, now time.Time) []thReply {
	var out []thReply
	for _, c := range sim.AudienceComments(m.ID, m.Timestamp, now) {
		out = append(out, thReply{ID: thReplyID(m.ID, c.N), Root: m.ID, Parent: m.ID, Username: c.Author, Text: c.Text, At: c.At})
	}
	out = append(out, m.Replies...)
	slices.SortStableFunc(out, func(a, b thReply) int { return a.At.Compare(b.At) })
	return out
}

// ownedPost reads the profile's post id.
func (s *thSim) ownedPost(ctx context.Context, acct sim.Account, id string) (thMedia, bool, error) {
	m, _, found, err := sim.Load[thMedia](ctx, s.cfg.State, thKey(thMediaKind, id))
	return m, found && m.Account == acct.ID, err
}

// reply finds a reply under one of the profile's posts, with the post.
func (s *thSim) reply(ctx context.Context, acct sim.Account, id string, now time.Time) (thReply, thMedia, bool, error) {
	posts, err := s.posts(ctx, acct.ID)
	if err != nil {
		return thReply{}, thMedia{}, false, err
	}
	for _, m := range posts {
		for _, r := range s.thread(m, now) {
			if r.ID == id {
				return r, m, true, nil
			}
		}
	}
	return thReply{}, thMedia{}, false, nil
}

// root is the post whose conversation id (a post or a reply of the profile's) belongs to.
func (s *thSim) root(ctx context.Context, acct sim.Account, id string, now time.Time) (thMedia, bool, error) {
	if m, ok, err := s.ownedPost(ctx, acct, id); err != nil || ok {
		return m, ok, err
	}
	_, m, ok, err := s.reply(ctx, acct, id, now)
	return m, ok, err
}

// createReply is POST /{threads-user-id}/threads with media_type=TEXT: a reply container.
func (s *thSim) createReply(ctx context.Context, acct sim.Account, p url.Values) (any, *metasim.Error) {
	to := p.Get("reply_to_id")
	if to == "" {
		// Root text posts are not reelay's: the simulator takes TEXT containers as replies only.
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) media_type TEXT is simulated for replies only: reply_to_id is required")
	}
	text := p.Get("text")
	if text == "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The parameter text is required for media_type TEXT")
	}
	if limit := s.caps.Text["text"]; !limit.Check(text) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0,
			fmt.Sprintf("(#100) Param text is too long: %d of at most %d characters (emoji count as their UTF-8 bytes)", limit.Count(text), limit.Max))
	}
	now := s.cfg.Now()
	if _, ok, err := s.root(ctx, acct, to, now); err != nil {
		return nil, metasim.Internal()
	} else if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param reply_to_id %s is not a post or reply this profile can reply to", to))
	}
	// A text container has nothing to fetch.
	c := thContainer{Account: acct.ID, Text: text, Created: now, Ready: now, Pull: metasim.Pull{Done: true}, ReplyTo: to}
	if err := s.newContainer(ctx, &c); err != nil {
		return nil, metasim.Internal()
	}
	return map[string]string{"id": c.ID}, nil
}

// publishReply publishes a reply container within tx, in the conversation of root (found, or
// not, before the transaction).
func (s *thSim) publishReply(tx sim.Tx, acct sim.Account, c *thContainer, root thMedia, found bool, now time.Time) (any, *metasim.Error, error) {
	if found {
		var err error
		root, _, found, err = sim.LoadTx[thMedia](tx, thKey(thMediaKind, root.ID))
		if err != nil {
			return nil, nil, err
		}
	}
	if !found {
		return nil, metasim.Err(http.StatusBadRequest, 24, 0, fmt.Sprintf("The media with id %s cannot be found", c.ReplyTo)), nil
	}
	ok, err := sim.TakeInWindow(tx, thKey(thRepliedKind, acct.ID), acct.ID, now, thWindow, thReplyQuota)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		// The limit is documented, the answer is not: this wording is the simulator's.
		return nil, metasim.Err(http.StatusBadRequest, 9, 0, "Application request limit reached").User("Maximum number of replies reached",
			fmt.Sprintf("You reached the maximum of %d replies that can be published through the API in 24 hours.", thReplyQuota)), nil
	}
	r := thReply{ID: metasim.RandomID(18000000000000000), Root: root.ID, Parent: c.ReplyTo, Username: thUsername(acct), Text: c.Text, At: now, Own: true}
	root.Replies = append(root.Replies, r)
	if err := sim.Save(tx, sim.Record{Key: thKey(thMediaKind, root.ID), Account: root.Account}, root); err != nil {
		return nil, nil, err
	}
	c.MediaID = r.ID
	err = sim.RecordTx(tx, platform.Threads, sim.Reply{Account: acct.ID, CommentID: c.ReplyTo, Text: c.Text})
	return map[string]string{"id": r.ID}, nil, err
}

// mediaFields is every field of the post m at now.
func (s *thSim) mediaFields(m thMedia, now time.Time) map[string]any {
	all := m.fields()
	all["has_replies"] = len(s.thread(m, now)) > 0
	return all
}

// replyFields is every field of a reply r under the post m.
func (s *thSim) replyFields(m thMedia, r thReply, now time.Time) map[string]any {
	hasReplies := false
	for _, o := range s.thread(m, now) {
		hasReplies = hasReplies || o.Parent == r.ID
	}
	return map[string]any{
		"id": r.ID, "text": r.Text, "username": r.Username, "timestamp": metasim.Timestamp(r.At),
		"permalink": "https://www.threads.net/@" + r.Username + "/post/" + thShortcode(r.ID), "shortcode": thShortcode(r.ID),
		"media_product_type": "THREADS", "media_type": "TEXT_POST", "media_url": nil, "thumbnail_url": nil,
		"has_replies": hasReplies, "is_reply": true, "is_reply_owned_by_me": r.Own, "is_quote_post": false,
		"root_post": map[string]any{"id": r.Root}, "replied_to": map[string]any{"id": r.Parent},
		"hide_status": "NOT_HUSHED", "reply_audience": "EVERYONE",
	}
}

// conversation is GET /{threads-media-id}/replies (all false: the direct replies) and
// /conversation (all true: every reply below, flattened).
func (s *thSim) conversation(ctx context.Context, acct sim.Account, id string, p url.Values, all bool) (any, *metasim.Error) {
	reverse, ok := metasim.Bool(p, "reverse", true)
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param reverse must be a boolean")
	}
	if p.Get("before") != "" && p.Get("after") != "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Only one of the before and after cursors can be given")
	}
	start, limit, gerr := metasim.Paging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	root, ok, err := s.root(ctx, acct, id, now)
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	below := map[string]bool{id: true}
	var rows []thReply
	for _, r := range s.thread(root, now) {
		if below[r.Parent] {
			rows = append(rows, r)
			if all {
				below[r.ID] = true
			}
		}
	}
	if reverse {
		slices.Reverse(rows)
	}
	edge := "/replies"
	if all {
		edge = "/conversation"
	}
	return metasim.Page(rows, start, limit, metasim.Next(s.cfg.BaseURL, "/"+id+edge, p), func(r thReply) (map[string]any, *metasim.Error) {
		return metasim.Select(s.replyFields(root, r, now), "ThreadsMedia", p.Get("fields"), "id")
	})
}

// insights is GET /{threads-media-id}/insights.
func (s *thSim) insights(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	names, gerr := metasim.Metrics(p, true)
	if gerr != nil {
		return nil, gerr
	}
	for i, n := range names {
		if !slices.Contains(thMetrics, n) {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) metric[%d] must be one of the following values: %s", i, strings.Join(thMetrics, ", ")))
		}
	}
	now := s.cfg.Now()
	m, ok, err := s.ownedPost(ctx, acct, id)
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	a := sim.AudienceOf(m.ID, m.Timestamp, now)
	reposts, quotes, shares := thShares(a.Shares)
	values := map[string]int64{"views": a.Views, "likes": a.Likes, "replies": int64(len(s.thread(m, now))),
		"reposts": reposts, "quotes": quotes, "shares": shares}
	titles := map[string][2]string{
		"views":   {"Views", "The number of times your post was played or displayed."},
		"likes":   {"Likes", "The number of likes on your post."},
		"replies": {"Replies", "The number of replies on your post."},
		"reposts": {"Reposts", "The number of times your post was reposted."},
		"quotes":  {"Quotes", "The number of times your post was quoted."},
		"shares":  {"Shares", "The number of times your post was shared."},
	}
	data := []any{}
	for _, n := range names {
		data = append(data, metasim.Insight(m.ID, "insights", n, titles[n][0], titles[n][1], values[n]))
	}
	return map[string]any{"data": data}, nil
}
