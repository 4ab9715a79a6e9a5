package media

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Errors of VerifySignedURL; an API answers 403 for both (410 would tell a prober which
// links once existed).
var (
	// ErrBadSignature: the link was not signed by this server for this media.
	ErrBadSignature = errors.New("media link signature is invalid")
	// ErrLinkExpired: the link is authentic but past its expiry.
	ErrLinkExpired = errors.New("media link has expired")
)

// MediaPath is the path under which reelay serves stored media by signed link.
const MediaPath = "/api/v1/media/"

// deriveKey derives a key for one purpose from the server secret, so that the secret that
// also encrypts tokens is never used directly as a MAC key.
func deriveKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func linkMAC(key []byte, id string, exp int64) []byte {
	m := hmac.New(sha256.New, key)
	// Separators keep id and expiry from running into each other.
	fmt.Fprintf(m, "media\x00%s\x00%d", id, exp)
	return m.Sum(nil)
}

// SignedURL returns a link to the content-addressed blob key that works for ttl:
// {public}/api/v1/media/{id}?exp={unix seconds}&sig={HMAC-SHA256 of id and exp}. Platforms
// that pull media (Instagram, TikTok pull mode, ...) fetch it; the same signing works for
// every storage backend because reelay serves the bytes itself.
func (s *Store) SignedURL(key string, ttl time.Duration) (string, error) {
	if len(s.linkKey) == 0 {
		return "", errors.New("media store: no signing key configured")
	}
	id, ok := IDFromKey(key)
	if !ok {
		return "", fmt.Errorf("media store: %q is not a content-addressed media key", key)
	}
	if ttl <= 0 {
		return "", errors.New("media store: link lifetime must be positive")
	}
	exp := s.now().Add(ttl).Unix()
	sig := base64.RawURLEncoding.EncodeToString(linkMAC(s.linkKey, id, exp))
	return s.public + MediaPath + id + "?exp=" + strconv.FormatInt(exp, 10) + "&sig=" + sig, nil
}

// VerifySignedURL checks the exp and sig query parameters of a media link for media id and
// returns the blob key to serve. The signature is compared in constant time and checked
// before the expiry, so a forged link learns nothing; an authentic but expired link gives
// ErrLinkExpired.
func (s *Store) VerifySignedURL(id string, query url.Values) (string, error) {
	if len(s.linkKey) == 0 {
		return "", ErrBadSignature
	}
	key, ok := KeyFromID(id)
	if !ok {
		return "", ErrBadSignature
	}
	exp, err := strconv.ParseInt(query.Get("exp"), 10, 64)
	if err != nil {
		return "", ErrBadSignature
	}
	sig, err := base64.RawURLEncoding.DecodeString(query.Get("sig"))
	if err != nil || !s.signedByUs(sig, id, exp) {
		return "", ErrBadSignature
	}
	if s.now().Unix() > exp {
		return "", ErrLinkExpired
	}
	return key, nil
}

// signedByUs tells whether sig is the link MAC under the current key or a previous one.
func (s *Store) signedByUs(sig []byte, id string, exp int64) bool {
	if hmac.Equal(sig, linkMAC(s.linkKey, id, exp)) {
		return true
	}
	for _, k := range s.previousLinkKeys {
		if hmac.Equal(sig, linkMAC(k, id, exp)) {
			return true
		}
	}
	return false
}
