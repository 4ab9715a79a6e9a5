package mastodon

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks the channel's Mastodon instance whether the channel works, with reads only:
//   - token: GET /api/v1/accounts/verify_credentials, which answers 401 for a revoked or
//     unknown token (https://docs.joinmastodon.org/methods/accounts/#verify_credentials);
//   - scopes: skipped, reelay cannot read a token's scopes without the app's own credentials;
//     a missing write scope shows as a refused post;
//   - api_version: the instance's version, from GET /api/v2/instance (or /api/v1/instance on
//     Mastodon 3.x) (https://docs.joinmastodon.org/methods/instance/#v2), at least
//     Config.MinServerVersion; a compatible server (Pleroma, Akkoma: "2.7.2 (compatible;
//     Pleroma 2.6.1)") is taken at its word;
//   - publish: the instance takes video: configuration.media_attachments.supported_mime_types
//     lists video/mp4 (an instance that does not say is assumed to).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "Mastodon tells a token's scopes only to the app's own credentials")
	c, err := p.client(ch.BaseURL, ch.Credentials)
	if err == nil {
		_, err = c.verifyCredentials(ctx)
	}
	if err != nil {
		token, _ := provider.CallChecks(classify(err, ""), "")
		return []provider.Check{token, scopes, provider.Skipped(provider.CheckAPIVersion, "not asked: the token was not accepted"),
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	token := provider.Passed(provider.CheckToken, "%s accepted the token", c.host)
	inst, err := c.instance(ctx)
	if err != nil {
		failed := provider.Failed(provider.CheckAPIVersion, classify(err, ""), "try again later")
		return []provider.Check{token, scopes, failed, provider.Skipped(provider.CheckPublish, "not asked: the instance did not describe itself")}
	}
	version := provider.Passed(provider.CheckAPIVersion, "%s runs Mastodon %s", c.host, inst.Version)
	switch {
	case inst.Version == "":
		version = provider.Passed(provider.CheckAPIVersion, "%s answered its instance description", c.host)
	case !strings.Contains(inst.Version, "compatible") && olderThan(inst.Version, p.cfg.MinServerVersion):
		version = provider.Check{Name: provider.CheckAPIVersion, Status: provider.CheckFailed,
			Detail: fmt.Sprintf("%s runs Mastodon %s; reelay needs %s or later (POST /api/v2/media with a thumbnail)", c.host, inst.Version, p.cfg.MinServerVersion),
			Fix:    "ask the instance's administrators to upgrade Mastodon, or connect an account on another instance"}
	}
	publish := provider.Passed(provider.CheckPublish, "%s takes MP4 video", c.host)
	if len(inst.SupportedMimeTypes) > 0 && !slices.Contains(inst.SupportedMimeTypes, "video/mp4") {
		publish = provider.Check{Name: provider.CheckPublish, Status: provider.CheckFailed,
			Detail: c.host + " does not list video/mp4 among the media types it takes",
			Fix:    "ask the instance's administrators to allow video, or connect an account on another instance"}
	}
	return []provider.Check{token, scopes, version, publish}
}

// olderThan reports whether version ("3.1.2", "4.4.0-beta.1+glitch") is an earlier release
// than min ("3.2.0"), comparing major, minor and patch; a version it cannot read is not.
func olderThan(version, min string) bool {
	v, okV := releaseOf(version)
	m, okM := releaseOf(min)
	if !okV || !okM {
		return false
	}
	return slices.Compare(v, m) < 0
}

// releaseOf reads the major, minor and patch numbers a version starts with.
func releaseOf(version string) ([]int, bool) {
	parts := strings.SplitN(strings.TrimSpace(version), ".", 3)
	if len(parts) < 2 {
		return nil, false
	}
	out := make([]int, 3)
	for i, part := range parts {
		n, err := strconv.Atoi(leadingDigits(part))
		if err != nil {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}
