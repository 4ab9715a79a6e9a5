package sandboxtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Mint mints and verifies the OAuth tokens of one platform's simulator. Tokens carry their
// account and expiry under a MAC, so any process holding the key verifies them: the API that
// serves the simulator and the worker that publishes need no shared table.
type Mint struct {
	Key      []byte
	Platform string
	// Previous are the keys of the server's previous secret keys (REELAY_SECRET_KEY_PREVIOUS):
	// tokens they signed still verify, so channels connected before a key rotation keep
	// working, and get tokens under Key at their next refresh. Nothing is minted with them.
	Previous [][]byte
}

const (
	expiringPrefix = "sbx2."
	refreshPrefix  = "sbr1."
)

// Access mints an access token for account that expires at exp.
func (m Mint) Access(account string, exp time.Time) string {
	// A nonce after the expiry, so that two tokens minted in the same second differ, as a
	// platform's do.
	n := make([]byte, 6)
	_, _ = rand.Read(n)
	e := strconv.FormatInt(exp.Unix(), 10) + "-" + hex.EncodeToString(n)
	return expiringPrefix + m.Platform + "." + account + "." + e + "." + m.mac("access", account, e)
}

// Refresh mints a refresh token for account; each is different (a nonce), so a rotated one is
// visibly new.
func (m Mint) Refresh(account string) string {
	n := make([]byte, 8)
	_, _ = rand.Read(n)
	nonce := hex.EncodeToString(n)
	return refreshPrefix + m.Platform + "." + account + "." + nonce + "." + m.mac("refresh", account, nonce)
}

// RefreshAccount verifies a refresh token and returns its account.
func (m Mint) RefreshAccount(token string) (string, bool) {
	p, account, extra, ok := m.split(token, refreshPrefix, "refresh")
	return account, ok && p == m.Platform && extra != ""
}

// ClientSecret is the secret of the sandbox OAuth client of this platform (client id
// ClientID): what reelay presents to the simulator's token endpoint.
func (m Mint) ClientSecret() string {
	return m.mac("client-secret", ClientID, "")
}

// ClientID is the client id of reelay's OAuth app on every simulator.
const ClientID = "reelay-sandbox"

func (m Mint) mac(kind, account, extra string) string { return m.macWith(m.Key, kind, account, extra) }

func (m Mint) macWith(key []byte, kind, account, extra string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("reelay-sandbox-oauth|" + kind + "|" + m.Platform + "|" + account + "|" + extra))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// split parses prefix + platform "." account "." extra "." mac, verifying the MAC.
func (m Mint) split(token, prefix, kind string) (platform, account, extra string, ok bool) {
	rest, found := strings.CutPrefix(token, prefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 4 {
		return "", "", "", false
	}
	platform, account, extra = parts[0], parts[1], parts[2]
	if platform != m.Platform {
		return "", "", "", false
	}
	for _, key := range m.keys() {
		if hmac.Equal([]byte(parts[3]), []byte(m.macWith(key, kind, account, extra))) {
			return platform, account, extra, true
		}
	}
	return "", "", "", false
}

// keys are the keys tokens are verified with: the current one first.
func (m Mint) keys() [][]byte { return append([][]byte{m.Key}, m.Previous...) }

// ParseAccessToken verifies a sandbox access token of either kind (a sandbox channel's, which
// never expires, or one the token endpoint issued) and returns its account and expiry (zero:
// never).
func (m Mint) ParseAccessToken(token string) (account string, exp time.Time, ok bool) {
	if strings.HasPrefix(token, tokenPrefix) {
		for _, key := range m.keys() {
			if p, a, ok := Parse(key, token); ok && p == m.Platform {
				return a, time.Time{}, true
			}
		}
		return "", time.Time{}, false
	}
	_, account, e, ok := m.split(token, expiringPrefix, "access")
	if !ok {
		return "", time.Time{}, false
	}
	e, _, _ = strings.Cut(e, "-")
	unix, err := strconv.ParseInt(e, 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return account, time.Unix(unix, 0), true
}
