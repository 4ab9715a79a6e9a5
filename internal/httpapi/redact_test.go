package httpapi

import "testing"

func TestRedactPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/posts/123": "/api/v1/posts/123",
		"/sandbox/telegram/botsbx1.telegram.sbx_ab.MAC/sendVideo":             "/sandbox/telegram/REDACTED/sendVideo",
		"/sandbox/discord/api/webhooks/sbx_ab/sbx1.discord.sbx_ab.MAC":        "/sandbox/discord/api/webhooks/sbx_ab/REDACTED",
		"/sandbox/discord/api/v10/webhooks/sbx_ab/sbx1.discord.sbx_ab.MAC":    "/sandbox/discord/api/v10/webhooks/sbx_ab/REDACTED",
		"/sandbox/telegram/botsbx2.telegram.sbx_ab.1700000000-0a0b.MAC/getMe": "/sandbox/telegram/REDACTED/getMe",
	} {
		if got := redactPath(in); got != want {
			t.Errorf("redactPath(%q) = %q, want %q", in, got, want)
		}
	}
}
