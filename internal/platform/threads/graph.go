package threads

import (
	"context"
	"net/url"

	"github.com/reelay/reelay/internal/platform/metagraph"
)

// publishingLimit reads GET /{threads-user-id}/threads_publishing_limit?fields=quota_usage,config.
func publishingLimit(ctx context.Context, g metagraph.Client, userID string) (metagraph.Quota, error) {
	return g.PublishingLimit(ctx, "/"+url.PathEscape(userID)+"/threads_publishing_limit")
}

// classify turns a failed call into a *provider.Error: metagraph's table as it is (Threads
// answers with no codes of its own).
var classify = metagraph.Classifier{Platform: "Threads"}.Classify

// notReady reports whether err is threads_publish's "the media is not ready" (9007): the
// container is polled again.
func notReady(err error) bool {
	code, _, ok := metagraph.Code(err)
	return ok && code == metagraph.CodeNotReady
}
