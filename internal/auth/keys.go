package auth

import (
	"context"
	"errors"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

// Keys is the service behind both front doors' API keys (POST /api/v1/api-keys and the
// dashboard's keys page): it checks a key's name once, mints it and stores it, so that the
// same mistake gets the same words from either.
type Keys struct {
	Store *store.Store
}

// MaxKeyNameLen is the longest name a key may have, in characters.
const MaxKeyNameLen = 100

// List is the account's active keys, oldest first.
func (k Keys) List(ctx context.Context, accountID string) ([]store.APIKey, error) {
	return k.Store.ListAPIKeys(ctx, accountID)
}

// Create mints a key named name for the account and stores it, within the account's cap of
// keys (the store counts inside the insert's transaction). It answers the raw key, to be
// shown once, and its record.
func (k Keys) Create(ctx context.Context, accountID, name string) (raw string, key store.APIKey, err error) {
	var f apierr.Fields
	f.Name("name", name, MaxKeyNameLen)
	if err := f.Err(); err != nil {
		return "", store.APIKey{}, err
	}
	raw, rec := NewKey(name)
	if key, err = k.Store.CreateAPIKey(ctx, accountID, rec); err != nil {
		return "", store.APIKey{}, err
	}
	return raw, key, nil
}

// Revoke revokes one of the account's active keys; another account's, an unknown or an
// already revoked key is not found.
func (k Keys) Revoke(ctx context.Context, accountID, id string) error {
	err := k.Store.RevokeAPIKey(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("API key")
	}
	return err
}
