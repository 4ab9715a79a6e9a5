package mastodon

// Figures, comments and replies. Items are status ids on the channel's instance (a
// destination's ExternalID). Every call carries the channel's token, so that unlisted and
// private statuses can be read and the context is not cut to what anyone may see.
//
//   - Metrics: favourites_count (likes), reblogs_count plus quotes_count where the instance
//     gives it (Mastodon 4.5; shares), replies_count (comments: direct replies only, as
//     Mastodon counts them). Mastodon has no views, impressions, reach, saves or watch time:
//     those stay nil. An instance of Mastodon 4.3 or later (GET /api/v2/instance's version)
//     is asked for 20 statuses a call with GET /api/v1/statuses?id[]=; older ones, and other
//     server software reporting an older compatible version, one GET /api/v1/statuses/:id per
//     item. A status the instance does not answer (deleted, or not visible) is left out.
//   - Comments: GET /api/v1/statuses/:id/context, one call: its descendants, each with its
//     in_reply_to_id as parent (none for a reply to the item). content is HTML: it becomes
//     plain text (paragraphs apart by a blank line, line breaks kept, tags dropped, links'
//     full URLs kept, entities decoded); a content warning comes first, on a paragraph of its
//     own. Author is the account's acct (user, or user@domain for other servers). Own is a
//     status of the channel's account (the id in the channel's external id, "{host}:{id}").
//   - Reply: POST /api/v1/statuses {status, in_reply_to_id} with an Idempotency-Key derived
//     from the item, the comment and the text, so a reply repeated within the hour Mastodon
//     keeps keys (its answer lost, say) is the same status. As Mastodon's own clients do, the
//     reply begins with a mention of the comment's author (@user@domain), unless the text
//     already mentions them or the comment is the channel's own: without it the commenter is
//     not notified. The mention counts toward the instance's max_characters as @user, and the
//     whole is checked against it before anything is sent. The visibility is the account's
//     default.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

var (
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// statusesBatch is how many ids GET /api/v1/statuses takes (DEFAULT_STATUSES_LIMIT).
const statusesBatch = 20

// statusView is the part of a Status read for figures and comments.
type statusView struct {
	ID              string  `json:"id"`
	InReplyToID     *string `json:"in_reply_to_id"`
	CreatedAt       string  `json:"created_at"`
	Content         string  `json:"content"`
	SpoilerText     string  `json:"spoiler_text"`
	Account         account `json:"account"`
	RepliesCount    *int64  `json:"replies_count"`
	ReblogsCount    *int64  `json:"reblogs_count"`
	FavouritesCount *int64  `json:"favourites_count"`
	QuotesCount     *int64  `json:"quotes_count"`
}

func (s statusView) metrics() provider.Metrics {
	m := provider.Metrics{Likes: s.FavouritesCount, Comments: s.RepliesCount, Shares: s.ReblogsCount}
	if s.QuotesCount != nil {
		shares := *s.QuotesCount
		if s.ReblogsCount != nil {
			shares += *s.ReblogsCount
		}
		m.Shares = &shares
	}
	return m
}

// comment converts a status of the item's conversation.
func (s statusView) comment(itemID, ownID string) provider.Comment {
	c := provider.Comment{ID: s.ID, Author: s.Account.Acct, Text: plainText(s.Content), LikeCount: s.FavouritesCount,
		Own: ownID != "" && s.Account.ID == ownID}
	if s.SpoilerText != "" {
		c.Text = strings.TrimSpace(s.SpoilerText + "\n\n" + c.Text)
	}
	if s.InReplyToID != nil && *s.InReplyToID != itemID {
		c.ParentID = *s.InReplyToID
	}
	if t, err := time.Parse(time.RFC3339Nano, s.CreatedAt); err == nil {
		c.CreatedAt = t
	}
	return c
}

// Metrics implements provider.MetricsSource.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	out := map[string]provider.Metrics{}
	var ids []string
	seen := map[string]bool{}
	for _, id := range itemIDs {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return out, err
	}
	inst, err := c.instance(ctx)
	if err != nil {
		return out, classify(err, "")
	}
	if !atLeast(inst.Version, 4, 3) {
		for _, id := range ids {
			var s statusView
			_, err := c.callJSON(ctx, http.MethodGet, pathStatuses+"/"+url.PathEscape(id), nil, nil, &s)
			var ae *apiError
			switch {
			case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
			case err != nil:
				return out, classify(err, "")
			default:
				out[s.ID] = s.metrics()
			}
		}
		return out, nil
	}
	for start := 0; start < len(ids); start += statusesBatch {
		q := url.Values{"id[]": ids[start:min(start+statusesBatch, len(ids))]}
		var list []statusView
		if _, err := c.callJSON(ctx, http.MethodGet, pathStatuses+"?"+q.Encode(), nil, nil, &list); err != nil {
			return out, classify(err, "")
		}
		for _, s := range list {
			out[s.ID] = s.metrics()
		}
	}
	return out, nil
}

// atLeast reports whether an instance's version (e.g. "4.3.0", "4.4.0-beta.1+glitch", or
// "2.7.2 (compatible; Pleroma 2.6.1)") is major.minor or later.
func atLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimSpace(version), ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(leadingDigits(parts[1]))
	if err1 != nil || err2 != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// ownAccountID is the channel's account id on its instance: the part of its external id
// after the host ("{host}:{id}", as Identify names it; a sandbox channel's is the bare id),
// else what verify_credentials answers.
func (c *client) ownAccountID(ctx context.Context, external string) (string, error) {
	if i := strings.LastIndexByte(external, ':'); i >= 0 {
		external = external[i+1:]
	}
	if external != "" {
		return external, nil
	}
	a, err := c.verifyCredentials(ctx)
	if err != nil {
		return "", classify(err, "")
	}
	return a.ID, nil
}

// refusedRead turns a 404 about a status into a permanent invalid_options error (deleted,
// or not visible to the channel's account), and classifies any other failure.
func refusedRead(err error, what string) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return provider.Permanent(provider.CategoryInvalidOptions, ae.Status, "%s: %s is not there, or not visible to this account", ae.Error(), what)
	}
	return classify(err, provider.CategoryInvalidOptions)
}

// Comments implements provider.CommentSource.
func (p *Provider) Comments(ctx context.Context, ch provider.Channel, itemID string) ([]provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	own, err := c.ownAccountID(ctx, ch.Account)
	if err != nil {
		return nil, err
	}
	var conv struct {
		Descendants []statusView `json:"descendants"`
	}
	if _, err := c.callJSON(ctx, http.MethodGet, pathStatuses+"/"+url.PathEscape(itemID)+"/context", nil, nil, &conv); err != nil {
		return nil, refusedRead(err, "status "+itemID)
	}
	comments := make([]provider.Comment, 0, len(conv.Descendants))
	for _, s := range conv.Descendants {
		comments = append(comments, s.comment(itemID, own))
	}
	return comments, nil
}

// Reply implements provider.CommentSource.
func (p *Provider) Reply(ctx context.Context, ch provider.Channel, itemID string, to provider.Comment, text string) (provider.Comment, error) {
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err != nil {
		return provider.Comment{}, err
	}
	if strings.TrimSpace(text) == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "the reply is empty")
	}
	inst, err := c.instance(ctx)
	if err != nil {
		return provider.Comment{}, classify(err, "")
	}
	status := withMention(to, text)
	if n := platform.MastodonLength(status, "", inst.CharactersReservedPerURL); n > inst.MaxCharacters {
		return provider.Comment{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the reply is %d characters as %s counts them (with the mention of its author, each link as %d); %s allows at most %d",
			n, c.host, inst.CharactersReservedPerURL, c.host, inst.MaxCharacters)
	}
	sum := sha256.Sum256([]byte(itemID + "\n" + to.ID + "\n" + text))
	hdr := http.Header{"Idempotency-Key": {"reelay-reply-" + hex.EncodeToString(sum[:16])}}
	var s statusView
	req := map[string]string{"status": status, "in_reply_to_id": to.ID}
	if _, err := c.callJSON(ctx, http.MethodPost, pathStatuses, hdr, req, &s); err != nil {
		return provider.Comment{}, refusedRead(err, "status "+to.ID)
	}
	if s.ID == "" {
		return provider.Comment{}, provider.Permanent(provider.CategoryInternal, http.StatusOK, "%s answered the reply without a status id", c.host)
	}
	reply := s.comment(itemID, "")
	reply.Own = true // posted with the channel's token
	return reply, nil
}

// withMention begins a reply with a mention of the comment's author, as Mastodon's clients
// do, unless it is the channel's own comment or the text mentions them already.
func withMention(to provider.Comment, text string) string {
	acct := strings.TrimPrefix(to.Author, "@")
	if to.Own || acct == "" {
		return text
	}
	mentioned := regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}_/@])@` + regexp.QuoteMeta(acct) + `($|[^\p{L}\p{N}_@.-]|\.($|\s))`)
	if mentioned.MatchString(text) {
		return text
	}
	return "@" + acct + " " + text
}

var spaceRuns = regexp.MustCompile(`\n{3,}`)

// plainText turns a status's HTML content into text: paragraphs (and block elements) apart
// by a blank line, <br> a line break, tags dropped (a link keeps all its text, so the parts
// of a URL Mastodon hides come back), entities decoded.
func plainText(content string) string {
	var b strings.Builder
	for content != "" {
		i := strings.IndexByte(content, '<')
		if i < 0 {
			b.WriteString(html.UnescapeString(content))
			break
		}
		b.WriteString(html.UnescapeString(content[:i]))
		j := strings.IndexByte(content[i:], '>')
		if j < 0 {
			break // a tag cut off: nothing after it is text
		}
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(content[i+1:i+j])), " ")
		switch strings.TrimSuffix(name, "/") {
		case "br":
			b.WriteString("\n")
		case "/p", "/blockquote", "/pre", "/ul", "/ol", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6":
			b.WriteString("\n\n")
		case "/li":
			b.WriteString("\n")
		}
		content = content[i+j+1:]
	}
	return strings.TrimSpace(spaceRuns.ReplaceAllString(b.String(), "\n\n"))
}
