// Package simset is the one list of the platforms' simulators, by platform: what the
// sandbox mounts, in a reelay server (internal/app) and on a host apart (simhost's callers: the
// benchmarks, the end-to-end tests). Each simulator is a package of its own beside its
// provider; a platform added to platform.All without one here fails this package's test.
package simset

import (
	"net/http"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/bluesky/blueskysim"
	"github.com/reelay/reelay/internal/platform/discord/discordsim"
	"github.com/reelay/reelay/internal/platform/facebook/facebooksim"
	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/linkedin/linkedinsim"
	"github.com/reelay/reelay/internal/platform/mastodon/mastodonsim"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/reddit/redditsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/telegram/telegramsim"
	"github.com/reelay/reelay/internal/platform/threads/threadssim"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
)

// Factory builds one platform's simulator from what every simulator is built with.
type Factory = func(cfg sim.Config) http.Handler

// All builds the simulator of each platform, by platform name. Only callers holding a sandbox
// token can drive them, and only the server (or host) that mounts them mints those, from its
// secret key, so the simulators' pulls of media URLs (Instagram) are requests reelay itself
// asked for.
var All = map[string]Factory{
	platform.YouTube:   youtubesim.New,
	platform.Instagram: instagramsim.New,
	platform.TikTok:    tiktoksim.New,
	platform.LinkedIn:  linkedinsim.New,
	platform.Pinterest: pinterestsim.New,
	platform.Bluesky:   blueskysim.New,
	platform.Telegram:  telegramsim.New,
	platform.Discord:   discordsim.New,
	platform.Mastodon:  mastodonsim.New,
	platform.Reddit:    redditsim.New,
	platform.Threads:   threadssim.New,
	platform.Facebook:  facebooksim.New,
}
