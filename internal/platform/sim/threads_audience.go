package sim

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
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// thMetrics are the media insights metrics of the Threads insights reference.
var thMetrics = []string{"views", "likes", "replies", "reposts", "quotes", "shares"}

// thReply is a reply in a post's conversation: from the audience, or published by the profile.
type thReply struct {
	id       string
	root     string // the post the conversation is under
	parent   string // the post or reply answered
	username string
	text     string
	at       time.Time
	own      bool
}

// thReplyID is the id of the post's audience reply number n.
func thReplyID(mediaID string, n int) string {
	return metaDerivedID(17950000000000000, 1e13, "threads-reply", mediaID, fmt.Sprint(n))
}

// thShares splits the audience's shares into Threads' reposts, quotes and shares.
func thShares(n int64) (reposts, quotes, shares int64) {
	quotes, shares = n/4, n/4
	return n - quotes - shares, quotes, shares
}

// threadLocked is every reply under the post m by now, oldest first. The caller holds s.mu.
func (s *thSim) threadLocked(m *thMedia, now time.Time) []thReply {
	var out []thReply
	for _, c := range AudienceComments(m.id, m.timestamp, now) {
		out = append(out, thReply{id: thReplyID(m.id, c.N), root: m.id, parent: m.id, username: c.Author, text: c.Text, at: c.At})
	}
	for _, id := range s.replyOrder {
		if r := s.replies[id]; r.root == m.id {
			out = append(out, *r)
		}
	}
	slices.SortStableFunc(out, func(a, b thReply) int { return a.at.Compare(b.at) })
	return out
}

// ownedPostLocked is the profile's post id, or nil. The caller holds s.mu.
func (s *thSim) ownedPostLocked(acct Account, id string) *thMedia {
	if m, ok := s.media[id]; ok && m.account == acct.ID {
		return m
	}
	return nil
}

// replyLocked finds a reply under one of the profile's posts. The caller holds s.mu.
func (s *thSim) replyLocked(acct Account, id string, now time.Time) (thReply, bool) {
	if r, ok := s.replies[id]; ok {
		return *r, s.ownedPostLocked(acct, r.root) != nil
	}
	for _, mid := range s.order {
		m := s.media[mid]
		if m.account != acct.ID {
			continue
		}
		for _, r := range s.threadLocked(m, now) {
			if r.id == id {
				return r, true
			}
		}
	}
	return thReply{}, false
}

// rootLocked is the post whose conversation id (a post or a reply of the profile's) belongs
// to. The caller holds s.mu.
func (s *thSim) rootLocked(acct Account, id string, now time.Time) (*thMedia, bool) {
	if m := s.ownedPostLocked(acct, id); m != nil {
		return m, true
	}
	if r, ok := s.replyLocked(acct, id, now); ok {
		return s.media[r.root], true
	}
	return nil, false
}

// createReply is POST /{threads-user-id}/threads with media_type=TEXT: a reply container.
func (s *thSim) createReply(acct Account, p url.Values) (any, *igError) {
	to := p.Get("reply_to_id")
	if to == "" {
		// Root text posts are not reelay's: the simulator takes TEXT containers as replies only.
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) media_type TEXT is simulated for replies only: reply_to_id is required")
	}
	text := p.Get("text")
	if text == "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter text is required for media_type TEXT")
	}
	if limit := s.caps.Text["text"]; !limit.Check(text) {
		return nil, igErr(http.StatusBadRequest, 100, 0,
			fmt.Sprintf("(#100) Param text is too long: %d of at most %d characters (emoji count as their UTF-8 bytes)", limit.Count(text), limit.Max))
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rootLocked(acct, to, now); !ok {
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param reply_to_id %s is not a post or reply this profile can reply to", to))
	}
	done := make(chan struct{})
	close(done) // a text container has nothing to fetch
	c := &thContainer{id: s.nextID(17890000000000000), account: acct.ID, text: text, created: now, ready: now, done: done, replyTo: to}
	s.containers[c.id] = c
	return map[string]string{"id": c.id}, nil
}

// publishReplyLocked publishes a reply container. The caller holds s.mu.
func (s *thSim) publishReplyLocked(acct Account, c *thContainer, now time.Time) (any, *igError) {
	recent := igPrune(s.replied[acct.ID], now)
	if len(recent) >= thReplyQuota {
		s.replied[acct.ID] = recent
		// The limit is documented, the answer is not: this wording is the simulator's.
		return nil, igErr(http.StatusBadRequest, 9, 0, "Application request limit reached").user("Maximum number of replies reached",
			fmt.Sprintf("You reached the maximum of %d replies that can be published through the API in 24 hours.", thReplyQuota))
	}
	root, ok := s.rootLocked(acct, c.replyTo, now)
	if !ok {
		return nil, igErr(http.StatusBadRequest, 24, 0, fmt.Sprintf("The media with id %s cannot be found", c.replyTo))
	}
	s.replied[acct.ID] = append(recent, now)
	r := &thReply{id: s.nextID(18000000000000000), root: root.id, parent: c.replyTo, username: thUsername(acct), text: c.text, at: now, own: true}
	s.replies[r.id] = r
	s.replyOrder = append(s.replyOrder, r.id)
	c.mediaID = r.id
	s.cfg.Recorder.RecordReply(Reply{Account: acct.ID, CommentID: c.replyTo, Text: c.text})
	return map[string]string{"id": r.id}, nil
}

// mediaFieldsLocked is every field of the post m at now. The caller holds s.mu.
func (s *thSim) mediaFieldsLocked(m *thMedia, now time.Time) map[string]any {
	all := m.fields()
	all["has_replies"] = len(s.threadLocked(m, now)) > 0
	return all
}

// replyFieldsLocked is every field of a reply. The caller holds s.mu.
func (s *thSim) replyFieldsLocked(r thReply, now time.Time) map[string]any {
	hasReplies := false
	for _, o := range s.threadLocked(s.media[r.root], now) {
		hasReplies = hasReplies || o.parent == r.id
	}
	return map[string]any{
		"id": r.id, "text": r.text, "username": r.username, "timestamp": metaTimestamp(r.at),
		"permalink": "https://www.threads.net/@" + r.username + "/post/" + thShortcode(r.id), "shortcode": thShortcode(r.id),
		"media_product_type": "THREADS", "media_type": "TEXT_POST", "media_url": nil, "thumbnail_url": nil,
		"has_replies": hasReplies, "is_reply": true, "is_reply_owned_by_me": r.own, "is_quote_post": false,
		"root_post": map[string]any{"id": r.root}, "replied_to": map[string]any{"id": r.parent},
		"hide_status": "NOT_HUSHED", "reply_audience": "EVERYONE",
	}
}

// conversation is GET /{threads-media-id}/replies (all false: the direct replies) and
// /conversation (all true: every reply below, flattened).
func (s *thSim) conversation(acct Account, id string, p url.Values, all bool) (any, *igError) {
	reverse, ok := metaBool(p, "reverse", true)
	if !ok {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param reverse must be a boolean")
	}
	if p.Get("before") != "" && p.Get("after") != "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Only one of the before and after cursors can be given")
	}
	start, limit, gerr := metaPaging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	root, ok := s.rootLocked(acct, id, now)
	if !ok {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, id))
	}
	below := map[string]bool{id: true}
	var rows []thReply
	for _, r := range s.threadLocked(root, now) {
		if below[r.parent] {
			rows = append(rows, r)
			if all {
				below[r.id] = true
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
	return metaPage(rows, start, limit, metaNext(s.cfg.BaseURL, "/"+id+edge, p), func(r thReply) (map[string]any, *igError) {
		return metaSelect(s.replyFieldsLocked(r, now), "ThreadsMedia", p.Get("fields"), "id")
	})
}

// insights is GET /{threads-media-id}/insights.
func (s *thSim) insights(acct Account, id string, p url.Values) (any, *igError) {
	names, gerr := metaMetrics(p, true)
	if gerr != nil {
		return nil, gerr
	}
	for i, n := range names {
		if !slices.Contains(thMetrics, n) {
			return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) metric[%d] must be one of the following values: %s", i, strings.Join(thMetrics, ", ")))
		}
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.ownedPostLocked(acct, id)
	if m == nil {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, id))
	}
	a := AudienceOf(m.id, m.timestamp, now)
	reposts, quotes, shares := thShares(a.Shares)
	values := map[string]int64{"views": a.Views, "likes": a.Likes, "replies": int64(len(s.threadLocked(m, now))),
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
		data = append(data, metaInsight(m.id, "insights", n, titles[n][0], titles[n][1], values[n]))
	}
	return map[string]any{"data": data}, nil
}
