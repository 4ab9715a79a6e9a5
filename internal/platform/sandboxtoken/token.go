// Package sandboxtoken mints and verifies the tokens of sandbox channels and of the simulators'
// OAuth apps. The server that publishes mints them and the simulators check them, each holding
// only the key: production code imports this package, never the simulators.
package sandboxtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/reelay/reelay/internal/secret"
)

// Sandbox tokens are what sandbox channels present to the simulators as their platform access
// token: "sbx1." + platform + "." + account + "." + MAC. They verify themselves, so the
// simulator needs no token table, and a token for one account cannot be forged into another.

const tokenPrefix = "sbx1."

// Key is the key sandbox tokens are signed with, derived from a server's secret key:
// the server that mints them and any simulator host that checks them derive it the same way.
func Key(secretKey []byte) []byte { return secret.Derive(secretKey, keyPurpose) }

// PreviousKeys are the keys sandbox tokens were signed with under a server's previous secret
// keys (Mint.Previous), derived as Key derives the current one.
func PreviousKeys(secretKeys [][]byte) [][]byte { return secret.DeriveAll(secretKeys, keyPurpose) }

// keyPurpose is what the sandbox token key is derived for.
const keyPurpose = "sandbox tokens"

// Token mints the access token of a sandbox account.
func Token(key []byte, platform, account string) string {
	return tokenPrefix + platform + "." + account + "." + tokenMAC(key, platform, account)
}

// Parse verifies a sandbox token and returns the platform and account it is for.
func Parse(key []byte, token string) (platform, account string, ok bool) {
	rest, found := strings.CutPrefix(token, tokenPrefix)
	if !found {
		return "", "", false
	}
	platform, rest, found = strings.Cut(rest, ".")
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", "", false
	}
	account, mac := rest[:i], rest[i+1:]
	if !hmac.Equal([]byte(mac), []byte(tokenMAC(key, platform, account))) {
		return "", "", false
	}
	return platform, account, true
}

func tokenMAC(key []byte, platform, account string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("reelay-sandbox-token|" + platform + "|" + account))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// Credentials are the credentials a sandbox channel presents to its simulator, in the
// form the platform's provider reads for a real channel: most platforms take an OAuth access
// token; the token-based ones take what their users paste (a Telegram bot token and chat, a
// Discord webhook URL, a Bluesky handle and app password, a Mastodon instance and token).
// baseURL is the simulator's (what the provider gets as Destination.BaseURL) and token the
// account's sandbox token.
func Credentials(platform, baseURL, account, token string) map[string]string {
	switch platform {
	case "bluesky":
		return map[string]string{"handle": BlueskyHandle(account), "app_password": token, "pds_url": baseURL}
	case "telegram":
		return map[string]string{"bot_token": token, "chat_id": "@" + account}
	case "discord":
		// baseURL is Discord's API root with its version (…/api/v10), below which webhooks are
		// executed as well.
		return map[string]string{"webhook_url": baseURL + "/webhooks/" + account + "/" + token}
	case "mastodon":
		return map[string]string{"instance_url": baseURL, "access_token": token}
	default:
		return map[string]string{"access_token": token}
	}
}

// BlueskyHandle is the handle of a sandbox Bluesky account: account ids ("sbx_…") are
// not valid handles, so the underscore becomes a hyphen under a reserved-looking domain.
func BlueskyHandle(account string) string {
	return strings.ToLower(strings.ReplaceAll(account, "_", "-")) + ".sandbox.bsky.test"
}
