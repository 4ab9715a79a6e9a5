// Package webhooks delivers reelay's lifecycle events to the URLs accounts register, per the
// Standard Webhooks convention (https://www.standardwebhooks.com): each event is POSTed with
// the headers webhook-id (the event's id, the same on every retry), webhook-timestamp (unix
// seconds of the attempt) and webhook-signature ("v1," + base64 of the HMAC-SHA256 of
// "id.timestamp.body" keyed with the webhook's secret). The store records an event's
// deliveries in the transaction of the change that caused it (internal/store, webhooks.go);
// the Worker here sends them as River jobs, retried with back-off.
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/secret"
)

// The headers of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret, as the convention asks, so that a secret is
// recognisable for what it is.
const SecretPrefix = "whsec_"

// secretBytes is the length of a new secret's key: the convention asks for 24 to 64 bytes.
const secretBytes = 32

// ErrSecret is returned for a string that is not a signing secret.
var ErrSecret = errors.New("webhooks: not a whsec_ signing secret")

// NewSecret makes a signing secret: "whsec_" and the base64 of 32 random bytes.
func NewSecret() string {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		panic("webhooks: no randomness: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Key decodes a signing secret into the HMAC key: the base64 after the prefix (a secret without
// the prefix is accepted too, as the convention's libraries do).
func Key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, ErrSecret
	}
	return k, nil
}

// Sign returns the webhook-signature value of one attempt: "v1," and the base64 of the
// HMAC-SHA256, under key, of msgID "." timestamp "." body.
func Sign(key []byte, msgID string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SealSecret seals a webhook's secret for the database, bound to the webhook's id (a sealed
// secret copied to another row does not open there).
func SealSecret(box *secret.Box, webhookID, secret string) []byte {
	return box.Seal([]byte(secret), SecretAD(webhookID))
}

// OpenSecret opens what SealSecret sealed.
func OpenSecret(box *secret.Box, webhookID string, sealed []byte) (string, error) {
	b, err := box.Open(sealed, SecretAD(webhookID))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// SecretAD binds a sealed signing secret to its webhook.
func SecretAD(webhookID string) []byte { return []byte("webhook secret:" + webhookID) }
