package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// FuzzOIDCVerify gives arbitrary strings to Verify as bearer tokens, against a provider with
// an RSA and an EC key. Nothing may panic; a token is accepted only if its signature checks
// out, independently, under one of the provider's keys; a refusal is always ErrInvalidToken
// (the provider is up) and never repeats the token.
func FuzzOIDCVerify(f *testing.F) {
	rsaKey, ecKey := newRSAKey(f, "rsa-1"), newECKey(f, "ec-1")
	idp := newTestIdP(f, rsaKey, ecKey)
	v := idp.verifier()
	stranger := newECKey(f, "ec-1") // the provider's kid, another key

	valid := rsaKey.sign(f, claims(idp, nil))
	parts := strings.Split(valid, ".")
	otherPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + idp.srv.URL + `","sub":"admin","aud":"reelay-api","exp":9999999999}`))
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"rsa-1"}`))
	hsHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"rsa-1"}`))
	for _, s := range []string{
		valid,
		ecKey.sign(f, claims(idp, nil)),
		ecKey.sign(f, claims(idp, map[string]any{"sub": nil})),
		ecKey.sign(f, claims(idp, map[string]any{"aud": []string{"x", testAudience}, "nbf": 1})),
		stranger.sign(f, claims(idp, nil)),
		parts[0] + "." + otherPayload + "." + parts[2],
		noneHeader + "." + otherPayload + ".",
		hsHeader + "." + otherPayload + "." + parts[2],
		parts[0] + "." + parts[1],
		valid + ".",
		"a.b.c", "...", "", "Bearer " + valid, `{"payload":"e30","signatures":[]}`,
	} {
		f.Add(s)
	}
	public := []jose.JSONWebKey{rsaKey.public(), ecKey.public()}
	f.Fuzz(func(t *testing.T, token string) {
		ident, err := v.Verify(context.Background(), token)
		if err == nil {
			if !signedBy(token, public) {
				t.Fatalf("accepted %q (as %+v) without a valid signature", token, ident)
			}
			return
		}
		if !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrOIDCUnavailable) {
			t.Fatalf("refused %q with %v, want ErrInvalidToken alone", token, err)
		}
		if len(token) >= 16 && strings.Contains(err.Error(), token) {
			t.Fatalf("the error repeats the token: %v", err)
		}
	})
}

// signedBy reports whether token is a compact JWS whose signature one of keys verifies,
// checked with go-jose directly rather than through the verifier.
func signedBy(token string, keys []jose.JSONWebKey) bool {
	jws, err := jose.ParseSignedCompact(token, signingAlgs)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if _, err := jws.Verify(k.Key); err == nil {
			return true
		}
	}
	return false
}
