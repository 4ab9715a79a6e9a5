package blueskysim

// Bluesky's audience: the figures and threads of posts, as the AppView answers
// app.bsky.feed.getPosts and app.bsky.feed.getPostThread through the account's PDS (which
// proxies app.bsky.* reads to the AppView), and replies, which are post records with a reply
// reference (see createRecord).
//
// Sources: the lexicons app.bsky.feed.getPosts (uris, at most 25), app.bsky.feed.getPostThread
// (uri, depth 0–1000 default 6, parentHeight 0–1000 default 80), app.bsky.feed.defs (postView,
// threadViewPost, notFoundPost, blockedPost) and app.bsky.feed.post#replyRef; the AppView's
// answers in bluesky-social/atproto issues and pull requests (#2164, #2201, #2498: replies
// nest as threadViewPosts; an unknown post is 400 NotFound "Post not found: {uri}") and in
// client issues ("Error: uris must not have more than 25 elements"); social-app #2735
// (replyCount counts direct replies only). All read through the search tool.
//
//   - Figures of an item (a post that answers none) come from AudienceOf at the simulator's
//     clock since the post was created: likeCount = Likes, repostCount + quoteCount = Shares
//     (a quarter of them quotes), replyCount = its direct replies (its audience comments and
//     any reply of an account to the post itself; replies to comments count on the comment,
//     as the AppView counts). Bluesky has no views or impressions.
//   - Audience comments (AudienceComments) are replies to the item by accounts of their own
//     (AudienceHandle, a did:plc: of the author), under a TID of the comment's time, so
//     each keeps its URI and CID on every read (AudienceURI). Their likeCount is N % 3.
//   - getPosts answers the posts it knows, in the order asked, and leaves out the others;
//     getPostThread nests replies (oldest first) down to depth and parents up to parentHeight.
//     Posts of every account can be read, as on the public network; an unknown post is
//     NotFound. Both need the session's access token (the PDS's proxying does) and meet the
//     account's call faults.
//
// Not reproduced: viewer state, labels, threadgates, hidden or detached replies, blocks and
// mutes (no notFoundPost or blockedPost is ever answered), thread sorting preferences.

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
)

// bskyGetPostsMax is getPosts's maxLength of uris.
const bskyGetPostsMax = 25

// AudienceHandle is the handle of an audience member (AudienceComment.Author): handles
// allow no underscore, so it becomes a hyphen, under a reserved-looking domain.
func AudienceHandle(author string) string {
	return strings.ToLower(strings.ReplaceAll(author, "_", "-")) + ".audience.bsky.test"
}

// bskyAudienceDID is the DID of an audience member.
func bskyAudienceDID(author string) string {
	h := sha256.Sum256([]byte("reelay-sim-bluesky-audience|" + author))
	return "did:plc:" + strings.ToLower(base32.StdEncoding.EncodeToString(h[:]))[:24]
}

// AudienceURI is the at:// URI of audience comment c on the post itemURI: a record in
// the commenter's repository under a TID of the comment's time, whose clock identifier comes
// from the post and the comment's number.
func AudienceURI(itemURI string, c sim.AudienceComment) string {
	h := fnv.New64a()
	h.Write([]byte(itemURI + "|" + strconv.Itoa(c.N)))
	return "at://" + bskyAudienceDID(c.Author) + "/app.bsky.feed.post/" + bskyTIDAt(c.At, h.Sum64())
}

// bskyAudienceDIDs are the DIDs of the audience's accounts, whose posts are drawn, not stored.
var bskyAudienceDIDs = func() map[string]bool {
	out := map[string]bool{}
	for _, a := range sim.AudienceAuthors {
		out[bskyAudienceDID(a)] = true
	}
	return out
}()

// bskyNode is a post as the AppView sees it: a record of an account, or an audience comment.
type bskyNode struct {
	uri, cid     string
	did, handle  string
	displayName  string
	record       json.RawMessage
	at           time.Time
	parent, root string // "" for a post that answers none
	// item is set for a record that answers none: it has an audience.
	item *bskyPost
	// comment is set for an audience comment.
	comment *sim.AudienceComment
}

func (b *Sim) recordNode(p *bskyPost) bskyNode {
	n := bskyNode{uri: p.URI, cid: p.CID, did: DID(p.Account), handle: sandboxtoken.BlueskyHandle(p.Account),
		displayName: b.profile(p.author()).DisplayName, record: p.Record, at: p.At, parent: p.ReplyParent, root: p.ReplyRoot}
	if p.ReplyParent == "" {
		n.item = p
	}
	return n
}

func audienceNode(item *bskyPost, c sim.AudienceComment) bskyNode {
	uri := AudienceURI(item.URI, c)
	ref := map[string]string{"uri": item.URI, "cid": item.CID}
	rec, _ := json.Marshal(map[string]any{
		"$type": "app.bsky.feed.post", "text": c.Text, "createdAt": c.At.UTC().Format("2006-01-02T15:04:05.000Z"),
		"langs": []string{"en"}, "reply": map[string]any{"root": ref, "parent": ref},
	})
	sum := sha256.Sum256(rec)
	return bskyNode{uri: uri, cid: bskyCID(0x71, hex.EncodeToString(sum[:])), did: bskyAudienceDID(c.Author),
		handle: AudienceHandle(c.Author), displayName: c.Author, record: rec, at: c.At,
		parent: item.URI, root: item.URI, comment: &c}
}

// bskyView reads from the State what one answer needs, each record once, at one clock. The
// first failure of the State is kept in err; what was read after it is incomplete, and the
// answer is then the internal error (bskyInternal).
type bskyView struct {
	b   *Sim
	ctx context.Context
	now time.Time
	// posts are the records read, nil for a URI not found; replies the URIs answering a post.
	posts   map[string]*bskyPost
	replies map[string][]string
	// items are every account's records that answer none, read once for an audience comment.
	items     []*bskyPost
	itemsRead bool
	err       error
}

func (b *Sim) view(ctx context.Context, now time.Time) *bskyView {
	return &bskyView{b: b, ctx: ctx, now: now, posts: map[string]*bskyPost{}, replies: map[string][]string{}}
}

func (v *bskyView) fail(err error) {
	if v.err == nil {
		v.err = err
	}
}

// node finds a post by URI: a record, or an audience comment of an item.
func (v *bskyView) node(uri string) (bskyNode, bool) {
	did, _, _ := strings.Cut(strings.TrimPrefix(uri, "at://"), "/")
	if bskyAudienceDIDs[did] {
		return v.audienceComment(uri)
	}
	p, ok := v.posts[uri]
	if !ok {
		rec, _, found, err := sim.Load[bskyPost](v.ctx, v.b.cfg.State, bskyKey(bskyPostKind, uri))
		if err != nil {
			v.fail(err)
		} else if found {
			p = &rec
		}
		v.posts[uri] = p
	}
	if p == nil {
		return bskyNode{}, false
	}
	return v.b.recordNode(p), true
}

// audienceComment finds the audience comment with uri among every item's (they are drawn, not
// stored: the items are read to draw them).
func (v *bskyView) audienceComment(uri string) (bskyNode, bool) {
	if !v.itemsRead {
		v.itemsRead = true
		all, err := sim.ListJSON[bskyPost](v.ctx, v.b.cfg.State, bskyKey(bskyPostKind, ""), "")
		if err != nil {
			v.fail(err)
			return bskyNode{}, false
		}
		for i := range all {
			if all[i].ReplyParent == "" {
				v.items = append(v.items, &all[i])
			}
		}
	}
	for _, p := range v.items {
		for _, c := range sim.AudienceComments(p.URI, p.At, v.now) {
			if AudienceURI(p.URI, c) == uri {
				return audienceNode(p, c), true
			}
		}
	}
	return bskyNode{}, false
}

// children lists the direct replies of a post, oldest first.
func (v *bskyView) children(n bskyNode) []bskyNode {
	var out []bskyNode
	if n.item != nil {
		for _, c := range sim.AudienceComments(n.item.URI, n.item.At, v.now) {
			out = append(out, audienceNode(n.item, c))
		}
	}
	replies, ok := v.replies[n.uri]
	if !ok {
		var err error
		if replies, _, _, err = sim.Load[[]string](v.ctx, v.b.cfg.State, bskyKey(bskyRepliesKind, n.uri)); err != nil {
			v.fail(err)
		}
		v.replies[n.uri] = replies
	}
	for _, uri := range replies {
		if c, ok := v.node(uri); ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(x, y bskyNode) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return strings.Compare(x.uri, y.uri)
	})
	return out
}

// postView renders app.bsky.feed.defs#postView.
func (v *bskyView) postView(n bskyNode) map[string]any {
	var likes, reposts, quotes int64
	switch {
	case n.item != nil:
		a := sim.AudienceOf(n.item.URI, n.item.At, v.now)
		quotes = a.Shares / 4
		likes, reposts = a.Likes, a.Shares-quotes
	case n.comment != nil:
		likes = int64(n.comment.N % 3)
	}
	view := map[string]any{
		"uri": n.uri, "cid": n.cid,
		"author": map[string]any{"did": n.did, "handle": n.handle, "displayName": n.displayName,
			"labels": []any{}, "createdAt": "2024-01-01T00:00:00.000Z"},
		"record":     n.record,
		"replyCount": len(v.children(n)), "repostCount": reposts, "likeCount": likes, "quoteCount": quotes,
		"indexedAt": n.at.UTC().Format("2006-01-02T15:04:05.000Z"), "labels": []any{},
	}
	if n.item != nil && n.item.SHA256 != "" {
		blob := bskyCID(0x55, n.item.SHA256)
		view["embed"] = map[string]any{"$type": "app.bsky.embed.video#view", "cid": blob,
			"playlist":  "https://video.bsky.app/watch/" + url.PathEscape(n.did) + "/" + blob + "/playlist.m3u8",
			"thumbnail": "https://video.bsky.app/watch/" + url.PathEscape(n.did) + "/" + blob + "/thumbnail.jpg"}
	}
	return view
}

// thread renders n as a threadViewPost with its replies down to depth levels and its parents
// up to height levels.
func (v *bskyView) thread(n bskyNode, depth, height int) map[string]any {
	t := map[string]any{"$type": "app.bsky.feed.defs#threadViewPost", "post": v.postView(n)}
	if height > 0 && n.parent != "" {
		if p, ok := v.node(n.parent); ok {
			t["parent"] = v.thread(p, 0, height-1)
		} else {
			t["parent"] = map[string]any{"$type": "app.bsky.feed.defs#notFoundPost", "uri": n.parent, "notFound": true}
		}
	}
	if depth > 0 {
		replies := []any{}
		for _, c := range v.children(n) {
			replies = append(replies, v.thread(c, depth-1, 0))
		}
		t["replies"] = replies
	}
	return t
}

// checkReply checks that a reply's root and parent are posts the simulator knows, with their
// current CIDs, and that the parent is in the root's thread; it returns the message after
// "Invalid app.bsky.feed.post record: ", or "". Stricter than the live PDS, which stores any
// reply and leaves the AppView to show it detached: a reply to nothing is a client bug a test
// should see.
func (v *bskyView) checkReply(r bskyReplyIn) string {
	if msg := checkReplyRef(r); msg != "" {
		return msg
	}
	parent, ok := v.node(r.Parent.URI)
	if !ok {
		return "Record/reply/parent " + r.Parent.URI + " is no post this simulator knows"
	}
	if parent.cid != r.Parent.CID {
		return "Record/reply/parent/cid is not the post's cid " + parent.cid
	}
	root := parent.root
	if root == "" {
		root = parent.uri
	}
	rootNode, ok := v.node(root)
	switch {
	case r.Root.URI != root:
		return "Record/reply/root must be the root of the parent's thread, " + root
	case !ok || rootNode.cid != r.Root.CID:
		return "Record/reply/root/cid is not the root post's cid"
	}
	return ""
}

// xrpcParamsError answers a parameter the lexicon refuses, in the AppView's wording.
func xrpcParamsError(w http.ResponseWriter, msg string) {
	bskyError(w, http.StatusBadRequest, "InvalidRequest", "Error: "+msg)
}

// getPosts serves app.bsky.feed.getPosts.
func (b *Sim) getPosts(w http.ResponseWriter, r *http.Request) {
	if _, ok := b.auth(w, r); !ok {
		return
	}
	uris := r.URL.Query()["uris"]
	switch {
	case len(uris) == 0:
		xrpcParamsError(w, `Params must have the property "uris"`)
		return
	case len(uris) > bskyGetPostsMax:
		xrpcParamsError(w, fmt.Sprintf("uris must not have more than %d elements", bskyGetPostsMax))
		return
	}
	for i, u := range uris {
		if !strings.HasPrefix(u, "at://") {
			xrpcParamsError(w, fmt.Sprintf("uris/%d must be a valid at-uri", i))
			return
		}
	}
	v := b.view(r.Context(), b.cfg.Now())
	posts := []any{}
	for i, u := range uris {
		if slices.Contains(uris[:i], u) {
			continue
		}
		if n, ok := v.node(u); ok {
			posts = append(posts, v.postView(n))
		}
	}
	if v.err != nil {
		bskyInternal(w)
		return
	}
	bskyJSON(w, http.StatusOK, map[string]any{"posts": posts})
}

// intParam reads an integer parameter within [0, 1000], or def when absent; it answers and
// reports false when the value is refused.
func intParam(w http.ResponseWriter, q url.Values, name string, def int) (int, bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		xrpcParamsError(w, name+" must be an integer")
	case n < 0:
		xrpcParamsError(w, name+" can not be less than 0")
	case n > 1000:
		xrpcParamsError(w, name+" can not be greater than 1000")
	default:
		return n, true
	}
	return 0, false
}

// getPostThread serves app.bsky.feed.getPostThread.
func (b *Sim) getPostThread(w http.ResponseWriter, r *http.Request) {
	if _, ok := b.auth(w, r); !ok {
		return
	}
	q := r.URL.Query()
	uri := q.Get("uri")
	switch {
	case uri == "":
		xrpcParamsError(w, `Params must have the property "uri"`)
		return
	case !strings.HasPrefix(uri, "at://"):
		xrpcParamsError(w, "uri must be a valid at-uri")
		return
	}
	depth, ok := intParam(w, q, "depth", 6)
	if !ok {
		return
	}
	height, ok := intParam(w, q, "parentHeight", 80)
	if !ok {
		return
	}
	v := b.view(r.Context(), b.cfg.Now())
	n, found := v.node(uri)
	var thread map[string]any
	if found {
		thread = v.thread(n, depth, height)
	}
	if v.err != nil {
		bskyInternal(w)
		return
	}
	if !found {
		bskyError(w, http.StatusBadRequest, "NotFound", "Post not found: "+uri)
		return
	}
	bskyJSON(w, http.StatusOK, map[string]any{"thread": thread})
}
