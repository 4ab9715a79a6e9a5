// Package secret seals platform credentials for storage with AES-256-GCM under the server's
// secret key, and loads or creates that key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of the secret key: AES-256.
const KeySize = 32

// version prefixes every sealed value, so that a later key rotation can tell old from new.
const version byte = 1

// ErrOpen is returned when a sealed value cannot be opened: wrong key, or tampered data.
var ErrOpen = errors.New("secret: cannot open sealed value")

// Box seals and opens values with one key.
type Box struct{ aead cipher.AEAD }

// NewBox returns a Box for a 32-byte key.
func NewBox(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext. associated binds the result to its context (a channel id, say), so a
// sealed value copied to another row does not open there.
func (b *Box) Seal(plaintext, associated []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: no randomness: " + err.Error())
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+b.aead.Overhead())
	out = append(out, version)
	out = append(out, nonce...)
	return b.aead.Seal(out, nonce, plaintext, associated)
}

// Open decrypts a value made by Seal with the same associated data.
func (b *Box) Open(sealed, associated []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < 1+ns+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], associated)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// ParseKey decodes a base64 (standard or URL alphabet, padded or not) 32-byte key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("secret: key must decode to %d bytes, got %d", KeySize, len(k))
			}
			return k, nil
		}
	}
	return nil, errors.New("secret: key is not base64")
}

// LoadOrCreateKeyFile reads the key kept in path, creating it (mode 0600) when absent. created
// tells the caller that a new key was made.
func LoadOrCreateKeyFile(path string) (key []byte, created bool, err error) {
	data, err := os.ReadFile(path)
	if err == nil {
		key, err = ParseKey(string(data))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	// O_EXCL: two processes starting at once must not each write a different key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateKeyFile(path)
	}
	if err != nil {
		return nil, false, err
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, false, err
	}
	return key, true, f.Close()
}

// LoadKeyFile reads the key kept in path; a missing file is no error and
// yields a nil key.
func LoadKeyFile(path string) (key []byte, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	key, err = ParseKey(string(data))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return key, true, nil
}

// Derive returns a key for one purpose (signing sandbox tokens, media links, ...) from the
// secret key, so that one configured secret serves every purpose without reusing a key across
// them.
func Derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("reelay derive: " + purpose))
	return m.Sum(nil)
}
