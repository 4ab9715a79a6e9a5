package provider_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/provider"
)

// TestCallChecks: one read's answer decides the token and api_version lines: a version
// refusal (426) fails the version and leaves the token unproven, a refused token fails the
// token with the reconnect fix, and a platform that did not answer asks to try again.
func TestCallChecks(t *testing.T) {
	for _, tc := range []struct {
		name           string
		err            error
		token, version string
		fix            string
	}{
		{"answered", nil, provider.CheckOK, provider.CheckOK, ""},
		{"426", provider.Permanent(provider.CategoryInternal, 426, "Requested version 20230101 is not active"),
			provider.CheckSkipped, provider.CheckFailed, "API version"},
		{"refused token", provider.Permanent(provider.CategoryAuthExpired, 401, "Invalid access token"),
			provider.CheckFailed, provider.CheckSkipped, "reconnect"},
		{"unreachable", errors.New("connection refused"), provider.CheckFailed, provider.CheckSkipped, "try again"},
		{"refused otherwise", provider.Permanent(provider.CategoryInvalidOptions, 400, "no linked account"),
			provider.CheckFailed, provider.CheckSkipped, "correct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, version := provider.CallChecks(tc.err, "Test API v1")
			if token.Status != tc.token || version.Status != tc.version {
				t.Fatalf("token %+v, version %+v", token, version)
			}
			if fix := token.Fix + version.Fix; !strings.Contains(fix, tc.fix) {
				t.Errorf("fix %q lacks %q", fix, tc.fix)
			}
		})
	}
	if _, v := provider.CallChecks(nil, ""); v.Status != provider.CheckSkipped || v.Detail == "" {
		t.Errorf("an unversioned API: %+v", v)
	}
}

// TestScopeCheck: every needed scope missing from the granted ones is named with its use,
// without a category (a missing scope for figures must not stop publishing).
func TestScopeCheck(t *testing.T) {
	need := [][2]string{{"a", "publishing"}, {"b", "figures"}}
	if c := provider.ScopeCheck([]string{"b", "a", "c"}, need); c.Status != provider.CheckOK {
		t.Errorf("all granted: %+v", c)
	}
	c := provider.ScopeCheck([]string{"a"}, need)
	if c.Status != provider.CheckFailed || !strings.Contains(c.Detail, "b (figures)") || strings.Contains(c.Detail, "a (") ||
		c.Category != "" || c.Fix == "" {
		t.Errorf("b missing: %+v", c)
	}
}
