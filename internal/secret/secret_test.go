package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

func TestRotation(t *testing.T) {
	t.Parallel()
	keyA, keyB, keyC := bytes.Repeat([]byte{0xa}, KeySize), bytes.Repeat([]byte{0xb}, KeySize), bytes.Repeat([]byte{0xc}, KeySize)
	box := func(current []byte, previous ...[]byte) *Box {
		t.Helper()
		b, err := NewBox(current, previous...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ad := []byte("channel-1")
	sealedA := box(keyA).Seal([]byte("token"), ad)
	sealedB := box(keyB).Seal([]byte("token"), ad)
	for _, tc := range []struct {
		name         string
		box          *Box
		sealed       []byte
		opens        bool
		wantResealed bool
	}{
		{"current key", box(keyB, keyA), sealedB, true, false},
		{"previous key", box(keyB, keyA), sealedA, true, true},
		{"second previous key", box(keyB, keyC, keyA), sealedA, true, true},
		{"previous key removed", box(keyB), sealedA, false, false},
		{"unknown key", box(keyC, keyB), sealedA, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, err := tc.box.Open(tc.sealed, ad)
			if tc.opens != (err == nil) || (tc.opens && string(plain) != "token") {
				t.Fatalf("Open = %q, %v; want opens %v", plain, err, tc.opens)
			}
			if !tc.opens && !errors.Is(err, ErrOpen) {
				t.Errorf("Open error = %v, want ErrOpen", err)
			}
			if _, err := tc.box.Open(tc.sealed, []byte("channel-2")); !errors.Is(err, ErrOpen) {
				t.Errorf("opened with another row's associated data: %v", err)
			}
			out, resealed, err := tc.box.Reseal(tc.sealed, ad)
			if !tc.opens {
				if !errors.Is(err, ErrOpen) {
					t.Errorf("Reseal error = %v, want ErrOpen", err)
				}
				return
			}
			if err != nil || resealed != tc.wantResealed {
				t.Fatalf("Reseal = resealed %v, %v; want %v", resealed, err, tc.wantResealed)
			}
			if !resealed && !bytes.Equal(out, tc.sealed) {
				t.Error("Reseal rewrote a value already under the current key")
			}
			// Whatever Reseal returns opens with the current key alone: the previous ones can go.
			if plain, err := box(keyB).Open(out, ad); err != nil || string(plain) != "token" {
				t.Errorf("resealed value under the current key alone: %q, %v", plain, err)
			}
		})
	}

	// Sealing always uses the current key: a box without the previous keys opens it, a box
	// holding only a previous key does not.
	sealed := box(keyB, keyA).Seal([]byte("new"), ad)
	if _, err := box(keyB).Open(sealed, ad); err != nil {
		t.Errorf("current key alone does not open a new seal: %v", err)
	}
	if _, err := box(keyA).Open(sealed, ad); !errors.Is(err, ErrOpen) {
		t.Errorf("a previous key opens a new seal: %v", err)
	}
	if _, err := NewBox(keyB, []byte("short")); err == nil {
		t.Error("NewBox accepted a short previous key")
	}
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	a, b := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	encA, encB := base64.StdEncoding.EncodeToString(a), base64.RawURLEncoding.EncodeToString(b)
	for _, tc := range []struct {
		list    string
		want    [][]byte
		wantErr string
	}{
		{"", nil, ""},
		{encA, [][]byte{a}, ""},
		{encA + ", " + encB + ",", [][]byte{a, b}, ""},
		{encA + ",not base64!", nil, "key 2"},
		{base64.StdEncoding.EncodeToString([]byte("short")), nil, "key 1"},
	} {
		got, err := ParseKeys(tc.list)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseKeys(%q) error = %v, want one naming %q", tc.list, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), encA) {
				t.Errorf("ParseKeys error shows a key: %v", err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseKeys(%q) = %d keys, %v; want %d", tc.list, len(got), err, len(tc.want))
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], tc.want[i]) {
				t.Errorf("ParseKeys(%q)[%d] = %x", tc.list, i, got[i])
			}
		}
	}
}

func TestNewKey(t *testing.T) {
	t.Parallel()
	k1, k2 := NewKey(), NewKey()
	if k1 == k2 {
		t.Fatal("two new keys are equal")
	}
	if key, err := ParseKey(k1); err != nil || len(key) != KeySize {
		t.Errorf("ParseKey(NewKey()) = %d bytes, %v", len(key), err)
	}
}

func TestDeriveAll(t *testing.T) {
	t.Parallel()
	a, b := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	got := DeriveAll([][]byte{a, b}, "media links")
	if len(got) != 2 || !bytes.Equal(got[0], Derive(a, "media links")) || !bytes.Equal(got[1], Derive(b, "media links")) {
		t.Errorf("DeriveAll = %x", got)
	}
	if len(DeriveAll(nil, "x")) != 0 {
		t.Error("DeriveAll(nil) is not empty")
	}
}
