package bluesky

// Figures, comments and replies. Items are the posts' at:// URIs (a destination's ExternalID).
// The reads are AppView methods, asked of the channel's PDS with the session's access token:
// the PDS proxies app.bsky.* to the AppView.
//
//   - Metrics: app.bsky.feed.getPosts?uris=… (at most 25 a call) → likeCount (likes),
//     repostCount + quoteCount (shares), replyCount (comments: direct replies only, as the
//     AppView counts them). Bluesky has no views, impressions, reach, saves or watch time:
//     those stay nil. A post the AppView does not answer (deleted, taken down) is left out.
//   - Comments: app.bsky.feed.getPostThread?uri=&depth=&parentHeight=0, one call; the nested
//     threadViewPosts are flattened, each reply with its parent's URI (none for a reply to the
//     post itself). notFoundPost and blockedPost entries carry no text and are skipped. Own is
//     a reply whose author is the session's DID.
//   - Reply: one getPosts call for the CIDs of the post (the thread's root) and the comment
//     (the parent), then com.atproto.repo.createRecord of an app.bsky.feed.post with
//     reply{root, parent} and the text's facets. The record key is derived from the account,
//     the comment and the text, so a reply repeated after its answer was lost finds the PDS
//     refusing the key, and is found under it (getRecord) instead of being posted twice: the
//     same text to the same comment is one reply.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

var (
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

const (
	// getPostsMax is getPosts's maxLength of uris.
	getPostsMax = 25
	// threadDepth is how many levels of replies a comments read asks for (the lexicon allows
	// up to 1000; conversations under a video rarely nest this deep).
	threadDepth = 50
)

// postView is the part of app.bsky.feed.defs#postView read here.
type postView struct {
	URI    string `json:"uri"`
	CID    string `json:"cid"`
	Author struct {
		DID    string `json:"did"`
		Handle string `json:"handle"`
	} `json:"author"`
	Record      postRecord `json:"record"`
	ReplyCount  *int64     `json:"replyCount"`
	RepostCount *int64     `json:"repostCount"`
	LikeCount   *int64     `json:"likeCount"`
	QuoteCount  *int64     `json:"quoteCount"`
	IndexedAt   string     `json:"indexedAt"`
}

// postRecord is the part of an app.bsky.feed.post record read here.
type postRecord struct {
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"`
	Reply     *struct {
		Root   recordRef `json:"root"`
		Parent recordRef `json:"parent"`
	} `json:"reply"`
}

func (v postView) metrics() provider.Metrics {
	m := provider.Metrics{Likes: v.LikeCount, Comments: v.ReplyCount}
	if v.RepostCount != nil || v.QuoteCount != nil {
		var shares int64
		for _, n := range []*int64{v.RepostCount, v.QuoteCount} {
			if n != nil {
				shares += *n
			}
		}
		m.Shares = &shares
	}
	return m
}

// writtenAt is when the post says it was written, else when the AppView indexed it.
func (v postView) writtenAt() time.Time {
	for _, s := range []string{v.Record.CreatedAt, v.IndexedAt} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// comment converts a post of the item's thread; parent is the URI it answers.
func (v postView) comment(itemID, parent, ownDID string) provider.Comment {
	if parent == itemID {
		parent = ""
	}
	author := v.Author.Handle
	if author == "" || author == "handle.invalid" {
		author = v.Author.DID
	}
	return provider.Comment{ID: v.URI, ParentID: parent, Author: author, Text: v.Record.Text,
		CreatedAt: v.writtenAt(), LikeCount: v.LikeCount, Own: v.Author.DID == ownDID}
}

// open resolves a channel and its session.
func (p *Provider) open(ctx context.Context, ch provider.Channel) (channel, *session, error) {
	c, err := p.channelOf(ch.BaseURL, ch.Credentials)
	if err != nil {
		return c, nil, err
	}
	s, err := p.session(ctx, c)
	return c, s, err
}

// getPosts reads the posts of up to getPostsMax URIs.
func (p *Provider) getPosts(ctx context.Context, c channel, s *session, uris []string) ([]postView, error) {
	var out struct {
		Posts []postView `json:"posts"`
	}
	err := p.authed(ctx, c, s, request{method: http.MethodGet, base: c.pds, nsid: nsidGetPosts, query: url.Values{"uris": uris}}, &out)
	if err != nil {
		return nil, classifyXRPC(err, provider.CategoryInvalidOptions)
	}
	return out.Posts, nil
}

// Metrics implements provider.MetricsSource. Ids that are not at:// URIs have no figures.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	out := map[string]provider.Metrics{}
	var uris []string
	seen := map[string]bool{}
	for _, id := range itemIDs {
		if strings.HasPrefix(id, "at://") && !seen[id] {
			seen[id] = true
			uris = append(uris, id)
		}
	}
	if len(uris) == 0 {
		return out, nil
	}
	c, s, err := p.open(ctx, ch)
	if err != nil {
		return out, err
	}
	for start := 0; start < len(uris); start += getPostsMax {
		posts, err := p.getPosts(ctx, c, s, uris[start:min(start+getPostsMax, len(uris))])
		if err != nil {
			return out, err
		}
		for _, v := range posts {
			out[v.URI] = v.metrics()
		}
	}
	return out, nil
}

// threadNode is app.bsky.feed.defs#threadViewPost, or a notFoundPost or blockedPost (which
// have no post).
type threadNode struct {
	Type    string       `json:"$type"`
	Post    *postView    `json:"post"`
	Replies []threadNode `json:"replies"`
}

const typeThreadViewPost = "app.bsky.feed.defs#threadViewPost"

// Comments implements provider.CommentSource.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	c, s, err := p.open(ctx, ch)
	if err != nil {
		return nil, err
	}
	var out struct {
		Thread threadNode `json:"thread"`
	}
	q := url.Values{"uri": {itemID}, "depth": {strconv.Itoa(threadDepth)}, "parentHeight": {"0"}}
	if err := p.authed(ctx, c, s, request{method: http.MethodGet, base: c.pds, nsid: nsidGetPostThread, query: q}, &out); err != nil {
		return nil, classifyXRPC(err, provider.CategoryInvalidOptions)
	}
	if out.Thread.Type != typeThreadViewPost || out.Thread.Post == nil {
		return nil, provider.Permanent(provider.CategoryInvalidOptions, http.StatusOK,
			"the Bluesky post %s cannot be read (%s)", itemID, out.Thread.Type)
	}
	did, _ := s.identity()
	var comments []provider.Comment
	var walk func(parent string, replies []threadNode)
	walk = func(parent string, replies []threadNode) {
		for _, r := range replies {
			if r.Type != typeThreadViewPost || r.Post == nil {
				continue
			}
			comments = append(comments, r.Post.comment(itemID, parent, did))
			walk(r.Post.URI, r.Replies)
		}
	}
	walk(itemID, out.Thread.Replies)
	return comments, nil
}

// Reply implements provider.CommentSource.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	if err := checkText(text); err != nil {
		return provider.Comment{}, err
	}
	c, s, err := p.open(ctx, ch)
	if err != nil {
		return provider.Comment{}, err
	}
	root, parent, err := p.replyRefs(ctx, c, s, itemID, to.ID)
	if err != nil {
		return provider.Comment{}, err
	}
	did, handle := s.identity()
	now := p.cfg.Now().UTC()
	rec := map[string]any{
		"$type": PostCollection, "text": text, "createdAt": now.Format("2006-01-02T15:04:05.000Z"),
		"reply": map[string]recordRef{"root": {URI: root.URI, CID: root.CID}, "parent": {URI: parent.URI, CID: parent.CID}},
	}
	if f := Facets(text); len(f) > 0 {
		rec["facets"] = f
	}
	rkey := replyKey(did, parent, text)
	var ref recordRef
	err = p.authed(ctx, c, s, request{method: http.MethodPost, base: c.pds, nsid: nsidCreateRecord, json: map[string]any{
		"repo": did, "collection": PostCollection, "rkey": rkey, "record": rec,
	}}, &ref)
	reply := provider.Comment{ID: ref.URI, ParentID: parent.URI, Author: handle, Text: text, CreatedAt: now, Own: true}
	if parent.URI == itemID {
		reply.ParentID = ""
	}
	if err == nil && ref.URI != "" {
		return reply, nil
	}
	perr := classifyXRPC(err, provider.CategoryInvalidOptions)
	if err == nil {
		perr = provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0, "Bluesky createRecord answered without a uri")
	}
	if perr.Category == provider.CategoryAuthExpired || perr.Category == provider.CategoryRateLimited {
		return provider.Comment{}, perr
	}
	// The create failed, or an earlier one made the record and the PDS refuses the key.
	found, err := p.findReply(ctx, c, did, rkey, parent.URI, text)
	switch {
	case err != nil && perr.Transient:
		return provider.Comment{}, perr
	case err != nil:
		return provider.Comment{}, err
	case found == nil:
		return provider.Comment{}, perr
	}
	reply.ID = found.uri
	if t, err := time.Parse(time.RFC3339Nano, found.createdAt); err == nil {
		reply.CreatedAt = t
	}
	return reply, nil
}

// replyRefs reads the post (the thread's root) and the comment answered (the parent).
func (p *Provider) replyRefs(ctx context.Context, c channel, s *session, itemID, commentID string) (root, parent postView, err error) {
	uris := []string{itemID}
	if commentID != itemID {
		uris = append(uris, commentID)
	}
	for _, u := range uris {
		if !strings.HasPrefix(u, "at://") {
			return root, parent, provider.Permanent(provider.CategoryInvalidOptions, 0, "%q is not a Bluesky post URI (at://…)", u)
		}
	}
	posts, err := p.getPosts(ctx, c, s, uris)
	if err != nil {
		return root, parent, err
	}
	byURI := map[string]postView{}
	for _, v := range posts {
		byURI[v.URI] = v
	}
	root, ok := byURI[itemID]
	if !ok {
		return root, parent, provider.Permanent(provider.CategoryInvalidOptions, 0, "the Bluesky post %s is not there any more", itemID)
	}
	parent, ok = byURI[commentID]
	if !ok {
		return root, parent, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Bluesky comment %s is not there any more (deleted, or by an account that blocks this one)", commentID)
	}
	if r := parent.Record.Reply; commentID != itemID && (r == nil || r.Root.URI != itemID) {
		return root, parent, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Bluesky post %s is not a reply in the thread of %s", commentID, itemID)
	}
	return root, parent, nil
}

// replyKey is the record key of the reply text to parent by did: a TID a little after the
// parent was written, both its time offset (under a second) and its clock identifier drawn
// from a hash of the three, so that the same reply always has the same key.
func replyKey(did string, parent postView, text string) string {
	h := sha256.Sum256([]byte(did + "\n" + parent.URI + "\n" + text))
	v := binary.BigEndian.Uint64(h[:8])
	at := parent.writtenAt()
	if at.IsZero() {
		at = time.Unix(0, 0)
	}
	return tidOf(at.Add(time.Duration((v>>10)%1_000_000)*time.Microsecond), v)
}

type foundReply struct {
	uri, createdAt string
}

// findReply reads the record under rkey: nil when there is none; an error when it is there
// but is not this reply.
func (p *Provider) findReply(ctx context.Context, c channel, did, rkey, parentURI, text string) (*foundReply, error) {
	var out struct {
		URI   string     `json:"uri"`
		Value postRecord `json:"value"`
	}
	q := url.Values{"repo": {did}, "collection": {PostCollection}, "rkey": {rkey}}
	err := p.do(ctx, request{method: http.MethodGet, base: c.pds, nsid: nsidGetRecord, query: q}, &out)
	var xe *xrpcError
	if err != nil && errors.As(err, &xe) && (xe.Name == "RecordNotFound" || xe.Status == http.StatusNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classifyXRPC(err, provider.CategoryInternal)
	}
	if r := out.Value.Reply; out.Value.Text != text || r == nil || r.Parent.URI != parentURI {
		return nil, provider.Permanent(provider.CategoryInternal, 0,
			"another record already holds Bluesky record key %s of %s; the reply was not created", rkey, did)
	}
	return &foundReply{uri: out.URI, createdAt: out.Value.CreatedAt}, nil
}
