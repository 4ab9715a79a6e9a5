package connect

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

// SandboxBehavior is how a sandbox channel's simulator misbehaves (DESIGN.md section 5). The
// HTTP API and the web dashboard both take it, with the same checks.
type SandboxBehavior struct {
	ProcessingMS *int     `json:"processing_ms,omitempty"`
	Fail         string   `json:"fail,omitempty"`
	FailRate     *float64 `json:"fail_rate,omitempty"`
}

// SandboxFailures are the values of SandboxBehavior.Fail.
var SandboxFailures = []string{"none", "reject", "unavailable", "auth", "rate_limit", "flaky"}

// Check adds what is wrong with b to f, under sandbox_behavior.*.
func (b *SandboxBehavior) Check(f *apierr.Fields) {
	if b.ProcessingMS != nil && (*b.ProcessingMS < 0 || *b.ProcessingMS > 600000) {
		f.Add("sandbox_behavior.processing_ms", "must be between 0 and 600000")
	}
	if b.Fail != "" && !slices.Contains(SandboxFailures, b.Fail) {
		f.Addf("sandbox_behavior.fail", "must be one of %s", strings.Join(SandboxFailures, ", "))
	}
	if b.FailRate != nil && (*b.FailRate < 0 || *b.FailRate > 1) {
		f.Add("sandbox_behavior.fail_rate", "must be between 0 and 1")
	}
}

// SandboxChannel is a new channel of project on platformName's built-in simulator, as an
// account of its own there; name may be empty (a default is chosen). It is not stored yet.
func SandboxChannel(project store.Project, platformName, name string, b SandboxBehavior) store.Channel {
	c := store.Channel{AccountID: project.AccountID, ProjectID: project.ID, Platform: platformName, Name: name, Sandbox: true}
	c.ExternalAccountID = "sbx_" + randomHex(8)
	c.Username = SandboxUsername(platformName, c.ExternalAccountID)
	if c.Name == "" {
		c.Name = platform.DisplayName(platformName) + " sandbox"
	}
	raw, _ := json.Marshal(b)
	c.SandboxBehavior = string(raw)
	return c
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
