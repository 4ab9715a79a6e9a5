package redditsim

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
	"context"
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
	"github.com/reelay/reelay/internal/platform/sim"
)

const (
	redditMaxInfoIDs       = 100
	redditDefaultCommentsN = 200
	redditMaxCommentsN     = 500
	redditDefaultDepth     = 10
)

// redditReplyLimit is Reddit's limit of a comment's text: 10,000 characters.
var redditReplyLimit = platform.TextLimit{Max: 10000, Unit: platform.UnitCharacters}

// redditFullname is what r2 takes for a fullname.
var redditFullname = regexp.MustCompile(`^t[1-6]_[0-9a-z]+$`)

// redditReply is a comment an account posted, kept in the submission of its post.
type redditReply struct {
	ID       string    `json:"id"`        // base 36
	Parent   string    `json:"parent"`    // fullname of what it answers
	AuthorID string    `json:"author_id"` // the account's fullname
	Author   string    `json:"author"`    // the account's name
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
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
func accountFullname(a sim.Account) string { return "t2_" + strings.TrimPrefix(a.ID, "t2_") }

// redditCommentsOf returns a published post's comments, oldest first.
func redditCommentsOf(s *redditSubmission, now time.Time) []redditComment {
	var out []redditComment
	for _, ac := range sim.AudienceComments("t3_"+s.PostID, s.ReadyAt, now) {
		id := redditCommentID(s.PostID, ac.N)
		h := fnv.New32a()
		h.Write([]byte(id))
		out = append(out, redditComment{id: id, post: s, parent: "t3_" + s.PostID, author: ac.Author,
			authID: redditAuthorID(ac.Author), body: ac.Text, at: ac.At, score: 1 + int64(h.Sum32()%20)})
	}
	for _, r := range s.Replies {
		out = append(out, redditComment{id: r.ID, post: s, parent: r.Parent, author: r.Author,
			authID: r.AuthorID, body: r.Text, at: r.At, score: 1})
	}
	return out
}

// thing finds a post or comment by fullname for the account a.
func (rd *Sim) thing(ctx context.Context, a sim.Account, fullname string, now time.Time) (*redditSubmission, *redditComment, error) {
	kind, id, _ := strings.Cut(fullname, "_")
	switch kind {
	case "t3":
		ref, _, found, err := sim.Load[redditPostRef](ctx, rd.cfg.State, redditKey(redditPostKind, id))
		if err != nil || !found {
			return nil, nil, err
		}
		s, _, found, err := sim.Load[redditSubmission](ctx, rd.cfg.State, redditKey(redditSubmissionKind, ref.Submission))
		if err != nil || !found || s.Status != "success" {
			return nil, nil, err
		}
		return &s, nil, nil
	case "t1":
		// A comment's id does not name its post, so the posts are searched: the account's own
		// first (the comments it answers are mostly on them), then everyone's, as anyone may
		// comment on any post.
		for _, account := range []string{a.ID, ""} {
			subs, err := sim.ListJSON[redditSubmission](ctx, rd.cfg.State, redditKey(redditSubmissionKind, ""), account)
			if err != nil {
				return nil, nil, err
			}
			for i := range subs {
				s := &subs[i]
				if s.Status != "success" || (account == "" && s.Account.ID == a.ID) {
					continue
				}
				for _, c := range redditCommentsOf(s, now) {
					if c.id == id {
						return s, &c, nil
					}
				}
			}
		}
	}
	return nil, nil, nil
}

// redditT3 renders a published post's listing data.
func redditT3(s *redditSubmission, now time.Time) map[string]any {
	a := sim.AudienceOf("t3_"+s.PostID, s.ReadyAt, now)
	score := 1 + a.Likes
	return map[string]any{
		"id": s.PostID, "name": "t3_" + s.PostID, "title": s.Title, "author": redditName(s.Account),
		"author_fullname": accountFullname(s.Account),
		"subreddit":       s.Subreddit, "subreddit_name_prefixed": "r/" + s.Subreddit, "subreddit_id": "t5_" + redditSubID(s.Subreddit),
		"permalink": s.Permalink, "url": "https://v.redd.it/" + s.AssetID, "domain": "v.redd.it", "is_video": true,
		"over_18": s.NSFW, "spoiler": s.Spoiler, "link_flair_template_id": s.FlairID,
		"link_flair_text": s.FlairText, "created_utc": float64(s.ReadyAt.Unix()), "score": score, "ups": score, "downs": 0,
		"num_comments": len(redditCommentsOf(s, now)), "upvote_ratio": 1.0, "view_count": nil, "send_replies": s.SendReplies,
	}
}

// t1 renders a comment's data; replies is "" or a Listing.
func redditT1(c redditComment, depth int, replies any) map[string]any {
	return map[string]any{
		"id": c.id, "name": c.fullname(), "parent_id": c.parent, "link_id": "t3_" + c.post.PostID,
		"author": c.author, "author_fullname": c.authID, "is_submitter": c.authID == accountFullname(c.post.Account),
		"body": c.body, "body_html": "<div class=\"md\"><p>" + html.EscapeString(c.body) + "</p>\n</div>",
		"created_utc": float64(c.at.Unix()), "score": c.score, "ups": c.score, "downs": 0, "score_hidden": false,
		"subreddit": c.post.Subreddit, "subreddit_id": "t5_" + redditSubID(c.post.Subreddit),
		"subreddit_name_prefixed": "r/" + c.post.Subreddit,
		"permalink":               c.post.Permalink + c.id + "/", "depth": depth, "replies": replies,
		"edited": false, "distinguished": nil, "stickied": false, "archived": false, "locked": false, "send_replies": true,
	}
}

func redditListing(children []any) map[string]any {
	return map[string]any{"kind": "Listing", "data": map[string]any{
		"after": nil, "before": nil, "dist": nil, "modhash": nil, "geo_filter": "", "children": children}}
}

// info is GET /api/info?id=…: the things named, in order.
func (rd *Sim) info(w http.ResponseWriter, r *http.Request, a sim.Account) {
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
	now := rd.cfg.Now()
	children := []any{}
	for _, n := range names {
		s, c, err := rd.thing(r.Context(), a, n, now)
		switch {
		case err != nil:
			redditInternal(w)
			return
		case c != nil:
			children = append(children, map[string]any{"kind": "t1", "data": redditT1(*c, 0, "")})
		case s != nil:
			children = append(children, map[string]any{"kind": "t3", "data": redditT3(s, now)})
		}
	}
	redditJSON(w, http.StatusOK, redditListing(children))
}

// comments is GET /comments/{article}: the post and its comment tree.
func (rd *Sim) comments(w http.ResponseWriter, r *http.Request, a sim.Account, article string) {
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
	now := rd.cfg.Now()
	s, _, err := rd.thing(r.Context(), a, "t3_"+strings.TrimPrefix(article, "t3_"), now)
	if err != nil {
		redditInternal(w)
		return
	}
	if s == nil {
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
		return
	}
	kids := map[string][]redditComment{}
	for _, c := range redditCommentsOf(s, now) {
		kids[c.parent] = append(kids[c.parent], c)
	}
	for _, cs := range kids {
		redditSortComments(cs, q.Get("sort"))
	}
	budget := limit
	tree := redditTree(kids, "t3_"+s.PostID, 0, depth, &budget)
	redditJSON(w, http.StatusOK, []any{
		redditListing([]any{map[string]any{"kind": "t3", "data": redditT3(s, now)}}),
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
func (rd *Sim) comment(w http.ResponseWriter, r *http.Request, a sim.Account) {
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
	ctx := r.Context()
	now := rd.cfg.Now()
	var post *redditSubmission
	if redditFullname.MatchString(thingID) {
		var err error
		if post, _, err = rd.thing(ctx, a, thingID, now); err != nil {
			redditInternal(w)
			return
		}
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
	reply := redditReply{ID: redditBase36(7), Parent: thingID, AuthorID: accountFullname(a), Author: redditName(a), Text: text, At: now}
	// The comment joins its post's submission, and is recorded, in one transaction.
	err := rd.cfg.State.Update(ctx, func(tx sim.Tx) error {
		s, rec, found, err := sim.LoadTx[redditSubmission](tx, redditKey(redditSubmissionKind, post.ID))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sim: reddit comment on a submission gone: %s", post.ID)
		}
		s.Replies = append(s.Replies, reply)
		if err := sim.Save(tx, rec, s); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Reddit, sim.Reply{Account: a.ID, CommentID: thingID, Text: text})
	})
	if err != nil {
		redditInternal(w)
		return
	}
	// The depth is that of what it answers, plus one: the chain of parents is on the post.
	parents := map[string]string{}
	for _, c := range redditCommentsOf(post, now) {
		parents[c.fullname()] = c.parent
	}
	depth := 0
	for p := thingID; strings.HasPrefix(p, "t1_"); depth++ {
		next, ok := parents[p]
		if !ok {
			break
		}
		p = next
	}
	c := redditComment{id: reply.ID, post: post, parent: thingID, author: reply.Author, authID: reply.AuthorID,
		body: text, at: now, score: 1}
	redditJSON(w, http.StatusOK, map[string]any{"json": map[string]any{"errors": []any{}, "data": map[string]any{
		"things": []any{map[string]any{"kind": "t1", "data": redditT1(c, depth, "")}},
	}}})
}
