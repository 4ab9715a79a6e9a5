package sim

// The Reddit simulator's audience: a post's figures (GET /api/info), its comment tree
// (GET /comments/{article}) and comments accounts post (POST /api/comment). Sources: Reddit's
// API documentation (www.reddit.com/dev/api: /api/info, /comments/{article}, /api/comment),
// the open-source r2 code's validators and error strings (VByName's 100-id limit and
// TOO_MANY_THING_IDS, VMarkdownLength's 10,000 characters, NO_TEXT, TOO_LONG, NO_THING_ID),
// and the Comment and Submission schemas of reddit-api-doc-notes.
//
//   - Figures: a post's score and ups are 1 (its author's automatic upvote) plus
//     AudienceOf(fullname, processing end, now).Likes; num_comments counts the audience's
//     comments and every comment accounts posted on it; upvote_ratio is 1; view_count is null,
//     as Reddit leaves it on almost every post.
//   - GET /api/info?id=t3_…,t1_…: a Listing of the things named that exist, in the order
//     named; ids that are not fullnames are dropped, as r2 drops them; more than 100 fullnames
//     is 400 TOO_MANY_THING_IDS (rendered as {"message","error","reason"}: the simulator's
//     choice, r2 only records the error). Posts and comments are public: any account reads
//     any, as on Reddit.
//   - GET /comments/{article} (and /r/{sr}/comments/{article}[/slug]): [a Listing with the
//     t3, a Listing of the t1 tree], replies nested under data.replies ("" when none). The
//     audience's comments are top-level comments with stable ids built from their number
//     (7 base-36 characters, like Reddit's); accounts' comments sit under what they answered.
//     sort new is newest first, old oldest first, anything else (confidence, top, …) most
//     upvoted first; limit (default 200, at most 500) bounds the comments rendered and depth
//     (default 10) the nesting; what is cut is a "more" thing listing the ids left out, as
//     Reddit renders it. An unknown article is 404.
//   - POST /api/comment (thing_id, text, api_type=json): a comment on a post (t3_) or a reply
//     to a comment (t1_) at any depth. json.errors: NO_THING_ID (missing or unknown thing,
//     field parent), NO_TEXT (empty), TOO_LONG ("this is too long (max: 10000)", the
//     registry's reply limit in characters); success is {"json":{"errors":[],"data":
//     {"things":[{"kind":"t1","data":{…}}]}}}. Each comment is recorded with the fullname of
//     the thing it answers.
//
// Not reproduced: /api/morechildren (the "more" things cannot be expanded), votes, edits,
// deletion, locked and archived threads (TOO_OLD), comment sorting by Reddit's confidence
// formula.

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
)

const (
	redditMaxInfoIDs       = 100
	redditDefaultCommentsN = 200
	redditMaxCommentsN     = 500
	redditDefaultDepth     = 10
)

// redditReplyLimit is the registry's limit of a comment's text.
var redditReplyLimit = func() platform.TextLimit {
	c, _ := platform.CapabilitiesOf(platform.Reddit)
	return c.ReplyText
}()

// redditFullname is what r2 takes for a fullname.
var redditFullname = regexp.MustCompile(`^t[1-6]_[0-9a-z]+$`)

// redditReply is a comment an account posted.
type redditReply struct {
	id     string // base 36
	post   *redditSubmission
	parent string // fullname of what it answers
	author Account
	text   string
	at     time.Time
}

// redditComment is a comment as the API renders it: the audience's or an account's.
type redditComment struct {
	id             string
	post           *redditSubmission
	parent         string
	author, authID string // name and fullname
	body           string
	at             time.Time
	score          int64
}

func (c redditComment) fullname() string { return "t1_" + c.id }

// redditIDSpace is the number of ids of 7 base-36 characters or fewer.
const redditIDSpace = 36 * 36 * 36 * 36 * 36 * 36 * 36

// redditCommentID is the id of a post's n-th audience comment.
func redditCommentID(postID string, n int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("reddit-comment|%s|%d", postID, n)))
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])%(redditIDSpace-1)+1, 36)
}

// redditAuthorID is the account fullname of an audience member.
func redditAuthorID(name string) string {
	sum := sha256.Sum256([]byte("reddit-audience|" + name))
	return "t2_" + strconv.FormatUint(uint64(binary.BigEndian.Uint32(sum[:4])), 36)
}

// accountFullname is an account's fullname (t2_ and its id).
func accountFullname(a Account) string { return "t2_" + strings.TrimPrefix(a.ID, "t2_") }

// commentsOf returns a published post's comments, oldest first (under rd.mu).
func (rd *Reddit) commentsOf(s *redditSubmission, now time.Time) []redditComment {
	var out []redditComment
	for _, ac := range AudienceComments("t3_"+s.postID, s.readyAt, now) {
		id := redditCommentID(s.postID, ac.N)
		h := fnv.New32a()
		h.Write([]byte(id))
		out = append(out, redditComment{id: id, post: s, parent: "t3_" + s.postID, author: ac.Author,
			authID: redditAuthorID(ac.Author), body: ac.Text, at: ac.At, score: 1 + int64(h.Sum32()%20)})
	}
	for _, r := range rd.replies {
		if r.post == s {
			out = append(out, redditComment{id: r.id, post: s, parent: r.parent, author: redditName(r.author),
				authID: accountFullname(r.author), body: r.text, at: r.at, score: 1})
		}
	}
	return out
}

// published returns the posts that exist, of every account, settling those that are due
// (under rd.mu).
func (rd *Reddit) published(now time.Time) []*redditSubmission {
	var out []*redditSubmission
	for _, s := range rd.submissions {
		rd.settle(s, now)
		if s.status == "success" {
			out = append(out, s)
		}
	}
	return out
}

// thing finds a post or comment by fullname (under rd.mu).
func (rd *Reddit) thing(fullname string, now time.Time) (*redditSubmission, *redditComment) {
	kind, id, _ := strings.Cut(fullname, "_")
	for _, s := range rd.published(now) {
		switch kind {
		case "t3":
			if s.postID == id {
				return s, nil
			}
		case "t1":
			for _, c := range rd.commentsOf(s, now) {
				if c.id == id {
					return s, &c
				}
			}
		}
	}
	return nil, nil
}

// t3 renders a published post's listing data (under rd.mu).
func (rd *Reddit) t3(s *redditSubmission, now time.Time) map[string]any {
	a := AudienceOf("t3_"+s.postID, s.readyAt, now)
	score := 1 + a.Likes
	return map[string]any{
		"id": s.postID, "name": "t3_" + s.postID, "title": s.title, "author": redditName(s.account),
		"author_fullname": accountFullname(s.account),
		"subreddit":       s.sub.Name, "subreddit_name_prefixed": "r/" + s.sub.Name, "subreddit_id": "t5_" + redditSubID(s.sub.Name),
		"permalink": s.permalink, "url": "https://v.redd.it/" + s.video.lease.assetID, "domain": "v.redd.it", "is_video": true,
		"over_18": s.nsfw, "spoiler": s.spoiler, "link_flair_template_id": s.flairID,
		"link_flair_text": s.flairText, "created_utc": float64(s.readyAt.Unix()), "score": score, "ups": score, "downs": 0,
		"num_comments": len(rd.commentsOf(s, now)), "upvote_ratio": 1.0, "view_count": nil, "send_replies": s.sendReplies,
	}
}

// t1 renders a comment's data; replies is "" or a Listing.
func redditT1(c redditComment, depth int, replies any) map[string]any {
	return map[string]any{
		"id": c.id, "name": c.fullname(), "parent_id": c.parent, "link_id": "t3_" + c.post.postID,
		"author": c.author, "author_fullname": c.authID, "is_submitter": c.authID == accountFullname(c.post.account),
		"body": c.body, "body_html": "<div class=\"md\"><p>" + html.EscapeString(c.body) + "</p>\n</div>",
		"created_utc": float64(c.at.Unix()), "score": c.score, "ups": c.score, "downs": 0, "score_hidden": false,
		"subreddit": c.post.sub.Name, "subreddit_id": "t5_" + redditSubID(c.post.sub.Name),
		"subreddit_name_prefixed": "r/" + c.post.sub.Name,
		"permalink":               c.post.permalink + c.id + "/", "depth": depth, "replies": replies,
		"edited": false, "distinguished": nil, "stickied": false, "archived": false, "locked": false, "send_replies": true,
	}
}

func redditListing(children []any) map[string]any {
	return map[string]any{"kind": "Listing", "data": map[string]any{
		"after": nil, "before": nil, "dist": nil, "modhash": nil, "geo_filter": "", "children": children}}
}

// info is GET /api/info?id=…: the things named, in order.
func (rd *Reddit) info(w http.ResponseWriter, r *http.Request, _ Account) {
	var names []string
	for _, n := range strings.Split(r.URL.Query().Get("id"), ",") {
		if n = strings.TrimSpace(n); redditFullname.MatchString(n) {
			names = append(names, n)
		}
	}
	if len(names) > redditMaxInfoIDs {
		redditJSON(w, http.StatusBadRequest, map[string]any{"message": "Bad Request", "error": 400, "reason": "TOO_MANY_THING_IDS"})
		return
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	now := rd.cfg.Now()
	children := []any{}
	for _, n := range names {
		switch s, c := rd.thing(n, now); {
		case c != nil:
			children = append(children, map[string]any{"kind": "t1", "data": redditT1(*c, 0, "")})
		case s != nil:
			children = append(children, map[string]any{"kind": "t3", "data": rd.t3(s, now)})
		}
	}
	redditJSON(w, http.StatusOK, redditListing(children))
}

// comments is GET /comments/{article}: the post and its comment tree.
func (rd *Reddit) comments(w http.ResponseWriter, r *http.Request, _ Account, article string) {
	q := r.URL.Query()
	limit, depth := redditDefaultCommentsN, redditDefaultDepth
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			redditJSON(w, http.StatusBadRequest, map[string]any{"message": "Bad Request", "error": 400})
			return
		}
		limit = min(n, redditMaxCommentsN)
	}
	if v := q.Get("depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			redditJSON(w, http.StatusBadRequest, map[string]any{"message": "Bad Request", "error": 400})
			return
		}
		depth = n
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	now := rd.cfg.Now()
	s, _ := rd.thing("t3_"+strings.TrimPrefix(article, "t3_"), now)
	if s == nil {
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
		return
	}
	kids := map[string][]redditComment{}
	for _, c := range rd.commentsOf(s, now) {
		kids[c.parent] = append(kids[c.parent], c)
	}
	for _, cs := range kids {
		redditSortComments(cs, q.Get("sort"))
	}
	budget := limit
	tree := redditTree(kids, "t3_"+s.postID, 0, depth, &budget)
	redditJSON(w, http.StatusOK, []any{
		redditListing([]any{map[string]any{"kind": "t3", "data": rd.t3(s, now)}}),
		redditListing(tree),
	})
}

func redditSortComments(cs []redditComment, sort string) {
	switch sort {
	case "new":
		slices.SortStableFunc(cs, func(a, b redditComment) int { return b.at.Compare(a.at) })
	case "old":
		slices.SortStableFunc(cs, func(a, b redditComment) int { return a.at.Compare(b.at) })
	default:
		slices.SortStableFunc(cs, func(a, b redditComment) int { return int(b.score - a.score) })
	}
}

// redditTree renders the children of parent at depth; what the budget or the depth cuts
// becomes a "more" thing with the ids left out.
func redditTree(kids map[string][]redditComment, parent string, depth, maxDepth int, budget *int) []any {
	var out []any
	cs := kids[parent]
	for i, c := range cs {
		if *budget == 0 {
			out = append(out, redditMore(cs[i:], parent, depth, kids))
			break
		}
		*budget--
		var replies any = ""
		switch {
		case len(kids[c.fullname()]) > 0 && depth+1 < maxDepth:
			replies = redditListing(redditTree(kids, c.fullname(), depth+1, maxDepth, budget))
		case len(kids[c.fullname()]) > 0:
			replies = redditListing([]any{redditMore(kids[c.fullname()], c.fullname(), depth+1, kids)})
		}
		out = append(out, map[string]any{"kind": "t1", "data": redditT1(c, depth, replies)})
	}
	return out
}

// redditMore is the stub of comments left out: their ids, and how many they are with their
// descendants.
func redditMore(cs []redditComment, parent string, depth int, kids map[string][]redditComment) map[string]any {
	ids := make([]string, 0, len(cs))
	count := 0
	var walk func(redditComment)
	walk = func(c redditComment) {
		count++
		for _, k := range kids[c.fullname()] {
			walk(k)
		}
	}
	for _, c := range cs {
		ids = append(ids, c.id)
		walk(c)
	}
	return map[string]any{"kind": "more", "data": map[string]any{
		"count": count, "name": "t1_" + ids[0], "id": ids[0], "parent_id": parent, "depth": depth, "children": ids}}
}

// comment is POST /api/comment: a comment on a post or a reply to a comment.
func (rd *Reddit) comment(w http.ResponseWriter, r *http.Request, a Account) {
	form, ok := redditForm(r)
	if !ok {
		redditErrors(w, http.StatusBadRequest, [3]string{"BAD_REQUEST", "the body must be application/x-www-form-urlencoded", ""})
		return
	}
	if form.Get("api_type") != "json" {
		redditErrors(w, http.StatusBadRequest, [3]string{"BAD_REQUEST", "this simulator answers api_type=json only", "api_type"})
		return
	}
	thingID, text := form.Get("thing_id"), form.Get("text")
	rd.mu.Lock()
	defer rd.mu.Unlock()
	now := rd.cfg.Now()
	var post *redditSubmission
	if redditFullname.MatchString(thingID) {
		post, _ = rd.thing(thingID, now)
	}
	var errs [][3]string
	if post == nil {
		errs = append(errs, [3]string{"NO_THING_ID", "id not specified", "parent"})
	}
	switch {
	case strings.TrimSpace(text) == "":
		errs = append(errs, [3]string{"NO_TEXT", "we need something here", "text"})
	case !redditReplyLimit.Check(text):
		errs = append(errs, [3]string{"TOO_LONG", fmt.Sprintf("this is too long (max: %d)", redditReplyLimit.Max), "text"})
	}
	if len(errs) > 0 {
		redditErrors(w, http.StatusOK, errs...)
		return
	}
	reply := &redditReply{id: redditBase36(7), post: post, parent: thingID, author: a, text: text, at: now}
	rd.replies = append(rd.replies, reply)
	rd.cfg.Recorder.RecordReply(Reply{Account: a.ID, CommentID: thingID, Text: text})
	depth := 0
	for p := thingID; strings.HasPrefix(p, "t1_"); depth++ {
		_, c := rd.thing(p, now)
		if c == nil {
			break
		}
		p = c.parent
	}
	c := redditComment{id: reply.id, post: post, parent: thingID, author: redditName(a), authID: accountFullname(a),
		body: text, at: now, score: 1}
	redditJSON(w, http.StatusOK, map[string]any{"json": map[string]any{"errors": []any{}, "data": map[string]any{
		"things": []any{map[string]any{"kind": "t1", "data": redditT1(c, depth, "")}},
	}}})
}
