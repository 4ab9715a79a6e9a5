package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, KeySize)
	b, err := NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := b.Seal([]byte(`{"token":"abc"}`), []byte("channel-1"))
	if bytes.Contains(sealed, []byte("abc")) {
		t.Fatal("sealed value contains the plaintext")
	}
	plain, err := b.Open(sealed, []byte("channel-1"))
	if err != nil || string(plain) != `{"token":"abc"}` {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	if again := b.Seal([]byte(`{"token":"abc"}`), []byte("channel-1")); bytes.Equal(again, sealed) {
		t.Error("two seals of the same value are equal: nonce reused")
	}

	other, _ := NewBox(bytes.Repeat([]byte{8}, KeySize))
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, tc := range map[string]struct {
		box    *Box
		sealed []byte
		ad     string
	}{
		"wrong key":       {other, sealed, "channel-1"},
		"other row":       {b, sealed, "channel-2"},
		"tampered":        {b, tampered, "channel-1"},
		"truncated":       {b, sealed[:10], "channel-1"},
		"unknown version": {b, append([]byte{9}, sealed[1:]...), "channel-1"},
		"empty":           {b, nil, "channel-1"},
	} {
		if _, err := tc.box.Open(tc.sealed, []byte(tc.ad)); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open error = %v, want ErrOpen", name, err)
		}
	}
	if _, err := NewBox([]byte("short")); err == nil {
		t.Error("NewBox accepted a short key")
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{0xfb}, KeySize)
	for _, s := range []string{base64.StdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key) + "\n"} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q) = %x, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("16 bytes only..."))} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	k1, created, err := LoadOrCreateKeyFile(path)
	if err != nil || !created || len(k1) != KeySize {
		t.Fatalf("create = %x, %v, %v", k1, created, err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", info.Mode().Perm())
	}
	k2, created, err := LoadOrCreateKeyFile(path)
	if err != nil || created || !bytes.Equal(k1, k2) {
		t.Fatalf("load = %x, %v, %v", k2, created, err)
	}
}

func TestDerive(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{1}, KeySize)
	a, b := Derive(key, "sandbox"), Derive(key, "media")
	if len(a) != 32 || bytes.Equal(a, b) || bytes.Equal(a, key) || !bytes.Equal(a, Derive(key, "sandbox")) {
		t.Errorf("Derive: %x %x", a, b)
	}
	if bytes.Equal(a, Derive(bytes.Repeat([]byte{2}, KeySize), "sandbox")) {
		t.Error("different keys derive the same key")
	}
}
