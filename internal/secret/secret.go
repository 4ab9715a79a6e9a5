// Package secret seals platform credentials for storage with AES-256-GCM under the server's
// secret key, opening them with that key or one it replaced (a rotation in progress), and
// loads or creates the key.
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

// version prefixes every sealed value: the format's, not the key's. A value sealed under a
// previous key has the same version and is told apart by which key opens it (AES-GCM's tag
// refuses every other), which keeps the stored values free of anything naming a key.
const version byte = 1

// ErrOpen is returned when a sealed value cannot be opened: wrong key, or tampered data.
var ErrOpen = errors.New("secret: cannot open sealed value")

// Box seals values with the current key and opens them with the current key or, while a key
// rotation is under way, with one of the previous keys.
type Box struct {
	aead     cipher.AEAD   // the current key's
	previous []cipher.AEAD // tried in order when the current key does not open a value
}

// NewBox returns a Box sealing with key and opening with key and then each of previous (all
// 32 bytes).
func NewBox(key []byte, previous ...[]byte) (*Box, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	b := &Box{aead: aead}
	for i, k := range previous {
		p, err := newAEAD(k)
		if err != nil {
			return nil, fmt.Errorf("previous key %d: %w", i+1, err)
		}
		b.previous = append(b.previous, p)
	}
	return b, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
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

// Open decrypts a value made by Seal with the same associated data, under the current key or
// a previous one.
func (b *Box) Open(sealed, associated []byte) ([]byte, error) {
	plain, _, err := b.open(sealed, associated)
	return plain, err
}

// Reseal returns sealed under the current key: sealed itself when the current key opens it
// (resealed false), a new sealed value when only a previous key does. A value no key opens
// gives ErrOpen.
func (b *Box) Reseal(sealed, associated []byte) (out []byte, resealed bool, err error) {
	plain, current, err := b.open(sealed, associated)
	if err != nil {
		return nil, false, err
	}
	if current {
		return sealed, false, nil
	}
	return b.Seal(plain, associated), true, nil
}

// open tries the current key, then the previous ones; current tells which opened the value.
func (b *Box) open(sealed, associated []byte) (plain []byte, current bool, err error) {
	if plain, ok := openWith(b.aead, sealed, associated); ok {
		return plain, true, nil
	}
	for _, p := range b.previous {
		if plain, ok := openWith(p, sealed, associated); ok {
			return plain, false, nil
		}
	}
	return nil, false, ErrOpen
}

func openWith(aead cipher.AEAD, sealed, associated []byte) ([]byte, bool) {
	ns := aead.NonceSize()
	if len(sealed) < 1+ns+aead.Overhead() || sealed[0] != version {
		return nil, false
	}
	plain, err := aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], associated)
	return plain, err == nil
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

// ParseKeys decodes a comma-separated list of keys (REELAY_SECRET_KEY_PREVIOUS); blank entries
// are skipped, so "" is no key. An error names the entry by position, never by value.
func ParseKeys(list string) ([][]byte, error) {
	var keys [][]byte
	for i, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// NewKey returns a new random key, base64 encoded as REELAY_SECRET_KEY takes it.
func NewKey() string {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		panic("secret: no randomness: " + err.Error())
	}
	return base64.StdEncoding.EncodeToString(key)
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

// DeriveAll derives purpose's key from each of keys, in order: the current key's first, then
// the previous keys', for a verifier that accepts what any of them signed during a rotation.
func DeriveAll(keys [][]byte, purpose string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = Derive(k, purpose)
	}
	return out
}

// Derive returns a key for one purpose (signing sandbox tokens, media links, ...) from the
// secret key, so that one configured secret serves every purpose without reusing a key across
// them.
func Derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("reelay derive: " + purpose))
	return m.Sum(nil)
}
