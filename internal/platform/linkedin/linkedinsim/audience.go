package linkedinsim

// LinkedIn simulator, the audience side: member post and video statistics
// (/rest/memberCreatorPostAnalytics, /rest/memberCreatorVideoAnalytics) and the Comments API
// (/rest/socialActions/{urn}/comments).
//
// Sources: learn.microsoft.com/linkedin/marketing/community-management/members/post-statistics,
// …/members/video-statistics and …/shares/comments-api (copies read through the search tool),
// LinkedIn's developer newsletter on the 202605 version, and how API users call these endpoints
// (public client code). What the pages leave open, and how it is decided here:
//
//   - Statistics take q=entity, entity, queryType (one metric a call) and aggregation. entity is
//     a Rest.li 2.0 union: (share:urn%3Ali%3Ashare%3A…) or (ugc:urn%3Ali%3AugcPost%3A…), the URN
//     URL-encoded inside literal parentheses; anything else answers 400. Post metrics are
//     IMPRESSION, MEMBERS_REACHED, RESHARE, REACTION and COMMENT; video metrics VIDEO_PLAY,
//     VIDEO_VIEWER and VIDEO_WATCH_TIME (milliseconds). Only aggregation=TOTAL without dateRange
//     (lifetime) is simulated: DAILY and dateRange answer 400 here (the pages document DAILY, and
//     refuse it for VIDEO_VIEWER and VIDEO_WATCH_TIME). VIDEO_PLAY and VIDEO_VIEWER have no data a
//     year after the post (an empty elements list). The endpoints exist from version 202506 (the
//     r_member_postAnalytics permission's first version): an older LinkedIn-Version answers 404.
//     An element is {count, metricType, targetEntity}; metricType is an object
//     {"com.linkedin.adsexternalapi.memberanalytics.v1.CreatorPostAnalyticsMetricTypeV1": …}
//     before 202605 and a plain string from 202605 (LinkedIn's announced breaking change).
//   - Figures are AudienceOf(post URN, post creation, now): IMPRESSION = Impressions,
//     MEMBERS_REACHED = Reach, RESHARE = Shares, REACTION = Likes, COMMENT = the audience's
//     comments plus those the members wrote, VIDEO_PLAY = Views, VIDEO_VIEWER = Reach,
//     VIDEO_WATCH_TIME = WatchSeconds × 1000.
//   - GET /rest/socialActions/{urn}/comments lists the first-level comments of a post (its
//     share, ugcPost or activity URN) or the comments on a comment (its comment URN), oldest
//     first, paged with start and count (default 10). The key must be URL-encoded whole (Rest.li
//     2.0 keys). Audience comments are AudienceComments(post URN, creation, now), each with a
//     stable id built from its N and a member URN built from its author (AudienceActor).
//     Comment URNs are urn:li:comment:(urn:li:activity:{post's activity},{id}). An element has
//     actor, created and lastModified {actor, time}, id, commentUrn, $URN, object (the
//     activity), message {text, attributes}, parentComment (nested comments), likesSummary
//     (no likes are simulated) and commentsSummary (the replies below a first-level comment).
//   - POST to the same path creates a comment {actor, object, message: {text}, parentComment}:
//     actor must be the token's member (else 403), object the post (its share, ugcPost or
//     activity URN), parentComment the comment in the path when the path names one. Comments
//     nest one level: a comment on a nested comment answers 400 (this simulator's wording).
//     message.text holds at most 1,250 UTF-16 units (LinkedIn's product limit; the Comments API
//     pages state none; the wording of the refusal is this simulator's). The answer is 201 with
//     x-restli-id (the comment id) and the comment. Each is recorded as a reply (the comment
//     answered; the post URN for a first-level comment).
//   - A post that does not exist, or is a draft, answers 404; another member's post answers 403
//     ACCESS_DENIED (reading comments and statistics is the author's).

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// linkedinStatsFirstVersion is the first LinkedIn-Version that serves member statistics.
const linkedinStatsFirstVersion = "202506"

// linkedinStringMetricVersion is the first version whose statistics name metricType as a string.
const linkedinStringMetricVersion = "202605"

// linkedinMetricTypeKey is the member of metricType's object before 202605.
const linkedinMetricTypeKey = "com.linkedin.adsexternalapi.memberanalytics.v1.CreatorPostAnalyticsMetricTypeV1"

// linkedinVideoDataLife is how long after the post VIDEO_PLAY and VIDEO_VIEWER have data.
const linkedinVideoDataLife = 365 * 24 * time.Hour

// linkedinReplyLimit is LinkedIn's limit of a comment: 1,250 characters as integrators enforce
// it, counted in UTF-16 units.
var linkedinReplyLimit = platform.TextLimit{Max: 1250, Unit: platform.UnitUTF16}

// linkedinMetric computes one statistic of a post from its audience and its comment count.
type linkedinMetric func(a sim.Audience, comments int64) int64

var linkedinPostMetrics = map[string]linkedinMetric{
	"IMPRESSION":      func(a sim.Audience, _ int64) int64 { return a.Impressions },
	"MEMBERS_REACHED": func(a sim.Audience, _ int64) int64 { return a.Reach },
	"RESHARE":         func(a sim.Audience, _ int64) int64 { return a.Shares },
	"REACTION":        func(a sim.Audience, _ int64) int64 { return a.Likes },
	"COMMENT":         func(_ sim.Audience, comments int64) int64 { return comments },
}

var linkedinVideoMetrics = map[string]linkedinMetric{
	"VIDEO_PLAY":       func(a sim.Audience, _ int64) int64 { return a.Views },
	"VIDEO_VIEWER":     func(a sim.Audience, _ int64) int64 { return a.Reach },
	"VIDEO_WATCH_TIME": func(a sim.Audience, _ int64) int64 { return a.WatchSeconds * 1000 },
}

// linkedinComment is one comment on a post: the audience's (account "") or one a member wrote
// through the API.
type linkedinComment struct {
	ID      string    `json:"id"`                // numeric
	URN     string    `json:"urn"`               // urn:li:comment:({activity},{id})
	Actor   string    `json:"actor"`             // urn:li:person:…
	Account string    `json:"account,omitempty"` // the simulator account that wrote it; "" for the audience
	Parent  string    `json:"parent,omitempty"`  // the parent comment's URN; "" for a first-level comment
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
}

// AudienceActor is the member URN of an audience commenter (AudienceComment.Author):
// LinkedIn's comments name their author only by URN.
func AudienceActor(author string) string {
	h := fnv.New64a()
	h.Write([]byte("linkedin-member|" + author))
	return "urn:li:person:" + strconv.FormatUint(h.Sum64(), 36)
}

// AudienceCommentURN is the URN of the audience comment numbered n on a post.
func AudienceCommentURN(post Post, n int) string {
	return linkedinCommentURN(post.Activity, linkedinAudienceCommentID(post.URN, n))
}

// linkedinAudienceCommentID is the numeric id of the audience comment numbered n on a post:
// stable on every read, and distinct between posts.
func linkedinAudienceCommentID(postURN string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(postURN))
	return strconv.FormatUint(7_000_000_000_000_000_000+h.Sum64()%1_000_000_000_000_000*1000+uint64(n), 10)
}

func linkedinCommentURN(activity, id string) string {
	return "urn:li:comment:(" + activity + "," + id + ")"
}

// commentsOf returns every comment on a post at now, the audience's and the members', oldest
// first.
func commentsOf(p linkedinPost, now time.Time) []linkedinComment {
	var out []linkedinComment
	for _, c := range sim.AudienceComments(p.URN, p.Created, now) {
		id := linkedinAudienceCommentID(p.URN, c.N)
		out = append(out, linkedinComment{
			ID: id, URN: linkedinCommentURN(p.Activity, id), Actor: AudienceActor(c.Author), Text: c.Text, At: c.At,
		})
	}
	return append(out, p.Comments...)
}

var (
	linkedinPostURN    = regexp.MustCompile(`^urn:li:(share|ugcPost|activity):[0-9]+$`)
	linkedinCommentKey = regexp.MustCompile(`^urn:li:comment:\((urn:li:(?:activity|share|ugcPost):[0-9]+),([0-9]+)\)$`)
)

// publishedPost finds the published post a URN names (its share, ugcPost or activity URN) and
// checks it is acc's; it answers 404, 403 or a failure of the State itself.
func (l *Sim) publishedPost(ctx context.Context, w http.ResponseWriter, acc sim.Account, urn, what string) (linkedinPost, bool) {
	share, found := urn, true
	var err error
	if strings.HasPrefix(urn, "urn:li:activity:") {
		share, _, found, err = sim.Load[string](ctx, l.cfg.State, linkedinKey(linkedinActivityKind, urn))
	}
	var p linkedinPost
	if err == nil && found {
		p, _, found, err = sim.Load[linkedinPost](ctx, l.cfg.State, linkedinKey(linkedinPostKind, share))
	}
	switch {
	case err != nil:
		linkedinInternal(w)
		return p, false
	case !found || p.Lifecycle != "PUBLISHED":
		linkedinError(w, http.StatusNotFound, 0, "", "Entity "+urn+" does not exist")
		return p, false
	case p.Account != acc.ID:
		l.forbidden(w, what)
		return p, false
	}
	return p, true
}

// restliQuery splits a raw query string into its parameters, names decoded and values left as
// sent: Rest.li 2.0 values have structure (parentheses, colons) that decoding would hide.
func restliQuery(raw string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && name != "" {
			if _, seen := out[name]; !seen {
				out[name] = v
			}
		}
	}
	return out
}

var linkedinEntityUnion = regexp.MustCompile(`^\((share|ugc):([^():,]+)\)$`)

// statsEntity reads the entity union of a statistics query: the post URN it names.
func statsEntity(raw string) (string, error) {
	m := linkedinEntityUnion.FindStringSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("entity must be a Rest.li union (share:{encoded share URN}) or (ugc:{encoded ugcPost URN}), got %q", raw)
	}
	urn, err := url.QueryUnescape(m[2])
	want := map[string]string{"share": "urn:li:share:", "ugc": "urn:li:ugcPost:"}[m[1]]
	if err != nil || !strings.HasPrefix(urn, want) || !linkedinPostURN.MatchString(urn) {
		return "", fmt.Errorf("entity member %s must hold a %s… URN, got %q", m[1], want, m[2])
	}
	return urn, nil
}

func (l *Sim) postAnalytics(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
	l.statistics(w, r, acc, version, "memberCreatorPostAnalytics", linkedinPostMetrics)
}

func (l *Sim) videoAnalytics(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
	l.statistics(w, r, acc, version, "memberCreatorVideoAnalytics", linkedinVideoMetrics)
}

// statistics answers one member statistics query: one metric of one post, lifetime.
func (l *Sim) statistics(w http.ResponseWriter, r *http.Request, acc sim.Account, version, resource string,
	metrics map[string]linkedinMetric) {
	if version[:6] < linkedinStatsFirstVersion {
		linkedinError(w, http.StatusNotFound, 0, "", "No virtual resource found")
		return
	}
	q := restliQuery(r.URL.RawQuery)
	queryType, aggregation := q["queryType"], q["aggregation"]
	switch {
	case q["q"] != "entity":
		linkedinError(w, http.StatusBadRequest, 0, "", "This simulator answers the entity finder only: q=entity is required")
		return
	case metrics[queryType] == nil:
		linkedinError(w, http.StatusBadRequest, 0, "", fmt.Sprintf("Invalid value %q for queryType of %s", queryType, resource))
		return
	case aggregation == "DAILY" && (queryType == "VIDEO_VIEWER" || queryType == "VIDEO_WATCH_TIME"):
		linkedinError(w, http.StatusBadRequest, 0, "", queryType+" does not support DAILY aggregation")
		return
	case aggregation == "DAILY":
		linkedinError(w, http.StatusBadRequest, 0, "", "This simulator answers aggregation=TOTAL only")
		return
	case aggregation != "TOTAL":
		linkedinError(w, http.StatusBadRequest, 0, "", fmt.Sprintf("Invalid value %q for aggregation: TOTAL or DAILY", aggregation))
		return
	case q["dateRange"] != "":
		linkedinError(w, http.StatusBadRequest, 0, "", "This simulator answers lifetime statistics only: dateRange is not simulated")
		return
	}
	urn, err := statsEntity(q["entity"])
	if err != nil {
		linkedinError(w, http.StatusBadRequest, 0, "", "Invalid entity: "+err.Error())
		return
	}
	now := l.cfg.Now()
	p, ok := l.publishedPost(r.Context(), w, acc, urn, resource+".FINDER-entity."+version)
	if !ok {
		return
	}
	comments := int64(len(commentsOf(p, now)))
	elements := []map[string]any{}
	expired := (queryType == "VIDEO_PLAY" || queryType == "VIDEO_VIEWER") && now.Sub(p.Created) > linkedinVideoDataLife
	if !expired {
		var metricType any = map[string]string{linkedinMetricTypeKey: queryType}
		if version[:6] >= linkedinStringMetricVersion {
			metricType = queryType
		}
		union := "share"
		if strings.HasPrefix(urn, "urn:li:ugcPost:") {
			union = "ugc"
		}
		elements = append(elements, map[string]any{
			"count":        metrics[queryType](sim.AudienceOf(p.URN, p.Created, now), comments),
			"metricType":   metricType,
			"targetEntity": map[string]string{union: urn},
		})
	}
	writeLinkedInJSON(w, http.StatusOK, map[string]any{
		"paging":   map[string]any{"start": 0, "count": 10, "links": []any{}},
		"elements": elements,
	})
}

// socialActions serves /rest/socialActions/{key}/comments: GET lists, POST creates.
func (l *Sim) socialActions(w http.ResponseWriter, r *http.Request, rawKey string) {
	method := http.MethodGet
	if r.Method == http.MethodPost {
		method = http.MethodPost
	}
	l.rest(w, r, method, func(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
		key, err := url.PathUnescape(rawKey)
		if err != nil || strings.ContainsAny(rawKey, ":(),") ||
			!linkedinPostURN.MatchString(key) && !linkedinCommentKey.MatchString(key) {
			linkedinError(w, http.StatusBadRequest, 0, "", "Invalid key "+strconv.Quote(rawKey)+
				": a post or comment URN, URL-encoded (urn%3Ali%3Ashare%3A… or urn%3Ali%3Acomment%3A%28…%29)")
			return
		}
		if method == http.MethodGet {
			l.listComments(w, r, acc, version, key)
		} else {
			l.createComment(w, r, acc, version, key)
		}
	})
}

// commentTarget resolves the key of a socialActions path: the post, and the comment when the
// key names one. It answers 404, 403 or a failure of the State itself.
func (l *Sim) commentTarget(ctx context.Context, w http.ResponseWriter, acc sim.Account, key, what string, now time.Time) (linkedinPost, *linkedinComment, bool) {
	m := linkedinCommentKey.FindStringSubmatch(key)
	if m == nil {
		p, ok := l.publishedPost(ctx, w, acc, key, what)
		return p, nil, ok
	}
	p, ok := l.publishedPost(ctx, w, acc, m[1], what)
	if !ok {
		return p, nil, false
	}
	for _, c := range commentsOf(p, now) {
		if c.URN == key {
			return p, &c, true
		}
	}
	linkedinError(w, http.StatusNotFound, 0, "", "Comment "+key+" does not exist")
	return p, nil, false
}

func (l *Sim) listComments(w http.ResponseWriter, r *http.Request, acc sim.Account, version, key string) {
	q := r.URL.Query()
	start, count := 0, 10
	for name, dst := range map[string]*int{"start": &start, "count": &count} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || name == "count" && n == 0 {
				linkedinError(w, http.StatusBadRequest, 0, "", "Invalid value "+strconv.Quote(v)+" for "+name)
				return
			}
			*dst = n
		}
	}
	now := l.cfg.Now()
	p, target, ok := l.commentTarget(r.Context(), w, acc, key, "socialActions.comments.FINDER."+version, now)
	if !ok {
		return
	}
	parent := ""
	if target != nil {
		parent = target.URN
	}
	all := commentsOf(p, now)
	var level []linkedinComment
	for _, c := range all {
		if c.Parent == parent {
			level = append(level, c)
		}
	}
	elements := []map[string]any{}
	for i := start; i < len(level) && i < start+count; i++ {
		replies := 0
		for _, c := range all {
			if c.Parent == level[i].URN {
				replies++
			}
		}
		elements = append(elements, linkedinCommentJSON(p, level[i], replies))
	}
	writeLinkedInJSON(w, http.StatusOK, map[string]any{
		"paging":   map[string]any{"start": start, "count": count, "total": len(level), "links": []any{}},
		"elements": elements,
	})
}

// linkedinCommentJSON is a comment as the Comments API shows it.
func linkedinCommentJSON(p linkedinPost, c linkedinComment, replies int) map[string]any {
	stamp := map[string]any{"actor": c.Actor, "time": c.At.UnixMilli()}
	out := map[string]any{
		"actor": c.Actor, "id": c.ID, "commentUrn": c.URN, "$URN": c.URN, "object": p.Activity,
		"message":      map[string]any{"text": c.Text, "attributes": []any{}},
		"created":      stamp,
		"lastModified": stamp,
		"likesSummary": map[string]any{"selectedLikes": []any{}, "aggregatedTotalLikes": 0, "likedByCurrentUser": false, "totalLikes": 0},
	}
	if c.Parent != "" {
		out["parentComment"] = c.Parent
	} else {
		out["commentsSummary"] = map[string]any{"selectedComments": []any{}, "aggregatedTotalComments": replies, "totalFirstLevelComments": replies}
	}
	return out
}

type linkedinCommentRequest struct {
	Actor   string `json:"actor"`
	Object  string `json:"object"`
	Message *struct {
		Text string `json:"text"`
	} `json:"message"`
	ParentComment string `json:"parentComment"`
}

func (l *Sim) createComment(w http.ResponseWriter, r *http.Request, acc sim.Account, version, key string) {
	var req linkedinCommentRequest
	if !decodeLinkedInJSON(w, r, &req) {
		return
	}
	switch {
	case req.Actor == "" || req.Object == "" || req.Message == nil || req.Message.Text == "":
		linkedinInputError(w, http.StatusUnprocessableEntity, "MISSING_FIELD", "Field is required",
			"actor, object and message.text are required")
		return
	case req.Actor != "urn:li:person:"+acc.ID:
		l.forbidden(w, "socialActions.comments.CREATE."+version+" as "+req.Actor)
		return
	case !linkedinReplyLimit.Check(req.Message.Text):
		linkedinError(w, http.StatusBadRequest, 0, "", fmt.Sprintf(
			"Comment message text length (%d characters) exceeded the maximum allowed (%d characters)",
			linkedinReplyLimit.Count(req.Message.Text), linkedinReplyLimit.Max))
		return
	}
	now := l.cfg.Now()
	ctx := r.Context()
	p, target, ok := l.commentTarget(ctx, w, acc, key, "socialActions.comments.CREATE."+version, now)
	if !ok {
		return
	}
	switch {
	case req.Object != p.URN && req.Object != p.Activity:
		linkedinError(w, http.StatusBadRequest, 0, "", "object "+req.Object+" is not the post "+p.URN+" the comment is on")
		return
	case target == nil && req.ParentComment != "":
		linkedinError(w, http.StatusBadRequest, 0, "", "A comment on a comment is created below that comment: socialActions/{parentComment}/comments")
		return
	case target != nil && req.ParentComment != target.URN:
		linkedinError(w, http.StatusBadRequest, 0, "", "parentComment must be "+target.URN+", the comment in the path")
		return
	case target != nil && target.Parent != "":
		linkedinError(w, http.StatusBadRequest, 0, "", "Comments nest one level deep: "+target.URN+" is itself a reply to "+target.Parent)
		return
	}
	id := sim.RandomDigits(19)
	c := linkedinComment{
		ID: id, URN: linkedinCommentURN(p.Activity, id), Actor: req.Actor, Account: acc.ID,
		Parent: req.ParentComment, Text: req.Message.Text, At: now,
	}
	answered := p.URN
	if target != nil {
		answered = target.URN
	}
	// The comment joins the post's record: what was validated above against the post read
	// outside the transaction holds still, as comments are only ever added.
	err := l.cfg.State.Update(ctx, func(tx sim.Tx) error {
		cur, rec, found, err := sim.LoadTx[linkedinPost](tx, linkedinKey(linkedinPostKind, p.URN))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sim: linkedin post %s is gone", p.URN)
		}
		cur.Comments = append(cur.Comments, c)
		if err := sim.Save(tx, rec, cur); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.LinkedIn, sim.Reply{Account: acc.ID, CommentID: answered, Text: c.Text})
	})
	if err != nil {
		linkedinInternal(w)
		return
	}
	w.Header().Set("X-RestLi-Id", id)
	writeLinkedInJSON(w, http.StatusCreated, linkedinCommentJSON(p, c, 0))
}
