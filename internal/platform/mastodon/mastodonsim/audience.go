package mastodonsim

// Mastodon's audience: the figures of statuses, their conversations and replies to them.
//
// Sources: docs.joinmastodon.org methods/statuses (GET /api/v1/statuses/:id, GET
// /api/v1/statuses?id[]= "added in 4.3.0", GET /api/v1/statuses/:id/context), entities/Status
// and entities/Context; Mastodon's app/controllers/api/v1/statuses_controller.rb (the context
// limits: 40 ancestors, 60 descendants and a depth of 20 without a token, 4,096 with one;
// more than DEFAULT_STATUSES_LIMIT = 20 ids is a Mastodon::ValidationError, 422; a reply to a
// status that cannot be found or seen is 404 "The post you are trying to reply to does not
// appear to exist.") and app/lib/text_formatter.rb (how content renders links and mentions);
// status_stat counters, which count a status's direct replies. All read through the search
// tool.
//
//   - An item is a status that answers none. Its favourites_count and reblogs_count are
//     AudienceOf's Likes and Shares at the simulator's clock since it was created; its
//     replies_count is its direct replies: the audience comments, plus any status answering
//     the item itself (a reply to a comment counts on the comment, as Mastodon counts).
//     Mastodon has no views or impressions.
//   - Audience comments (AudienceComments) are public statuses of remote accounts on
//     AudienceDomain answering the item, with ids like the instance's own (the
//     comment's time in the high bits, AudienceID) so that each keeps its id on every
//     read. Their favourites_count is N % 3.
//   - The context's descendants are in depth-first order, each level oldest first; only what
//     the caller may see. The three reads are public, with an optional token: with one, the
//     account's call faults and the per-token throttle apply.
//   - content is HTML as Mastodon renders it: paragraphs, <br />, links split into invisible
//     and visible spans, mentions of accounts the instance knows (its own that have called it,
//     and the audience) as h-card links showing @username only.
//
// Not reproduced: statuses of other servers beyond the audience, edits, quotes and
// quotes_count (Mastodon 4.5), filtered or muted statuses, reblogs of the account's statuses.

import (
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// AudienceDomain is the server of the audience's accounts.
const AudienceDomain = "audience.example"

// Limits of GET /api/v1/statuses and of the context (statuses_controller.rb).
const (
	mastodonStatusesLimit       = 20
	mastodonContextLimit        = 4096
	mastodonAnonAncestorsLimit  = 40
	mastodonAnonDescendants     = 60
	mastodonAnonDescendantDepth = 20
)

// mastodonAudienceUsername turns an audience author into a username (letters, digits and
// underscores only).
func mastodonAudienceUsername(author string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, strings.ToLower(author))
}

// AudienceAcct is the acct (user@domain) of an audience member (AudienceComment.Author).
func AudienceAcct(author string) string {
	return mastodonAudienceUsername(author) + "@" + AudienceDomain
}

func mastodonAudienceAccountID(author string) string {
	h := fnv.New64a()
	h.Write([]byte("reelay-sim-mastodon-audience|" + author))
	return fmt.Sprintf("11%016d", h.Sum64()%1e16)
}

// AudienceID is the id of audience comment c on the status itemID: the comment's
// time in milliseconds in the high bits, as Mastodon's ids are made, and a number drawn from
// the item and the comment's N in the low 16 (with the top one set, which the instance's own
// statuses leave clear).
func AudienceID(itemID string, c sim.AudienceComment) string {
	h := fnv.New64a()
	h.Write([]byte(itemID + "|" + strconv.Itoa(c.N)))
	return strconv.FormatInt(c.At.UnixMilli()<<16|0x8000|int64(h.Sum64()&0x7fff), 10)
}

// audienceStatus is audience comment c on item as a status.
func (m *Sim) audienceStatus(item *mastodonStatus, c sim.AudienceComment) *mastodonStatus {
	user := mastodonAudienceUsername(c.Author)
	id := AudienceID(item.ID, c)
	base := "https://" + AudienceDomain
	return &mastodonStatus{Username: user, audience: &c, Status: Status{
		ID: id, Account: mastodonAudienceAccountID(c.Author), InReplyToID: item.ID, Text: c.Text, Visibility: "public",
		Language: "en", CreatedAt: c.At, URL: base + "/@" + user + "/" + id, URI: base + "/users/" + user + "/statuses/" + id,
	}}
}

// isItem reports a status of the instance that answers none: it has an audience.
func isItem(s *mastodonStatus) bool { return s.audience == nil && s.InReplyToID == "" }

// mastodonAudienceShaped reports whether id is shaped as an audience comment's: the top bit of
// its low 16 set (AudienceID), which the instance's own ids leave clear.
func mastodonAudienceShaped(id string) bool {
	n, err := strconv.ParseInt(id, 10, 64)
	return err == nil && n&0x8000 != 0
}

// status finds a status by id: one of the instance's, or an audience comment of one of its
// items; nil when there is none.
func (v *mdView) status(id string) *mastodonStatus {
	if s, ok := v.statuses[id]; ok {
		return s
	}
	var out *mastodonStatus
	if mastodonAudienceShaped(id) {
		out = v.audienceComment(id)
	} else if s, _, found, err := sim.Load[mastodonStatus](v.ctx, v.m.cfg.State, mdKey(mdStatusKind, id)); err != nil {
		v.fail(err)
	} else if found {
		out = &s
	}
	v.statuses[id] = out
	return out
}

// audienceComment finds the audience comment with id among every item's (they are drawn, not
// stored: the items are read to draw them).
func (v *mdView) audienceComment(id string) *mastodonStatus {
	if !v.itemsRead {
		v.itemsRead = true
		all, err := sim.ListJSON[mastodonStatus](v.ctx, v.m.cfg.State, mdKey(mdStatusKind, ""), "")
		if err != nil {
			v.fail(err)
			return nil
		}
		for i := range all {
			if isItem(&all[i]) {
				v.items = append(v.items, &all[i])
			}
		}
	}
	for _, item := range v.items {
		for _, c := range sim.AudienceComments(item.ID, item.CreatedAt, v.now) {
			if AudienceID(item.ID, c) == id {
				return v.m.audienceStatus(item, c)
			}
		}
	}
	return nil
}

// children lists the statuses answering s, oldest first: its audience comments when it is an
// item, and the instance's statuses answering it.
func (v *mdView) children(s *mastodonStatus) []*mastodonStatus {
	var out []*mastodonStatus
	if isItem(s) {
		for _, c := range sim.AudienceComments(s.ID, s.CreatedAt, v.now) {
			out = append(out, v.m.audienceStatus(s, c))
		}
	}
	replies, ok := v.replies[s.ID]
	if !ok {
		var err error
		if replies, _, _, err = sim.Load[[]string](v.ctx, v.m.cfg.State, mdKey(mdRepliesKind, s.ID)); err != nil {
			v.fail(err)
		}
		v.replies[s.ID] = replies
	}
	for _, id := range replies {
		if r := v.status(id); r != nil {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *mastodonStatus) int { return mastodonCompareIDs(a.ID, b.ID) })
	return out
}

// reactions returns a status's favourites and reblogs at now.
func reactions(s *mastodonStatus, now time.Time) (favourites, reblogs int64) {
	switch {
	case s.audience != nil:
		return int64(s.audience.N % 3), 0
	case isItem(s):
		a := sim.AudienceOf(s.ID, s.CreatedAt, now)
		return a.Likes, a.Shares
	}
	return 0, 0
}

// authorJSON renders the Account of a status's author.
func (v *mdView) authorJSON(s *mastodonStatus) map[string]any {
	if s.audience == nil {
		return v.accountJSON(s.author())
	}
	u := s.Username
	base := "https://" + AudienceDomain
	return map[string]any{
		"id": s.Account, "username": u, "acct": u + "@" + AudienceDomain, "display_name": s.audience.Author,
		"locked": false, "bot": false, "created_at": "2023-01-01T00:00:00.000Z", "note": "", "url": base + "/@" + u,
		"avatar": base + "/avatars/" + u + ".png", "avatar_static": base + "/avatars/" + u + ".png",
		"header": base + "/headers/original/missing.png", "header_static": base + "/headers/original/missing.png",
		"followers_count": 0, "following_count": 0, "statuses_count": 1, "emojis": []any{}, "fields": []any{},
	}
}

var mastodonTokenRe = regexp.MustCompile(`https?://[^\s<>"]+|(^|[^\p{L}\p{N}_/@])@([\p{L}\p{N}_]+)(?:@([\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+))?`)

// content renders a status's text as Mastodon's TextFormatter does, and lists the accounts it
// mentions.
func (v *mdView) content(text string) (string, []any) {
	mentions := []any{}
	var b strings.Builder
	for _, para := range strings.Split(text, "\n\n") {
		b.WriteString("<p>")
		for i, line := range strings.Split(para, "\n") {
			if i > 0 {
				b.WriteString("<br />")
			}
			last := 0
			for _, loc := range mastodonTokenRe.FindAllStringSubmatchIndex(line, -1) {
				start, end := loc[0], loc[1]
				var rendered string
				if loc[4] < 0 { // a link
					for end > start && strings.ContainsRune(".,:;!?'\")]", rune(line[end-1])) {
						end--
					}
					rendered = mastodonLinkHTML(line[start:end])
				} else { // a mention, after the character before it
					start = loc[4] - 1
					domain := ""
					if loc[6] >= 0 {
						domain = line[loc[6]:loc[7]]
					}
					var mention map[string]any
					rendered, mention = v.mention(line[loc[4]:loc[5]], domain)
					if mention == nil {
						continue
					}
					mentions = append(mentions, mention)
				}
				b.WriteString(html.EscapeString(line[last:start]))
				b.WriteString(rendered)
				last = end
			}
			b.WriteString(html.EscapeString(line[last:]))
		}
		b.WriteString("</p>")
	}
	return b.String(), mentions
}

// mastodonLinkHTML renders a link: the scheme (and www.) hidden, at most 30 characters shown,
// the rest hidden behind an ellipsis.
func mastodonLinkHTML(u string) string {
	prefix := u[:strings.Index(u, "://")+3]
	rest := u[len(prefix):]
	if strings.HasPrefix(rest, "www.") {
		prefix, rest = prefix+"www.", rest[4:]
	}
	shown, hidden, class := rest, "", ""
	if r := []rune(rest); len(r) > 30 {
		shown, hidden, class = string(r[:30]), string(r[30:]), "ellipsis"
	}
	return `<a href="` + html.EscapeString(u) + `" target="_blank" rel="nofollow noopener" translate="no">` +
		`<span class="invisible">` + html.EscapeString(prefix) + `</span><span class="` + class + `">` + html.EscapeString(shown) +
		`</span><span class="invisible">` + html.EscapeString(hidden) + `</span></a>`
}

// mention renders @username(@domain) as a mention of an account the instance knows: one of its
// own that called it, or of the audience. It returns nil for an account it does not know,
// which stays text.
func (v *mdView) mention(username, domain string) (string, map[string]any) {
	m := v.m
	var id, acct, url string
	switch {
	case strings.EqualFold(domain, AudienceDomain):
		for _, a := range sim.AudienceAuthors {
			if mastodonAudienceUsername(a) == strings.ToLower(username) {
				id, acct, url = mastodonAudienceAccountID(a), mastodonAudienceUsername(a)+"@"+AudienceDomain,
					"https://"+AudienceDomain+"/@"+mastodonAudienceUsername(a)
			}
		}
	case domain == "" || strings.EqualFold(domain, m.opts.Domain):
		a, _, found, err := sim.Load[mastodonAccount](v.ctx, m.cfg.State, mdKey(mdUsernameKind, strings.ToLower(username)))
		if err != nil {
			v.fail(err)
		} else if found {
			id, acct, url = a.ID, a.Username, m.cfg.BaseURL+"/@"+a.Username
		}
	}
	if id == "" {
		return "", nil
	}
	user, _, _ := strings.Cut(acct, "@")
	return `<span class="h-card" translate="no"><a href="` + html.EscapeString(url) + `" class="u-url mention">@<span>` +
			html.EscapeString(user) + `</span></a></span>`,
		map[string]any{"id": id, "username": user, "url": url, "acct": acct}
}

// getStatuses serves GET /api/v1/statuses?id[]= (Mastodon 4.3): the statuses found and
// visible, in the order asked; the others are left out.
func (m *Sim) getStatuses(w http.ResponseWriter, r *http.Request) {
	callerID, ok := m.caller(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var ids []string
	for _, id := range append(q["id[]"], q["id"]...) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > mastodonStatusesLimit {
		mastodonError(w, http.StatusUnprocessableEntity, "Mastodon::ValidationError")
		return
	}
	v := m.view(r.Context(), m.cfg.Now())
	out := []any{}
	for _, id := range ids {
		if s := v.status(id); s != nil && visibleTo(s, callerID) {
			out = append(out, v.statusJSON(s))
		}
	}
	if v.err != nil {
		mastodonInternal(w)
		return
	}
	mastodonJSON(w, http.StatusOK, out)
}

// statusContext serves GET /api/v1/statuses/:id/context.
func (m *Sim) statusContext(w http.ResponseWriter, r *http.Request, id string) {
	callerID, ok := m.caller(w, r)
	if !ok {
		return
	}
	ancestorsLimit, descendantsLimit, depthLimit := mastodonContextLimit, mastodonContextLimit, 0
	if mastodonToken(r) == "" {
		ancestorsLimit, descendantsLimit, depthLimit = mastodonAnonAncestorsLimit, mastodonAnonDescendants, mastodonAnonDescendantDepth
	}
	v := m.view(r.Context(), m.cfg.Now())
	s := v.status(id)
	if v.err != nil {
		mastodonInternal(w)
		return
	}
	if s == nil || !visibleTo(s, callerID) {
		mastodonError(w, http.StatusNotFound, mastodonNotFound)
		return
	}
	ancestors := []any{}
	for cur := s; cur.InReplyToID != "" && len(ancestors) < ancestorsLimit; {
		if cur = v.status(cur.InReplyToID); cur == nil {
			break
		}
		if visibleTo(cur, callerID) {
			ancestors = slices.Insert(ancestors, 0, any(v.statusJSON(cur)))
		}
	}
	descendants := []any{}
	var walk func(p *mastodonStatus, depth int)
	walk = func(p *mastodonStatus, depth int) {
		if depthLimit > 0 && depth > depthLimit {
			return
		}
		for _, c := range v.children(p) {
			if len(descendants) >= descendantsLimit {
				return
			}
			if visibleTo(c, callerID) {
				descendants = append(descendants, v.statusJSON(c))
				walk(c, depth+1)
			}
		}
	}
	walk(s, 1)
	if v.err != nil {
		mastodonInternal(w)
		return
	}
	mastodonJSON(w, http.StatusOK, map[string]any{"ancestors": ancestors, "descendants": descendants})
}
