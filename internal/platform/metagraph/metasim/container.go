package metasim

import (
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// Instagram's and Threads' media containers go through the same states, which each platform
// names and words its own way: IN_PROGRESS while the video is fetched and processed, FINISHED
// when it may be published, ERROR when the video was refused, EXPIRED a day after creation,
// PUBLISHED once published.

// Phase is where a media container stands.
type Phase int

// The phases of a container.
const (
	InProgress Phase = iota
	Finished
	Failed
	Expired
	Published
)

// ContainerPhase is the phase of a container created at created, whose video's fetch is done
// (fetched) and refused (refused), whose processing ends at ready (a refusal shows then,
// unless it shows at once, as a failed fetch does), which expires lifetime after creation,
// and which was published when published is true.
func ContainerPhase(now, created, ready time.Time, lifetime time.Duration, fetched, refused, atOnce, published bool) Phase {
	switch {
	case published:
		return Published
	case fetched && refused && (atOnce || !now.Before(ready)):
		return Failed
	case now.Sub(created) >= lifetime:
		return Expired
	case !fetched || now.Before(ready):
		return InProgress
	default:
		return Finished
	}
}

// CreationID reads the container a publish call (POST /{user-id}/media_publish,
// /{threads-user-id}/threads_publish) names, after checking that the call is the account's
// own: Graph's error 100 otherwise.
func CreationID(acct sim.Account, userID string, p url.Values) (string, *Error) {
	if userID != acct.ID {
		return "", Err(http.StatusBadRequest, 100, 33, Unsupported(http.MethodPost, userID))
	}
	cid := p.Get("creation_id")
	if cid == "" {
		return "", Err(http.StatusBadRequest, 100, 0, "(#100) The parameter creation_id is required")
	}
	return cid, nil
}
