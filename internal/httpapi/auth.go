package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/store"
)

// principal is who a request acts for.
type principal struct {
	AccountID string
	// KeyID is the API key used; empty for an OIDC token.
	KeyID string
	// Credential identifies the credential for rate limiting: a key id or an OIDC subject.
	Credential string
}

func principalFrom(ctx context.Context) (principal, bool) {
	p, ok := ctx.Value(ctxPrincipal).(principal)
	return p, ok
}

// mustPrincipal is for handlers behind authenticate, where a principal always exists.
func mustPrincipal(r *http.Request) principal {
	p, ok := principalFrom(r.Context())
	if !ok {
		panic("httpapi: handler reached without authentication")
	}
	return p
}

// authenticate admits requests that carry a valid credential in a header, then applies the
// rate limits of the credential and its account. A credential in the URL was refused before
// (checkURLs).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An address that has failed its credentials too often is refused before its next
		// one is looked up: guessing is bounded, and so is the work it costs.
		if s.limits.failuresExhausted(w, r) {
			writeError(w, r, ErrRateLimited())
			return
		}
		p, err := s.resolveCredential(r)
		if err != nil {
			var ae *apierr.Error
			if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
				s.limits.credentialFailed(r)
			}
			writeError(w, r, err)
			return
		}
		if !s.limits.allowPrincipal(r.Context(), w, p) {
			writeError(w, r, ErrRateLimited())
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxPrincipal, p)))
	})
}

func (s *Server) resolveCredential(r *http.Request) (principal, error) {
	token := strings.TrimSpace(r.Header.Get("X-API-Key"))
	if token == "" {
		authz := r.Header.Get("Authorization")
		if authz == "" {
			return principal{}, apierr.Unauthorized("missing credentials: send an API key in the X-API-Key header or as Authorization: Bearer <key>")
		}
		scheme, rest, _ := strings.Cut(authz, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(rest) == "" {
			return principal{}, apierr.Unauthorized("unsupported Authorization scheme: use Authorization: Bearer <key or token>")
		}
		token = strings.TrimSpace(rest)
	}
	if auth.LooksLikeKey(token) {
		owner, err := s.store.LookupAPIKey(r.Context(), auth.HashKey(token))
		if errors.Is(err, store.ErrNotFound) {
			return principal{}, apierr.Unauthorized("invalid or revoked API key")
		}
		if err != nil {
			return principal{}, err
		}
		s.usage.Used(owner.KeyID, time.Now())
		return principal{AccountID: owner.AccountID, KeyID: owner.KeyID, Credential: "key:" + owner.KeyID}, nil
	}
	if s.oidc != nil && strings.Count(token, ".") == 2 {
		return s.resolveOIDC(r.Context(), token)
	}
	return principal{}, apierr.Unauthorized("invalid API key: reelay keys start with " + auth.KeyPrefix)
}

func (s *Server) resolveOIDC(ctx context.Context, token string) (principal, error) {
	ident, err := s.oidc.Verify(ctx, token)
	switch {
	case errors.Is(err, auth.ErrOIDCUnavailable):
		return principal{}, apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable,
			"the identity provider cannot be reached to verify the token; try again shortly").Wrap(err)
	case err != nil:
		return principal{}, apierr.Unauthorized(err.Error())
	}
	accountID, created, err := auth.AccountForIdentity(ctx, s.store, ident, s.oidcAutoCreate)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, apierr.Unauthorized("no reelay account is linked to this identity; an operator links one with `reelay accounts create --oidc-subject`")
	}
	if err != nil {
		return principal{}, err
	}
	if created {
		loggerFrom(ctx).Info("account created for a new OIDC subject", "account_id", accountID)
	}
	return principal{AccountID: accountID, Credential: "oidc:" + ident.Issuer + "|" + ident.Subject}, nil
}
