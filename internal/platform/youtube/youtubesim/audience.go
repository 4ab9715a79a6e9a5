package youtubesim

// The YouTube simulator's audience: the statistics part of videos.list, commentThreads.list,
// comments.list and comments.insert. Sources: developers.google.com/youtube/v3 docs/videos
// (statistics), docs/commentThreads/list, docs/comments/list, docs/comments/insert (its error
// table), determine_quota_cost, and the discovery document shipped with
// google.golang.org/api/youtube/v3 (parameter ranges and enums, resource fields).
//
//   - statistics: viewCount, likeCount, favoriteCount (always 0, as YouTube has answered since
//     favourites went away) and commentCount, as strings; the figures are AudienceOf the video
//     from the moment it was processed, commentCount adds the replies posted to it. A video
//     that is still processing has zeros; likeCount is left out for the accounts of
//     Options.HiddenLikes, as YouTube leaves out a count the owner hides.
//   - commentThreads.list?part=id,snippet,replies&videoId=: exactly one filter is required
//     (this simulator serves videoId only); maxResults 1–100 (default 20), pageToken,
//     order time (default, newest first) or relevance (most liked first), textFormat html
//     (default) or plainText, searchTerms. Threads are the video's AudienceComments, with
//     stable ids built from the comment's number ("Ugz" + 16 characters + "4AaABAg", as
//     YouTube's look); replies are the ones accounts posted. A thread carries at most
//     ytInlineReplies replies ("a limited number of replies"); totalReplyCount has them all.
//     A video the caller may not see (another account's private or unprocessed video, or
//     none) is 404 videoNotFound; a public video of another channel is readable, as on
//     YouTube. 1 quota unit.
//   - comments.list?part=id,snippet&parentId=: the replies of a top-level comment, oldest
//     first, paged like threads; a parentId nobody can see lists nothing. 1 quota unit.
//   - comments.insert?part=snippet with {"snippet":{"parentId","textOriginal"}}: a reply to a
//     top-level comment, id "{parentId}.{22 characters}". parentIdMissing, commentTextRequired
//     and commentTextTooLong (the registry's reply limit) are 400, a parentId that is itself a
//     reply is 400 operationNotSupported (YouTube threads are one level deep), an unknown
//     parent is 404 commentNotFound (the reason is this simulator's choice: the reference
//     names none for it), an account without a channel 403 ineligibleAccount. Every reply is
//     recorded with the id of the comment it answers. 50 quota units.
//   - textOriginal is only in comments the caller's channel wrote ("only guaranteed if the
//     viewer is the comment's author").

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// ytInlineReplies is how many replies a comment thread carries; comments.list has the rest.
const ytInlineReplies = 5

// ytReplyLimit is the length limit of a reply (snippet.textOriginal): 10,000 characters as
// commonly reported (comments.insert refuses a longer one as commentTextTooLong).
var ytReplyLimit = platform.TextLimit{Max: 10000, Unit: platform.UnitCharacters}

// ytReply is a reply an account posted, kept in the video's record.
type ytReply struct {
	ID       string    `json:"id"`
	ParentID string    `json:"parent_id"`
	Channel  ytChannel `json:"channel"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// ytComment is a comment as the resources render it: an audience comment or a reply.
type ytComment struct {
	id, parentID, videoID string
	videoChannel          string // the channel of the video commented on
	author                ytChannel
	text                  string
	at                    time.Time
	likes                 int64
}

// ytThread is a top-level comment and its replies, oldest first.
type ytThread struct {
	top     ytComment
	replies []ytComment
}

// ytVisible reports whether viewer may see v: its own videos always, others' once processed
// and not private.
func ytVisible(v ytVideo, viewer string) bool {
	return v.Account == viewer || (v.Meta.Privacy != "private" && v.State == ytProcessed)
}

// statistics is the statistics part of a video resource.
func (s *ytSim) statistics(v ytVideo, now time.Time) map[string]string {
	st := map[string]string{"viewCount": "0", "likeCount": "0", "favoriteCount": "0", "commentCount": "0"}
	if v.State == ytProcessed {
		a := sim.AudienceOf(v.ID, v.Ready, now)
		st["viewCount"], st["likeCount"] = strconv.FormatInt(a.Views, 10), strconv.FormatInt(a.Likes, 10)
		st["commentCount"] = strconv.FormatInt(a.Comments+int64(len(v.Replies)), 10)
	}
	if s.opt.HiddenLikes[v.Account] {
		delete(st, "likeCount")
	}
	return st
}

// ytCommentID is the id of a video's n-th audience comment.
func ytCommentID(videoID string, n int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("youtube-comment|%s|%d", videoID, n)))
	return "Ugz" + ytEncode(sum[:])[:16] + "4AaABAg"
}

// ytAudienceChannel is the channel of an audience member.
func ytAudienceChannel(name string) ytChannel {
	sum := sha256.Sum256([]byte("youtube-audience|" + name))
	return ytChannel{ID: "UC" + ytEncode(sum[:])[:22], Title: name}
}

// ytThreads returns the comment threads of a processed video, oldest first.
func ytThreads(v ytVideo, now time.Time) []ytThread {
	if v.State != ytProcessed {
		return nil
	}
	audience := sim.AudienceComments(v.ID, v.Ready, now)
	out := make([]ytThread, 0, len(audience))
	byID := map[string]int{}
	for _, ac := range audience {
		id := ytCommentID(v.ID, ac.N)
		h := fnv.New32a()
		h.Write([]byte(id))
		byID[id] = len(out)
		out = append(out, ytThread{top: ytComment{
			id: id, videoID: v.ID, videoChannel: v.Channel.ID, author: ytAudienceChannel(ac.Author),
			text: ac.Text, at: ac.At, likes: int64(h.Sum32() % 25),
		}})
	}
	for _, r := range v.Replies {
		if i, ok := byID[r.ParentID]; ok {
			out[i].replies = append(out[i].replies, ytComment{
				id: r.ID, parentID: r.ParentID, videoID: v.ID, videoChannel: v.Channel.ID,
				author: r.Channel, text: r.Text, at: r.At,
			})
		}
	}
	return out
}

// ytThreadOf finds the top-level comment id among the threads of v, if viewer may see v.
func ytThreadOf(v ytVideo, id, viewer string, now time.Time) *ytThread {
	if !ytVisible(v, viewer) {
		return nil
	}
	ts := ytThreads(v, now)
	for i := range ts {
		if ts[i].top.id == id {
			return &ts[i]
		}
	}
	return nil
}

// findThread finds the top-level comment id among the videos viewer may see: its video is
// the one the comment's record names.
func (s *ytSim) findThread(ctx context.Context, id, viewer string, now time.Time) (*ytThread, error) {
	ref, _, found, err := sim.Load[ytCommentRef](ctx, s.cfg.State, ytKey(ytCommentKind, id))
	if err != nil || !found {
		return nil, err
	}
	v, found, err := s.video(ctx, ref.Video, now)
	if err != nil || !found {
		return nil, err
	}
	return ytThreadOf(v, id, viewer, now), nil
}

// findThreadTx is findThread within tx, the video locked: it answers the video's record too.
// A comment's record is written when its video is processed, so the video needs no settling.
func findThreadTx(tx sim.Tx, id, viewer string, now time.Time) (ytVideo, sim.Record, *ytThread, error) {
	ref, _, found, err := sim.LoadTx[ytCommentRef](tx, ytKey(ytCommentKind, id))
	if err != nil || !found {
		return ytVideo{}, sim.Record{}, nil, err
	}
	v, rec, found, err := sim.LoadTx[ytVideo](tx, ytKey(ytVideoKind, ref.Video))
	if err != nil || !found {
		return ytVideo{}, sim.Record{}, nil, err
	}
	return v, rec, ytThreadOf(v, id, viewer, now), nil
}

// commentResource renders a comment; textOriginal only for its author.
func ytCommentResource(c ytComment, viewerChannel, format string) map[string]any {
	display := c.text
	if format != "plainText" {
		display = strings.ReplaceAll(html.EscapeString(c.text), "\n", "<br>")
	}
	at := c.at.UTC().Format(time.RFC3339)
	snip := map[string]any{
		"channelId": c.videoChannel, "videoId": c.videoID, "textDisplay": display,
		"authorDisplayName":     c.author.Title,
		"authorProfileImageUrl": "https://yt3.ggpht.com/ytc/" + c.author.ID + "=s48-c-k-c0x00ffffff-no-rj",
		"authorChannelUrl":      "http://www.youtube.com/channel/" + c.author.ID,
		"authorChannelId":       map[string]string{"value": c.author.ID},
		"canRate":               true, "viewerRating": "none", "likeCount": c.likes,
		"publishedAt": at, "updatedAt": at,
	}
	if c.parentID != "" {
		snip["parentId"] = c.parentID
	}
	if c.author.ID == viewerChannel {
		snip["textOriginal"] = c.text
	}
	return map[string]any{"kind": "youtube#comment", "etag": ytEtag(), "id": c.id, "snippet": snip}
}

// ytListParams are what both comment listings take: parts, page size, page token and text
// format.
type ytListParams struct {
	parts    map[string]bool
	max      int
	offset   int
	format   string
	tokenKey string // what a page token is bound to
}

func ytReadListParams(q url.Values, allowed []string, tokenKey string) (ytListParams, *ytErr) {
	lp := ytListParams{parts: map[string]bool{}, max: 20, format: "html", tokenKey: tokenKey}
	if strings.TrimSpace(ytParam(q, "part")) == "" {
		return lp, ytError(400, "global", "required", "Required parameter: part")
	}
	for _, p := range strings.Split(ytParam(q, "part"), ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allowed, p) {
			return lp, ytError(400, "youtube.part", "unknownPart", "%q", p)
		}
		lp.parts[p] = true
	}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return lp, ytError(400, "youtube.parameter", "invalidParameter", "Invalid value '%s'. Values must be within the range: [1, 100]", v)
		}
		lp.max = n
	}
	switch f := q.Get("textFormat"); f {
	case "", "html":
	case "plainText":
		lp.format = f
	default:
		return lp, ytError(400, "youtube.parameter", "invalidParameter", "Invalid value '%s' for textFormat: html or plainText.", f)
	}
	if t := q.Get("pageToken"); t != "" {
		off, ok := ytParsePageToken(t, tokenKey)
		if !ok {
			return lp, ytError(400, "youtube.parameter", "invalidPageToken", "The request specifies an invalid page token.")
		}
		lp.offset = off
	}
	return lp, nil
}

// ytPageToken is an opaque token for the page starting at offset of the listing key.
func ytPageToken(key string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key + "|" + strconv.Itoa(offset)))
}

func ytParsePageToken(t, key string) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(raw), '|')
	if i < 0 || string(raw[:i]) != key {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw[i+1:]))
	return n, err == nil && n >= 0
}

// page cuts items to the page lp asks for and renders the list response.
func ytPage[T any](kind string, items []T, lp ytListParams, render func(T) map[string]any) map[string]any {
	start := min(lp.offset, len(items))
	end := min(start+lp.max, len(items))
	out := make([]map[string]any, 0, end-start)
	for _, it := range items[start:end] {
		out = append(out, render(it))
	}
	res := map[string]any{
		"kind": kind, "etag": ytEtag(), "items": out,
		"pageInfo": map[string]int{"totalResults": len(items), "resultsPerPage": lp.max},
	}
	if end < len(items) {
		res["nextPageToken"] = ytPageToken(lp.tokenKey, end)
	}
	return res
}

// listCommentThreads is commentThreads.list by videoId.
func (s *ytSim) listCommentThreads(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	filters := 0
	for _, f := range []string{"allThreadsRelatedToChannelId", "channelId", "id", "postId", "videoId"} {
		if q.Has(f) {
			filters++
		}
	}
	switch {
	case filters == 0:
		return ytError(400, "youtube.parameter", "missingRequiredParameter", "No filter selected. Expected one of: allThreadsRelatedToChannelId, channelId, id, postId, videoId")
	case filters > 1:
		return ytError(400, "youtube.parameter", "incompatibleParameters", "The request specifies two or more parameters that cannot be used in the same request.")
	case q.Get("videoId") == "":
		return ytError(400, "youtube.parameter", "invalidParameter", "This simulator lists comment threads by videoId only.")
	}
	videoID := q.Get("videoId")
	lp, e := ytReadListParams(q, []string{"id", "snippet", "replies"}, "threads|"+videoID)
	if e != nil {
		return e
	}
	order := q.Get("order")
	switch order {
	case "", "time", "relevance":
	default:
		return ytError(400, "youtube.parameter", "invalidParameter", "Invalid value '%s' for order: time or relevance.", order)
	}
	status := q.Get("moderationStatus")
	switch status {
	case "", "published", "heldForReview", "likelySpam", "rejected":
	default:
		return ytError(400, "youtube.parameter", "invalidParameter", "Invalid value '%s' for moderationStatus.", status)
	}
	if e := s.chargeCall(r.Context(), acct, 1, now); e != nil {
		return e
	}
	viewer := ytChannelOf(acct).ID
	v, found, err := s.video(r.Context(), videoID, now)
	if err != nil {
		return ytInternal()
	}
	if !found || !ytVisible(v, acct.ID) {
		return ytError(404, "youtube.commentThread", "videoNotFound", "The video identified by the videoId parameter could not be found.")
	}
	var threads []ytThread
	if status == "" || status == "published" { // nothing is held for review here
		for _, t := range ytThreads(v, now) {
			if terms := strings.ToLower(q.Get("searchTerms")); terms == "" || strings.Contains(strings.ToLower(t.top.text), terms) {
				threads = append(threads, t)
			}
		}
	}
	slices.Reverse(threads) // newest first
	if order == "relevance" {
		slices.SortStableFunc(threads, func(a, b ytThread) int { return int(b.top.likes - a.top.likes) })
	}
	ytWriteJSON(w, http.StatusOK, ytPage("youtube#commentThreadListResponse", threads, lp, func(t ytThread) map[string]any {
		res := map[string]any{"kind": "youtube#commentThread", "etag": ytEtag(), "id": t.top.id}
		if lp.parts["snippet"] {
			res["snippet"] = map[string]any{
				"channelId": v.Channel.ID, "videoId": v.ID, "canReply": true, "isPublic": v.Meta.Privacy == "public",
				"totalReplyCount": len(t.replies), "topLevelComment": ytCommentResource(t.top, viewer, lp.format),
			}
		}
		if lp.parts["replies"] && len(t.replies) > 0 {
			inline := make([]map[string]any, 0, ytInlineReplies)
			for _, r := range t.replies[:min(len(t.replies), ytInlineReplies)] {
				inline = append(inline, ytCommentResource(r, viewer, lp.format))
			}
			res["replies"] = map[string]any{"comments": inline}
		}
		return res
	}))
	return nil
}

// listComments is comments.list by parentId: a thread's replies, oldest first.
func (s *ytSim) listComments(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	switch {
	case q.Has("id") && q.Has("parentId"):
		return ytError(400, "youtube.parameter", "incompatibleParameters", "The request specifies two or more parameters that cannot be used in the same request.")
	case !q.Has("id") && !q.Has("parentId"):
		return ytError(400, "youtube.parameter", "missingRequiredParameter", "No filter selected. Expected one of: id, parentId")
	case q.Get("parentId") == "":
		return ytError(400, "youtube.parameter", "invalidParameter", "This simulator lists comments by parentId only.")
	}
	parent := q.Get("parentId")
	lp, e := ytReadListParams(q, []string{"id", "snippet"}, "replies|"+parent)
	if e != nil {
		return e
	}
	if e := s.chargeCall(r.Context(), acct, 1, now); e != nil {
		return e
	}
	viewer := ytChannelOf(acct).ID
	t, err := s.findThread(r.Context(), parent, acct.ID, now)
	if err != nil {
		return ytInternal()
	}
	var replies []ytComment
	if t != nil {
		replies = t.replies
	}
	ytWriteJSON(w, http.StatusOK, ytPage("youtube#commentListResponse", replies, lp, func(c ytComment) map[string]any {
		res := ytCommentResource(c, viewer, lp.format)
		if !lp.parts["snippet"] {
			delete(res, "snippet")
		}
		return res
	}))
	return nil
}

// insertComment is comments.insert: a reply to a top-level comment.
func (s *ytSim) insertComment(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	parts := map[string]bool{}
	if strings.TrimSpace(ytParam(q, "part")) == "" {
		return ytError(400, "global", "required", "Required parameter: part")
	}
	for _, p := range strings.Split(ytParam(q, "part"), ",") {
		p = strings.TrimSpace(p)
		if p != "id" && p != "snippet" {
			return ytError(400, "youtube.part", "unknownPart", "%q", p)
		}
		parts[p] = true
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return ytError(400, "global", "badContent", "Unsupported content with type: %s", r.Header.Get("Content-Type"))
	}
	var in struct {
		Snippet struct {
			ParentID     string `json:"parentId"`
			TextOriginal string `json:"textOriginal"`
		} `json:"snippet"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, ytMaxMetadataBytes+1))
	if err != nil || len(raw) > ytMaxMetadataBytes || json.Unmarshal(raw, &in) != nil {
		return ytError(400, "global", "parseError", "Parse Error")
	}
	parentID, text := in.Snippet.ParentID, in.Snippet.TextOriginal
	ch := ytChannelOf(acct)
	reply := ytReply{ID: parentID + "." + ytRandomID(22), ParentID: parentID, Channel: ch, Text: text, At: now}
	var e *ytErr
	var v ytVideo
	// The call costs its units whatever it answers: one transaction takes them and, for a
	// valid reply, adds it to its video and records it.
	err = s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		var err error
		if e, err = s.charge(tx, acct, 50, now); err != nil || e != nil {
			return err
		}
		if e = ytCheckReply(s.opt.NoChannel[acct.ID], parentID, text); e != nil {
			return nil
		}
		var rec sim.Record
		var t *ytThread
		if v, rec, t, err = findThreadTx(tx, parentID, acct.ID, now); err != nil {
			return err
		}
		if t == nil {
			e = ytError(404, "youtube.comment", "commentNotFound", "The parent comment identified by the snippet.parentId property could not be found.")
			if top, _, isReply := strings.Cut(parentID, "."); isReply {
				_, _, pt, err := findThreadTx(tx, top, acct.ID, now)
				if err != nil {
					return err
				}
				if pt != nil {
					e = ytError(400, "youtube.comment", "operationNotSupported",
						"The API user is not able to insert a comment in reply to the comment identified by the snippet.parentId property: replies are only made to top-level comments.")
				}
			}
			return nil
		}
		v.Replies = append(v.Replies, reply)
		if err := sim.Save(tx, rec, v); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.YouTube, sim.Reply{Account: acct.ID, CommentID: parentID, Text: text})
	})
	switch {
	case err != nil:
		return ytInternal()
	case e != nil:
		return e
	}
	res := ytCommentResource(ytComment{id: reply.ID, parentID: parentID, videoID: v.ID, videoChannel: v.Channel.ID,
		author: ch, text: text, at: now}, ch.ID, "html")
	if !parts["snippet"] {
		delete(res, "snippet")
	}
	ytWriteJSON(w, http.StatusOK, res)
	return nil
}

// ytCheckReply refuses a reply comments.insert does not take before looking for its parent.
func ytCheckReply(noChannel bool, parentID, text string) *ytErr {
	switch {
	case noChannel:
		return ytError(403, "youtube.comment", "ineligibleAccount",
			"The YouTube account used to authorize the API request must be merged with the user's Google account to insert a comment or comment thread.")
	case parentID == "":
		return ytError(400, "youtube.comment", "parentIdMissing", "The comment being inserted must be linked to a parent comment. However, the comment resource in the body of the API request did not specify a value for the snippet.parentId property.")
	case strings.TrimSpace(text) == "":
		return ytError(400, "youtube.comment", "commentTextRequired", "The comment resource that is being inserted must specify a value for the snippet.textOriginal property. Comments cannot be empty.")
	case !ytReplyLimit.Check(text):
		return ytError(400, "youtube.comment", "commentTextTooLong", "The comment resource that is being inserted contains too many characters in the snippet.textOriginal property.")
	}
	return nil
}
