package auth

import (
	"context"
	"errors"

	"github.com/reelay/reelay/internal/store"
)

// AccountForIdentity is the account an OIDC identity acts for: the one linked to it or, with
// autoCreate, a new account for a subject seen for the first time (created says so). It is
// store.ErrNotFound when none is linked and none may be made. The API's bearer tokens and the
// web dashboard's sign-in both map identities with it.
func AccountForIdentity(ctx context.Context, st *store.Store, ident Identity, autoCreate bool) (accountID string, created bool, err error) {
	id := store.Identity{Issuer: ident.Issuer, Subject: ident.Subject}
	accountID, err = st.AccountForIdentity(ctx, id)
	if !errors.Is(err, store.ErrNotFound) || !autoCreate {
		return accountID, false, err
	}
	name := ident.Name
	if name == "" {
		name = ident.Email
	}
	if name == "" {
		name = ident.Subject
	}
	ca, err := st.CreateAccount(ctx, store.NewAccount{Name: name, Identity: &id})
	if errors.Is(err, store.ErrConflict) {
		// Another request for the same new subject won the race; use its account.
		accountID, err = st.AccountForIdentity(ctx, id)
		return accountID, false, err
	}
	if err != nil {
		return "", false, err
	}
	return ca.Account.ID, true, nil
}
