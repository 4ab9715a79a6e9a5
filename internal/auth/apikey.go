// Package auth mints and checks reelay's API keys, verifies OIDC bearer tokens, and keeps track
// of when keys were last used.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strings"

	"github.com/reelay/reelay/internal/store"
)

// KeyPrefix starts every live key, so that a key is recognisable in a leak scanner and cannot be
// mistaken for a JWT.
const KeyPrefix = "rly_live_"

// keyRandomLen is the number of base62 characters after the prefix: 43 of them carry 256 bits.
const keyRandomLen = 43

// displayLen is how much of a key is kept to show in listings: the prefix and 4 characters.
const displayLen = len(KeyPrefix) + 4

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKey mints a key: the raw value, to be shown once, and the record to be stored.
func NewKey(name string) (raw string, record store.NewAPIKey) {
	var b strings.Builder
	b.Grow(len(KeyPrefix) + keyRandomLen)
	b.WriteString(KeyPrefix)
	limit := big.NewInt(int64(len(base62)))
	for range keyRandomLen {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			panic("auth: no randomness: " + err.Error())
		}
		b.WriteByte(base62[n.Int64()])
	}
	raw = b.String()
	return raw, store.NewAPIKey{Name: name, Prefix: raw[:displayLen], Hash: HashKey(raw)}
}

// HashKey is what the store keeps of a key. A plain SHA-256 suffices because keys carry 256
// random bits: there is nothing to brute-force, and lookups stay one indexed query.
func HashKey(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}

// LooksLikeKey tells a reelay key from other bearer tokens (OIDC JWTs).
func LooksLikeKey(s string) bool {
	if !strings.HasPrefix(s, KeyPrefix) || len(s) != len(KeyPrefix)+keyRandomLen {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}
