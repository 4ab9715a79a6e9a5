package bluesky

import (
	"context"
	"errors"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Bluesky whether a channel works, with reads only:
//   - token: the app password opens a session (com.atproto.server.createSession, or the
//     session already open; a refused password is auth_expired);
//   - scopes: skipped: reelay signs in with an app password, which is not a scoped OAuth
//     token, so there are no scopes to ask about;
//   - api_version: skipped, XRPC methods are not versioned (a lexicon may only change in ways
//     that keep old clients working: https://atproto.com/specs/lexicon, Lexicon Evolution);
//   - publish: the video service's app.bsky.video.getUploadLimits says whether the account may
//     upload video now (canUpload, and today's allowance left)
//     (https://docs.bsky.app/docs/api/app-bsky-video-get-upload-limits); with uploads through
//     the PDS (UploadBlob, or no video service) there is nothing to ask.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "an app password has no scopes")
	version := provider.Skipped(provider.CheckAPIVersion, "Bluesky's XRPC methods are not versioned")
	c, err := p.channelOf(ch.BaseURL, ch.Credentials)
	var s *session
	if err == nil {
		s, err = p.session(ctx, c)
	}
	if err != nil {
		token, _ := provider.CallChecks(err, "")
		return []provider.Check{token, scopes, version, provider.Skipped(provider.CheckPublish, "not asked: no session")}
	}
	did, handle := s.identity()
	token := provider.Passed(provider.CheckToken, "signed in as %s (%s)", handle, did)
	var publish provider.Check
	if p.cfg.Upload != UploadVideoService {
		publish = provider.Skipped(provider.CheckPublish, "videos go to the PDS (uploadBlob), which has no upload allowance to ask")
	} else {
		l, err := p.uploadLimits(ctx, c, s)
		switch {
		case errors.Is(err, errNoVideoService):
			publish = provider.Skipped(provider.CheckPublish, "no video service answers for this PDS")
		case err != nil:
			publish = provider.Failed(provider.CheckPublish, classifyXRPC(err, provider.CategoryInternal), "try again later")
		default:
			if lerr := l.check(1); lerr != nil {
				publish = provider.Failed(provider.CheckPublish, lerr, "verify the account's e-mail address in Bluesky, or wait for the daily allowance to renew")
			} else {
				publish = provider.Passed(provider.CheckPublish, "the video service allows uploads")
			}
		}
	}
	return []provider.Check{token, scopes, version, publish}
}
