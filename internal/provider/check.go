package provider

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The questions a Checker answers, in the order it answers them.
const (
	CheckToken      = "token"
	CheckScopes     = "scopes"
	CheckAPIVersion = "api_version"
	CheckPublish    = "publish"
)

// Outcomes of a check.
const (
	CheckOK      = "ok"
	CheckFailed  = "failed"
	CheckSkipped = "skipped"
)

// Check is the answer to one question about a channel.
type Check struct {
	// Name is one of the Check* questions.
	Name string
	// Status is ok, failed or skipped.
	Status string
	// Detail is what the platform answered (or why the question was not asked).
	Detail string
	// Fix says what to do about a failed check ("" otherwise).
	Fix string
	// Category classifies a failure that came from an error as errors are (auth_expired,
	// upstream_unavailable, ...): an auth_expired token check marks the channel
	// reauth_required, as a refused publish does. "" for a failure the platform's answer shows.
	Category string
}

// Passed is an ok line.
func Passed(name, format string, args ...any) Check {
	return Check{Name: name, Status: CheckOK, Detail: fmt.Sprintf(format, args...)}
}

// Skipped is a line for a question the platform cannot be asked, with why.
func Skipped(name, format string, args ...any) Check {
	return Check{Name: name, Status: CheckSkipped, Detail: fmt.Sprintf(format, args...)}
}

// Failed is a failed line: err is what the platform answered (classified as AsError does),
// fix what to do about it.
func Failed(name string, err error, fix string) Check {
	pe := AsError(err)
	return Check{Name: name, Status: CheckFailed, Detail: pe.Message, Fix: fix, Category: pe.Category}
}

// ReconnectFix is the fix of a token the platform refused.
const ReconnectFix = "reconnect the channel (reelay channels connect, or the dashboard's Channels page)"

// StatusUpgradeRequired is HTTP 426, which a platform answers a call made in an API version it
// no longer serves (LinkedIn: https://learn.microsoft.com/en-us/linkedin/marketing/versioning).
const StatusUpgradeRequired = http.StatusUpgradeRequired

// CallChecks are the token and api_version lines that the answer to one authenticated read
// call gives (a refusal for the version is a 426 or an api_version error): err is its error (nil: the platform answered it), api names the version reelay
// speaks ("Graph API v21.0"; "" for an unversioned API). A call refused for its version fails
// api_version and says nothing of the token; a call refused for the token fails the token line
// and leaves the version unproven (skipped); any other failure (the platform unreachable)
// fails the token line with its cause.
func CallChecks(err error, api string) (token, version Check) {
	versionOK := func() Check {
		if api == "" {
			return Skipped(CheckAPIVersion, "the API is not versioned")
		}
		return Passed(CheckAPIVersion, "%s accepted", api)
	}
	if err == nil {
		return Passed(CheckToken, "the platform accepted the token"), versionOK()
	}
	pe := AsError(err)
	if pe.Status == StatusUpgradeRequired || pe.Category == CategoryAPIVersion {
		return Skipped(CheckToken, "not proven: the call was refused for its API version"),
			Failed(CheckAPIVersion, err, "update reelay, or set the platform's API version to one the platform still serves")
	}
	fix := ReconnectFix
	switch {
	case pe.Transient:
		fix = "try again later; if it persists, check the platform's status page"
	case pe.Category != CategoryAuthExpired:
		fix = "correct what the platform names, then check again"
	}
	return Failed(CheckToken, err, fix), Skipped(CheckAPIVersion, "not proven: the platform did not answer the call")
}

// ScopeCheck is the scopes line from the scopes a platform says the token has: each of need
// (scope → what reelay needs it for) missing from granted fails the line, naming them.
func ScopeCheck(granted []string, need [][2]string) Check {
	var missing []string
	for _, n := range need {
		if !slices.Contains(granted, n[0]) {
			missing = append(missing, n[0]+" ("+n[1]+")")
		}
	}
	if len(missing) > 0 {
		// No category: a missing scope for figures does not stop publishing, so it must not mark
		// the channel reauth_required; reconnecting is still the fix.
		return Check{Name: CheckScopes, Status: CheckFailed,
			Detail: "the token lacks " + strings.Join(missing, ", "),
			Fix:    "reconnect the channel and grant every permission reelay asks for"}
	}
	names := make([]string, len(need))
	for i, n := range need {
		names[i] = n[0]
	}
	return Passed(CheckScopes, "granted: %s", strings.Join(names, ", "))
}
