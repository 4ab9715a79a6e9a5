package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Account is a tenant: it owns projects, keys and everything below them.
type Account struct {
	ID               string
	Name             string
	MonthlyPostLimit *int // nil: unlimited
	AICredits        int64
	Suspended        bool
	CreatedAt        time.Time
}

// NewAccount is what CreateAccount needs. Key is minted by the caller (internal/auth), so that
// the store never sees a raw key.
type NewAccount struct {
	Name             string
	MonthlyPostLimit *int
	AICredits        int64
	// Key is the account's first API key; nil for an account that signs in with OIDC only.
	Key *NewAPIKey
	// Identity, when set, links an OIDC issuer and subject to the new account.
	Identity *Identity
}

// Identity is an OIDC issuer and subject linked to an account.
type Identity struct {
	Issuer  string
	Subject string
}

// CreatedAccount is the outcome of CreateAccount.
type CreatedAccount struct {
	Account Account
	Project Project
	Key     APIKey
}

// DefaultProjectName is the name of the project every new account starts with.
const DefaultProjectName = "Default"

// CreateAccount creates an account, its "Default" project and its first API key (or OIDC
// identity) in one transaction, so that an account is never left without a way in.
func (s *Store) CreateAccount(ctx context.Context, na NewAccount) (CreatedAccount, error) {
	if na.AICredits < 0 {
		return CreatedAccount{}, fmt.Errorf("store: create account: AI credits %d are negative", na.AICredits)
	}
	var out CreatedAccount
	err := s.InTx(ctx, func(tx *Tx) error {
		t := now()
		a := Account{ID: uuid.NewString(), Name: na.Name, MonthlyPostLimit: na.MonthlyPostLimit,
			AICredits: na.AICredits, CreatedAt: t}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_post_limit, ai_credits, suspended, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, a.ID, a.Name, nullInt(a.MonthlyPostLimit), a.AICredits, false, t)
		if err != nil {
			return fmt.Errorf("store: create account: %w", err)
		}
		if a.AICredits > 0 {
			// The starting balance is the ledger's first row, so that its deltas sum to the balance.
			if _, err := tx.insertLedger(ctx, LedgerEntry{AccountID: a.ID, Delta: a.AICredits, BalanceAfter: a.AICredits,
				Kind: CreditGrant, Reason: "account created", CreatedAt: t}); err != nil {
				return err
			}
		}
		p, err := createProject(ctx, tx.tx, a.ID, DefaultProjectName, "")
		if err != nil {
			return err
		}
		var k APIKey
		if na.Key != nil {
			if k, err = createAPIKey(ctx, tx.tx, a.ID, *na.Key); err != nil {
				return err
			}
		}
		if na.Identity != nil {
			if err := linkIdentity(ctx, tx.tx, a.ID, *na.Identity); err != nil {
				return err
			}
		}
		out = CreatedAccount{Account: a, Project: p, Key: k}
		return nil
	})
	return out, err
}

// GetAccount reads one account.
func (s *Store) GetAccount(ctx context.Context, id string) (Account, error) {
	if !ValidID(id) {
		return Account{}, ErrNotFound
	}
	row := s.read.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id)
	a, err := scanAccount(row)
	return a, notFound(err)
}

const accountColumns = `id, name, monthly_post_limit, ai_credits, suspended, created_at`

func scanAccount(r scanner) (Account, error) {
	var a Account
	var limit sql.NullInt64
	err := r.Scan(&a.ID, &a.Name, &limit, &a.AICredits, &a.Suspended, &a.CreatedAt)
	a.MonthlyPostLimit = intPtr(limit)
	a.CreatedAt = a.CreatedAt.UTC()
	return a, err
}

// CountAccounts tells how many accounts exist; the first start of the server creates one when
// there are none.
func (s *Store) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n)
	return n, err
}

// AccountForIdentity returns the id of the account linked to an OIDC issuer and subject.
func (s *Store) AccountForIdentity(ctx context.Context, id Identity) (string, error) {
	var accountID string
	err := s.read.QueryRowContext(ctx, `SELECT account_id FROM account_identities WHERE issuer = $1 AND subject = $2`,
		id.Issuer, id.Subject).Scan(&accountID)
	return accountID, notFound(err)
}

// LinkIdentity links an OIDC issuer and subject to an account. A subject already linked to an
// account is a conflict.
func (s *Store) LinkIdentity(ctx context.Context, accountID string, id Identity) error {
	return linkIdentity(ctx, s.write, accountID, id)
}

func linkIdentity(ctx context.Context, q queryer, accountID string, id Identity) error {
	_, err := q.ExecContext(ctx, `INSERT INTO account_identities (issuer, subject, account_id, created_at) VALUES ($1, $2, $3, $4)`,
		id.Issuer, id.Subject, accountID, now())
	if isUniqueViolation(err) {
		return fmt.Errorf("store: identity %s already linked: %w", id.Subject, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: link identity: %w", err)
	}
	return nil
}

func nullInt(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

func intPtr(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time.UTC()
	return &v
}

// ValidID reports whether id is a UUID in its canonical form, the form of every id reelay
// hands out. The store answers other ids with ErrNotFound before they reach PostgreSQL, which
// would otherwise fail on the cast; the API and request validation use it too.
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	_, err := uuid.Parse(id)
	return err == nil
}

// ListAccounts lists every account, oldest first (for operators).
func (s *Store) ListAccounts(ctx context.Context) ([]Account, error) {
	accounts, err := collect(scanAccount)(s.read.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY created_at, id`))
	if err != nil {
		return nil, fmt.Errorf("store: list accounts: %w", err)
	}
	return accounts, nil
}

// AccountUpdate names the fields of an account to change; a nil field stays as it is.
type AccountUpdate struct {
	Name *string
	// MonthlyPostLimit, when set, replaces the limit; point it at a nil *int for unlimited.
	MonthlyPostLimit **int
	AICredits        *int64
	Suspended        *bool
}

// UpdateAccount changes the given fields of an account and returns the account as it is
// afterwards. An unknown or malformed id is ErrNotFound; an update that names no field only
// reads the account. Setting AICredits sets the balance still to spend (credits held by open
// reservations are not part of it) and records the difference in the credit ledger as an
// adjustment, in the same transaction and under the same row lock as every other movement.
func (s *Store) UpdateAccount(ctx context.Context, id string, u AccountUpdate) (Account, error) {
	if !ValidID(id) {
		return Account{}, ErrNotFound
	}
	if u.AICredits != nil && *u.AICredits < 0 {
		return Account{}, fmt.Errorf("store: update account: AI credits %d are negative", *u.AICredits)
	}
	set := ""
	var args []any
	add := func(column string, v any) {
		if set != "" {
			set += ", "
		}
		args = append(args, v)
		set += fmt.Sprintf("%s = $%d", column, len(args))
	}
	if u.Name != nil {
		add("name", *u.Name)
	}
	if u.MonthlyPostLimit != nil {
		add("monthly_post_limit", nullInt(*u.MonthlyPostLimit))
	}
	if u.AICredits != nil {
		add("ai_credits", *u.AICredits)
	}
	if u.Suspended != nil {
		add("suspended", *u.Suspended)
	}
	if set == "" {
		return s.GetAccount(ctx, id)
	}
	args = append(args, id)
	err := s.InTx(ctx, func(tx *Tx) error {
		var before int64
		if u.AICredits != nil {
			var err error
			if before, err = tx.lockCredits(ctx, id); err != nil {
				return err
			}
		}
		res, err := tx.tx.ExecContext(ctx, fmt.Sprintf(`UPDATE accounts SET %s WHERE id = $%d`, set, len(args)), args...)
		if err != nil {
			return fmt.Errorf("store: update account: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if u.AICredits != nil && *u.AICredits != before {
			_, err = tx.insertLedger(ctx, LedgerEntry{AccountID: id, Delta: *u.AICredits - before, BalanceAfter: *u.AICredits,
				Kind: CreditAdjust, Reason: fmt.Sprintf("balance set to %d", *u.AICredits), CreatedAt: now()})
		}
		return err
	})
	if err != nil {
		return Account{}, err
	}
	return s.GetAccount(ctx, id)
}
