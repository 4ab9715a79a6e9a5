package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Service reads comments from the platforms into the store (on request and from the periodic
// job, on the schedule figures are read on) and posts replies on the origin platform.
type Service struct {
	Store  *store.Store
	Caller publish.ChannelCaller
	// Sources are the providers with a comments API, by platform.
	Sources map[string]provider.CommentSource
	Log     *slog.Logger
}

// maxItemsPerChannel bounds the items of one channel read in one sync: each is a call or more.
const maxItemsPerChannel = 50

// Sync reads the comments on the targets f selects (Kind is set here), channel by channel.
// A channel that fails is reported in the summary while the others go on; only a failure of the
// store itself is an error.
func (s *Service) Sync(ctx context.Context, f store.AudienceFilter) (analytics.Summary, error) {
	f.Kind = store.ReadComments
	targets, err := s.Store.AudienceTargets(ctx, f)
	if err != nil {
		return analytics.Summary{}, err
	}
	return analytics.EachChannel(ctx, targets, s.syncChannel)
}

// syncChannel reads the comments on one channel's items, one item after another; the first
// failure stops the channel (a rate limit would only be hit again).
func (s *Service) syncChannel(ctx context.Context, group []store.AudienceTarget) (analytics.Summary, error) {
	first := group[0]
	ids := destinationIDs(group)
	if ctx.Err() != nil {
		return analytics.Summary{Pending: len(group)}, nil
	}
	src := s.Sources[first.Platform]
	if src == nil {
		return analytics.Summary{Unavailable: len(group)}, s.Store.SetAudienceSchedule(ctx, store.ReadComments, ids, "", nil)
	}
	ch, err := s.Store.ChannelByID(ctx, first.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return analytics.Summary{Unavailable: len(group)}, s.Store.SetAudienceSchedule(ctx, store.ReadComments, ids, "the channel was disconnected", nil)
	}
	if err != nil {
		return analytics.Summary{}, err
	}
	var sum analytics.Summary
	if len(group) > maxItemsPerChannel {
		sum.Pending += len(group) - maxItemsPerChannel
		group = group[:maxItemsPerChannel]
	}
	for i, t := range group {
		if ctx.Err() != nil {
			sum.Pending += len(group) - i
			return sum, nil
		}
		var got []provider.Comment
		callErr := s.Caller.Call(ctx, ch, func(pc provider.Channel) error {
			var err error
			got, err = src.Comments(ctx, pc, t.ExternalID)
			return err
		})
		now := time.Now().UTC().Truncate(time.Microsecond)
		if callErr != nil {
			if ctx.Err() != nil && errors.Is(callErr, ctx.Err()) {
				sum.Pending += len(group) - i
				return sum, nil
			}
			pe := provider.AsError(callErr)
			rest := destinationIDs(group[i:])
			sum.Failed += len(rest)
			sum.Errors = append(sum.Errors, analytics.ChannelErr{Platform: t.Platform, ChannelID: t.ChannelID,
				Category: pe.Category, Message: pe.Message, Destinations: len(rest)})
			if s.Log != nil {
				s.Log.Warn("reading comments failed", "platform", t.Platform, "channel", t.ChannelID, "category", pe.Category, "error", pe.Message)
			}
			next := analytics.RetryAt(pe, t.PublishedAt, now)
			return sum, s.Store.SetAudienceSchedule(context.WithoutCancel(ctx), store.ReadComments, rest, pe.Message, &next)
		}
		rows := make([]store.Comment, len(got))
		for j, c := range got {
			rows[j] = storeComment(c)
		}
		if _, err := s.Store.SaveComments(ctx, t, rows, now, analytics.NextRead(t.PublishedAt, now)); err != nil {
			return sum, err
		}
		sum.Synced++
	}
	return sum, nil
}

func destinationIDs(group []store.AudienceTarget) []string {
	ids := make([]string, len(group))
	for i, t := range group {
		ids[i] = t.DestinationID
	}
	return ids
}

func storeComment(c provider.Comment) store.Comment {
	return store.Comment{
		PlatformID: c.ID, ParentPlatformID: c.ParentID, Author: c.Author, Text: c.Text,
		LikeCount: c.LikeCount, Own: c.Own, CreatedAt: c.CreatedAt,
	}
}

// Reply posts text on the origin platform in answer to one of the account's comments, and
// stores the reply. Bad input (an unknown comment, a platform mismatch, an empty or over-long
// text) is refused before anything reaches the platform.
//
// key, when not empty, is the request's idempotency key: the same request repeated under it
// within store.IdempotencyWindow answers the reply posted the first time (replayed) and
// sends nothing. A request whose reply may have reached the platform without its answer
// reaching reelay keeps its key, so that it is never sent twice under it.
func (s *Service) Reply(ctx context.Context, accountID, commentID, platformName, text, key string) (reply store.Comment, replayed bool, err error) {
	var f apierr.Fields
	text = strings.TrimSpace(text)
	if text == "" {
		f.Add("replyText", "is required")
	}
	f.NoControl("replyText", text)
	if platformName == "" {
		f.Add("platform", "is required")
	}
	if commentID == "" {
		f.Add("commentId", "is required")
	}
	if err := f.Err(); err != nil {
		return store.Comment{}, false, err
	}
	parent, err := s.Store.GetComment(ctx, accountID, commentID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Comment{}, false, apierr.NotFound("comment")
	}
	if err != nil {
		return store.Comment{}, false, err
	}
	if parent.Platform != platformName {
		return store.Comment{}, false, apierr.Field("platform", fmt.Sprintf("the comment is on %s", parent.Platform))
	}
	caps, _ := registry.CapabilitiesOf(parent.Platform)
	src := s.Sources[parent.Platform]
	if !caps.Replies || src == nil {
		return store.Comment{}, false, apierr.Field("platform", fmt.Sprintf("%s does not take replies through its API", registry.DisplayName(parent.Platform)))
	}
	if !caps.ReplyText.Check(text) {
		return store.Comment{}, false, apierr.Field("replyText", fmt.Sprintf("is longer than %s allows (%d %s, this is %d)",
			registry.DisplayName(parent.Platform), caps.ReplyText.Max, caps.ReplyText.Unit, caps.ReplyText.Count(text)))
	}
	item, err := s.Store.PublishedItem(ctx, parent.DestinationID)
	if err != nil {
		return store.Comment{}, false, err
	}
	ch, err := s.Store.ChannelByID(ctx, parent.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Comment{}, false, apierr.New(http.StatusConflict, apierr.CodeInvalidState, "the comment's channel was disconnected; reconnect it to reply")
	}
	if err != nil {
		return store.Comment{}, false, err
	}
	if key != "" {
		replyID, err := s.Store.ClaimReplyKey(ctx, accountID, key, requestHash(commentID, platformName, text))
		switch {
		case errors.Is(err, store.ErrIdempotencyConflict):
			return store.Comment{}, false, apierr.New(http.StatusConflict, apierr.CodeIdempotencyConflict,
				"this Idempotency-Key was used in the last 24 hours with a different reply; use a new key for a new reply")
		case errors.Is(err, store.ErrReplyUnsettled):
			return store.Comment{}, false, apierr.New(http.StatusConflict, apierr.CodeIdempotencyConflict,
				"the reply sent with this Idempotency-Key is still being sent, or the platform never answered it: "+
					"look for it on the platform before sending it again with a new key")
		case err != nil:
			return store.Comment{}, false, err
		case replyID != "":
			c, err := s.Store.GetComment(ctx, accountID, replyID)
			return c, err == nil, err
		}
	}
	to := provider.Comment{ID: parent.PlatformID, ParentID: parent.ParentPlatformID, Author: parent.Author, Text: parent.Text, CreatedAt: parent.CreatedAt, Own: parent.Own}
	var posted provider.Comment
	sent := false
	err = s.Caller.Call(ctx, ch, func(pc provider.Channel) error {
		sent = true
		var err error
		posted, err = src.Reply(ctx, pc, item.ExternalID, to, text)
		return err
	})
	if err != nil {
		if key != "" && !maybePosted(sent, err) {
			// The platform refused it, or it was never sent: the same request may come again.
			if rerr := s.Store.ReleaseReplyKey(context.WithoutCancel(ctx), accountID, key); rerr != nil && s.Log != nil {
				s.Log.Warn("release reply key", "error", rerr)
			}
		}
		return store.Comment{}, false, upstreamError(parent.Platform, err)
	}
	if posted.ParentID == "" {
		posted.ParentID = parent.PlatformID
	}
	if posted.CreatedAt.IsZero() {
		posted.CreatedAt = time.Now()
	}
	reply, err = s.Store.SaveReply(ctx, parent, storeComment(posted), key)
	return reply, false, err
}

// requestHash identifies a reply request under its idempotency key.
func requestHash(commentID, platformName, text string) string {
	h := sha256.New()
	for _, part := range []string{commentID, platformName, text} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// maybePosted says whether a reply that failed with err may still be on the platform: it was
// sent, and the platform did not refuse it with a 4xx (no answer at all, or a server error,
// which may come after the work was done).
func maybePosted(sent bool, err error) bool {
	status := provider.AsError(err).Status
	return sent && (status == 0 || status >= 500)
}

// upstreamError turns a platform's failure to take a reply into the API's answer: its refusal
// of the request is the caller's to fix (400), a rate limit says when to come back (429), and
// anything else is the platform's trouble (502).
func upstreamError(platformName string, err error) error {
	pe := provider.AsError(err)
	name := registry.DisplayName(platformName)
	switch {
	case pe.Category == provider.CategoryRateLimited || pe.Category == provider.CategoryQuotaExceeded:
		ae := apierr.Newf(http.StatusTooManyRequests, apierr.CodeRateLimited, "%s limited the rate: %s", name, pe.Message).Wrap(err)
		if pe.RetryAfter > 0 {
			ae.RetryAfter = pe.RetryAfter
		}
		return ae
	case !pe.Transient && pe.Category != provider.CategoryAuthExpired && pe.Category != provider.CategoryInternal:
		return apierr.Newf(http.StatusBadRequest, apierr.CodeValidationFailed, "%s refused the reply: %s", name, pe.Message).Wrap(err)
	default:
		return apierr.Newf(http.StatusBadGateway, apierr.CodeUpstreamError, "%s answered: %s", name, pe.Message).Wrap(err)
	}
}
