package connect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// SandboxBehavior is how a sandbox channel's simulator misbehaves (docs/CONTRACT.md, Sandbox
// channels). The HTTP API and the web dashboard both take it, with the same checks.
type SandboxBehavior struct {
	ProcessingMS *int     `json:"processing_ms,omitempty"`
	Fail         string   `json:"fail,omitempty"`
	FailRate     *float64 `json:"fail_rate,omitempty"`
	// DailyQuotaUnits sets the YouTube simulator's general daily quota of units, which every
	// call but an upload draws on (negative: none).
	DailyQuotaUnits *int `json:"daily_quota_units,omitempty"`
	// AppAccess is the access level the simulated platform granted reelay's app, on the
	// platforms that grade apps (SandboxAppAccess).
	AppAccess string `json:"app_access,omitempty"`
	// BarePDS makes a Bluesky simulator account's PDS self-hosted, with neither AppView nor
	// video service.
	BarePDS bool `json:"bare_pds,omitempty"`
}

// SandboxAppAccess are, by platform, the access levels of reelay's app a sandbox channel can
// simulate, the default first.
var SandboxAppAccess = map[string][]string{
	platform.Pinterest: {"standard", "trial"},
	platform.TikTok:    {"unaudited", "audited"},
}

// SandboxFailures are the values of SandboxBehavior.Fail.
var SandboxFailures = []string{"none", "reject", "unavailable", "auth", "rate_limit", "flaky"}

// Check adds what is wrong with b, for a channel of platformName, to f, under
// sandbox_behavior.*.
func (b *SandboxBehavior) Check(platformName string, f *apierr.Fields) {
	if b.ProcessingMS != nil && (*b.ProcessingMS < 0 || *b.ProcessingMS > 600000) {
		f.Add("sandbox_behavior.processing_ms", "must be between 0 and 600000")
	}
	if b.Fail != "" && !slices.Contains(SandboxFailures, b.Fail) {
		f.Addf("sandbox_behavior.fail", "must be one of %s", strings.Join(SandboxFailures, ", "))
	}
	if b.FailRate != nil && (*b.FailRate < 0 || *b.FailRate > 1) {
		f.Add("sandbox_behavior.fail_rate", "must be between 0 and 1")
	}
	if b.DailyQuotaUnits != nil && platformName != platform.YouTube {
		// Only YouTube counts a quota in units; the other simulators' limits are counts of
		// posts or requests, as their platforms' are.
		f.Add("sandbox_behavior.daily_quota_units", "applies to YouTube sandbox channels only")
	}
	if b.AppAccess != "" {
		levels, graded := SandboxAppAccess[platformName]
		switch {
		case !graded:
			f.Addf("sandbox_behavior.app_access", "applies to sandbox channels of %s only", gradedPlatforms())
		case !slices.Contains(levels, b.AppAccess):
			f.Addf("sandbox_behavior.app_access", "must be one of %s for %s", strings.Join(levels, ", "), registry.DisplayName(platformName))
		}
	}
	if b.BarePDS && platformName != platform.Bluesky {
		f.Add("sandbox_behavior.bare_pds", "applies to Bluesky sandbox channels only")
	}
}

// NewSandboxChannel is a new channel of project on platformName's built-in simulator, as an
// account of its own there; it is not stored yet. name may be empty: the channel is then
// named after the platform, numbered from the second sandbox channel of that name in the
// project on ("TikTok sandbox 2"), so that two of them can be told apart.
func NewSandboxChannel(ctx context.Context, st *store.Store, project store.Project, platformName, name string, b SandboxBehavior) (store.Channel, error) {
	if name == "" {
		existing, err := st.ListChannels(ctx, project.AccountID, project.ID)
		if err != nil {
			return store.Channel{}, err
		}
		taken := make(map[string]bool, len(existing))
		for _, c := range existing {
			taken[c.Name] = true
		}
		base := registry.DisplayName(platformName) + " sandbox"
		name = base
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s %d", base, n)
		}
	}
	c := store.Channel{AccountID: project.AccountID, ProjectID: project.ID, Platform: platformName, Name: name, Sandbox: true}
	c.ExternalAccountID = "sbx_" + randomHex(8)
	c.Username = SandboxUsername(platformName, c.ExternalAccountID)
	raw, _ := json.Marshal(b)
	c.SandboxBehavior = string(raw)
	return c, nil
}

// SandboxUsername is the username of a simulated account.
func SandboxUsername(platformName, account string) string {
	id := strings.TrimPrefix(account, "sbx_")
	if len(id) > 6 {
		id = id[:6]
	}
	return "sandbox_" + platformName + "_" + id
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// gradedPlatforms names the platforms of SandboxAppAccess, in the order of platform.All.
func gradedPlatforms() string {
	var names []string
	for _, p := range platform.All {
		if _, ok := SandboxAppAccess[p]; ok {
			names = append(names, registry.DisplayName(p))
		}
	}
	return strings.Join(names, ", ")
}
