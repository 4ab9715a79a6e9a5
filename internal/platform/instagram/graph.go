package instagram

import (
	"context"
	"net/http"
	"net/url"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

// graph is a Graph API client for baseURL with one access token.
func graph(baseURL, token string, hc *http.Client) metagraph.Client {
	return metagraph.New("Instagram", baseURL, token, hc)
}

// publishingLimit reads GET /{ig-user-id}/content_publishing_limit?fields=quota_usage,config.
func publishingLimit(ctx context.Context, g metagraph.Client, igUserID string) (metagraph.Quota, error) {
	return g.PublishingLimit(ctx, "/"+url.PathEscape(igUserID)+"/content_publishing_limit")
}

// Graph API error codes of Instagram's own (the Instagram error-codes reference); the codes
// every Meta platform shares are metagraph's.
const (
	codeFetchFailed    = 9004
	codeImageTooLarge  = 36000
	codeImageFormat    = 36001
	codeAspectRatio    = 36003
	codeCaptionTooLong = 36004
	codeIGRateLimited  = 80002 // Business Use Case rate limit of the Instagram Platform

	subMediaExpired   = 2207020
	subNotReady       = 2207027
	subMaxPosts       = 2207042 // with code 9: the account's 24-hour publishing limit is spent
	subSpam           = 2207051
	subBuilderExpired = 2207008
)

// subcodeText explains the ERROR subcodes a container's status can carry (Instagram
// error-codes reference), so that a failure reads as more than a number.
var subcodeText = map[int]string{
	2207001: "Instagram server error",
	2207003: "downloading the video took too long",
	2207020: "the container expired",
	2207026: "the video format is not supported: Reels must be MOV or MP4 (H.264 or HEVC, AAC), 3 seconds to 15 minutes, at most 300 MB and 1920 pixels wide",
	2207032: "creating the media failed",
	2207052: "the video could not be fetched from reelay's media link (it must be publicly reachable: check REELAY_PUBLIC_URL)",
	2207053: "unknown upload error",
}

// classify turns a failed call into a *provider.Error: metagraph's table with Instagram's
// differences. A 403 without Graph's JSON is internal, not auth_expired; 4 with 2207051
// (suspected spam) is permanent media_rejected; 80002 is rate_limited; 2207020 (an expired
// container) is media_rejected even from a 5xx; 2207008 is transient; 36004 (caption) is
// invalid_options; 9004, 36000, 36001 and 36003 are media_rejected.
var classify = metagraph.Classifier{
	Platform:                 "Instagram",
	PlainForbiddenIsInternal: true,
	BeforeRateLimit: []metagraph.Rule{
		{Code: metagraph.CodeTooManyCalls, Subcode: subSpam, Category: provider.CategoryMediaRejected},
	},
	RateLimitedCodes: []int{codeIGRateLimited},
	BeforeUpstream: []metagraph.Rule{
		{Subcode: subMediaExpired, Category: provider.CategoryMediaRejected},
	},
	UpstreamSubcodes:    []int{subBuilderExpired},
	InvalidOptionsCodes: []int{codeCaptionTooLong},
	MediaRejectedCodes:  []int{codeFetchFailed, codeImageTooLarge, codeImageFormat, codeAspectRatio},
	SubcodeText:         subcodeText,
}.Classify

// notReady reports whether err is media_publish's "the media is not ready" (9007 with
// 2207027): the container is polled again.
func notReady(err error) bool {
	code, sub, ok := metagraph.Code(err)
	return ok && code == metagraph.CodeNotReady && sub == subNotReady
}
