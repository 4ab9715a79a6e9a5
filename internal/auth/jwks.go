package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	// defaultKeyRefreshInterval is the least time between two fetches of the key set that a
	// token's unknown key id may cause. Anyone can make up a token with a new kid, so without
	// this bound every forged token would be a request to the identity provider; with it, a
	// flood of them costs the provider one request a minute. Providers publish a new key well
	// before they sign with it, so a genuine rotation is seen at the next refresh.
	defaultKeyRefreshInterval = time.Minute

	// maxJWKSBytes bounds the key set read into memory: real ones are a few kilobytes.
	maxJWKSBytes = 1 << 20
)

// remoteKeys is the provider's published signing keys, fetched from its jwks_uri and kept
// until a token names a key it does not hold. It replaces go-oidc's RemoteKeySet, which
// refetches for every such token (and needed a second try to see a fresh rotation), so that
// forged tokens with made-up key ids cannot make reelay hammer the provider.
//
// At most one fetch runs at a time: tokens that need fresh keys while one is under way wait
// for it instead of starting their own. After a successful fetch, the next one may start only
// once refreshInterval has passed; after a failed one, once retryInterval has (the provider's
// answer may well be back sooner, and the token may be valid).
type remoteKeys struct {
	url             string
	client          *http.Client
	now             func() time.Time
	refreshInterval time.Duration
	retryInterval   time.Duration

	mu         sync.Mutex
	keys       []jose.JSONWebKey
	generation int           // counts the fetches that ended, so a verification sees whether keys moved
	lastStart  time.Time     // when the last fetch began
	lastErr    error         // how the last fetch failed; nil when it succeeded
	inflight   chan struct{} // closed when the fetch under way ends; nil when none is
	fetches    int           // fetches begun; none yet means the first may start at once
}

// verifyResult is what remoteKeys made of a token's signature.
type verifyResult struct {
	payload  []byte // the verified payload; nil when no key verified the signature
	fetchErr error  // the key set could not be fetched, so the token could not be judged
}

// verify checks jws against the cached keys, refreshing them (within the limits above) when
// none verifies it.
func (k *remoteKeys) verify(ctx context.Context, jws *jose.JSONWebSignature) verifyResult {
	kid := jws.Signatures[0].Header.KeyID
	res, fetching := k.fromCache(ctx, jws, kid)
	if fetching == nil {
		return res
	}
	select {
	case <-ctx.Done():
		return verifyResult{fetchErr: ctx.Err()}
	case <-fetching:
	}
	k.mu.Lock()
	keys, err := k.keys, k.lastErr
	k.mu.Unlock()
	if err != nil {
		return verifyResult{fetchErr: err}
	}
	return verifyResult{payload: verifyWith(jws, kid, keys)}
}

// fromCache judges jws by the cached keys. When none verifies it and the keys may be
// refreshed, it returns instead the fetch to wait for: the one under way, or a new one.
func (k *remoteKeys) fromCache(ctx context.Context, jws *jose.JSONWebSignature, kid string) (verifyResult, <-chan struct{}) {
	// Signatures are checked outside the lock, so that verifications do not queue behind one
	// another; the key slice is replaced by a fetch, never changed in place.
	k.mu.Lock()
	keys, gen := k.keys, k.generation
	k.mu.Unlock()
	if payload := verifyWith(jws, kid, keys); payload != nil {
		return verifyResult{payload: payload}, nil
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	if k.generation != gen {
		// A fetch ended meanwhile: its outcome decides (rarely, so under the lock).
		if k.lastErr != nil {
			return verifyResult{fetchErr: k.lastErr}, nil
		}
		return verifyResult{payload: verifyWith(jws, kid, k.keys)}, nil
	}
	if k.inflight != nil {
		return verifyResult{}, k.inflight
	}
	if k.fetches > 0 {
		since := k.now().Sub(k.lastStart)
		if k.lastErr != nil && since < k.retryInterval {
			return verifyResult{fetchErr: fmt.Errorf("the last fetch of the signing keys, %s ago, failed; retrying after %s: %w",
				since.Round(time.Millisecond), k.retryInterval, k.lastErr)}, nil
		}
		if k.lastErr == nil && since < k.refreshInterval {
			// Refreshed less than a minute ago: a key the provider did not publish then is
			// taken for a forgery, and answered 401 without asking the provider again.
			return verifyResult{}, nil
		}
	}
	k.inflight = make(chan struct{})
	k.lastStart = k.now()
	k.fetches++
	// The fetch outlives the caller that started it (others wait for it), so it gets no
	// cancellation from that caller; the client's timeout bounds it.
	go k.fetch(context.WithoutCancel(ctx), k.inflight)
	return verifyResult{}, k.inflight
}

// fetch reads the key set, stores the outcome and wakes the waiters.
func (k *remoteKeys) fetch(ctx context.Context, done chan struct{}) {
	keys, err := k.download(ctx)
	k.mu.Lock()
	if err == nil {
		k.keys = keys
	}
	k.lastErr = err
	k.generation++
	k.inflight = nil
	k.mu.Unlock()
	close(done)
}

func (k *remoteKeys) download(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("signing keys at %s: %w", k.url, err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("signing keys at %s: reading: %w", k.url, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("signing keys at %s: %s", k.url, res.Status)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("signing keys at %s: larger than %d bytes", k.url, maxJWKSBytes)
	}
	return parseJWKS(body)
}

// parseJWKS decodes a key set, leaving out the keys it cannot use (RFC 7517 section 5 asks
// to ignore unknown key types rather than reject the set), so that a provider publishing,
// say, an ES256K key beside its RSA ones still works.
func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("signing keys: not a JSON key set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := json.Unmarshal(raw, &key); err != nil {
			continue
		}
		if !key.Valid() || !key.IsPublic() || key.Use == "enc" {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// verifyWith returns the payload of jws when a key of keys with its kid (any key, when it
// names none) verifies it, else nil.
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) []byte {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload
		}
	}
	return nil
}

// keySetAdapter makes remoteKeys go-oidc's KeySet, recording the outcome in the keyProbe the
// context carries so that explain can tell a bad signature from an unreachable provider.
type keySetAdapter struct {
	keys *remoteKeys
}

// errNoKey is what go-oidc is told when no key verifies a token; explain words it for callers.
var errNoKey = errors.New("no signing key of the issuer verifies the token")

// VerifySignature implements oidc.KeySet.
func (a keySetAdapter) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	probe, _ := ctx.Value(keyProbeKey{}).(*keyProbe)
	if probe == nil {
		probe = &keyProbe{}
	}
	// go-oidc has already checked the algorithm against signingAlgs.
	jws, err := jose.ParseSigned(jwt, signingAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errors.New("malformed token")
	}
	probe.called = true
	res := a.keys.verify(ctx, jws)
	probe.payload, probe.fetchErr = res.payload, res.fetchErr
	switch {
	case res.fetchErr != nil:
		return nil, res.fetchErr
	case res.payload == nil:
		return nil, errNoKey
	}
	return res.payload, nil
}
