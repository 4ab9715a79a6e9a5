package auth

import (
	"encoding/json"
	"slices"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// TestParseJWKS: a key set is taken for the keys reelay can verify with; keys it cannot use
// (symmetric, for encryption, of a type go-jose does not know) are left out rather than
// failing the whole set, and a document that is no key set is an error.
func TestParseJWKS(t *testing.T) {
	t.Parallel()
	rsaKey, ecKey := newRSAKey(t, "rsa-1"), newECKey(t, "ec-1")
	pub := func(k signingKey) json.RawMessage {
		b, err := json.Marshal(k.public())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	encKey := ecKey.public()
	encKey.KeyID, encKey.Use, encKey.Algorithm = "enc-1", "enc", string(jose.ECDH_ES)
	enc, err := json.Marshal(encKey)
	if err != nil {
		t.Fatal(err)
	}
	set := func(keys ...json.RawMessage) []byte {
		b, err := json.Marshal(map[string]any{"keys": keys})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name    string
		body    []byte
		wantIDs []string
		wantErr bool
	}{
		{name: "two signing keys", body: set(pub(rsaKey), pub(ecKey)), wantIDs: []string{"rsa-1", "ec-1"}},
		{
			name: "unusable keys left out",
			body: set(
				json.RawMessage(`{"kty":"oct","kid":"hmac","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQ"}`),
				json.RawMessage(`{"kty":"EC","kid":"k1","crv":"secp256k1","x":"AA","y":"AA","alg":"ES256K"}`),
				json.RawMessage(`{"kty":"OKP","kid":"x448","crv":"X448","x":"AA"}`),
				json.RawMessage(`{"kty":"PQ","kid":"future"}`),
				enc,
				pub(rsaKey),
			),
			wantIDs: []string{"rsa-1"},
		},
		{name: "empty set", body: []byte(`{"keys":[]}`), wantIDs: []string{}},
		{name: "not JSON", body: []byte(`<html>`), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys, err := parseJWKS(tt.body)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parsed %d keys, want an error", len(keys))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, k := range keys {
				ids = append(ids, k.KeyID)
			}
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("keys %v, want %v", ids, tt.wantIDs)
			}
		})
	}
}
