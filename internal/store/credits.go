package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
)

// AI credits. accounts.ai_credits is the balance an account may still spend: a reservation
// takes its credits out at once, so that work running in parallel cannot spend the same
// credits twice, and a refund puts them back. Every movement writes a credit_ledger row in the
// same transaction, after the account row is locked (FOR UPDATE on PostgreSQL; SQLite has one
// writer), so an account's ledger, read in id order, replays its balance exactly.

// ErrInsufficientCredits is returned (inside an *InsufficientCreditsError, which tells the
// balance and the amount needed) when an account has fewer credits than an operation takes.
var ErrInsufficientCredits = errors.New("insufficient credits")

// InsufficientCreditsError is the refusal of a reservation or removal larger than the balance.
type InsufficientCreditsError struct {
	Balance int64 // what the account has
	Needed  int64 // what the operation would take
}

func (e *InsufficientCreditsError) Error() string {
	return fmt.Sprintf("insufficient credits: %d needed, %d available", e.Needed, e.Balance)
}

// Unwrap makes errors.Is(err, ErrInsufficientCredits) hold.
func (e *InsufficientCreditsError) Unwrap() error { return ErrInsufficientCredits }

// ErrReservationClosed is returned when a reservation that was settled is refunded, or one that
// was refunded is settled; nothing moves. It is an ErrConflict. Repeating the close a
// reservation already had is not an error (see SettleCredits).
var ErrReservationClosed = fmt.Errorf("reservation already closed: %w", ErrConflict)

// The kinds of ledger rows.
const (
	CreditGrant   = "grant"   // credits given (account creation, accounts credits add)
	CreditReserve = "reserve" // credits taken for work about to run
	CreditSettle  = "settle"  // the work succeeded: the reserved credits are spent (delta 0)
	CreditRefund  = "refund"  // the work failed: the reserved credits came back
	CreditAdjust  = "adjust"  // an operator set or lowered the balance
)

// The states of a reservation.
const (
	ReservationHeld     = "held"
	ReservationSettled  = "settled"
	ReservationRefunded = "refunded"
)

// Reservation is credits set aside for one piece of work.
type Reservation struct {
	ID        string
	AccountID string
	Amount    int64
	Status    string // ReservationHeld, ReservationSettled or ReservationRefunded
	Purpose   string
	CreatedAt time.Time
	ClosedAt  *time.Time
	// Balance is the account's balance right after the call that returned the reservation.
	Balance int64
}

// LedgerEntry is one movement of an account's credits.
type LedgerEntry struct {
	ID            int64 // increasing in the order the movements happened
	AccountID     string
	Delta         int64 // signed; 0 for a settle
	BalanceAfter  int64
	Kind          string // CreditGrant, CreditReserve, ...
	ReservationID string // the reservation a reserve, settle or refund belongs to; "" otherwise
	Reason        string
	CreatedAt     time.Time
}

// ReserveCredits takes amount credits from an account for work about to run (purpose says
// what, for the ledger). An account with fewer credits is refused with an
// *InsufficientCreditsError and nothing is written. The reservation must later be closed with
// SettleCredits or RefundCredits.
func (s *Store) ReserveCredits(ctx context.Context, accountID string, amount int64, purpose string) (Reservation, error) {
	var r Reservation
	err := s.InTx(ctx, func(tx *Tx) (err error) {
		r, err = tx.ReserveCredits(ctx, accountID, amount, purpose)
		return err
	})
	if err != nil {
		return Reservation{}, err
	}
	return r, nil
}

// ReserveCredits is Store.ReserveCredits inside a transaction, so that the reservation commits
// together with the job that will do the work, or not at all.
func (t *Tx) ReserveCredits(ctx context.Context, accountID string, amount int64, purpose string) (Reservation, error) {
	if amount <= 0 {
		return Reservation{}, fmt.Errorf("store: reserve credits: amount %d is not positive", amount)
	}
	if !ValidID(accountID) {
		return Reservation{}, ErrNotFound
	}
	balance, err := t.lockCredits(ctx, accountID)
	if err != nil {
		return Reservation{}, err
	}
	if balance < amount {
		return Reservation{}, &InsufficientCreditsError{Balance: balance, Needed: amount}
	}
	at := now()
	r := Reservation{ID: uuid.NewString(), AccountID: accountID, Amount: amount, Status: ReservationHeld,
		Purpose: purpose, CreatedAt: at, Balance: balance - amount}
	if err := t.setCredits(ctx, accountID, r.Balance); err != nil {
		return Reservation{}, err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO credit_reservations (id, account_id, amount, status, purpose, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, accountID, amount, ReservationHeld, purpose, at); err != nil {
		return Reservation{}, fmt.Errorf("store: reserve credits: %w", err)
	}
	if _, err := t.insertLedger(ctx, LedgerEntry{AccountID: accountID, Delta: -amount, BalanceAfter: r.Balance,
		Kind: CreditReserve, ReservationID: r.ID, Reason: purpose, CreatedAt: at}); err != nil {
		return Reservation{}, err
	}
	return r, nil
}

// SettleCredits closes a held reservation as spent: the balance does not move (the credits
// left it when they were reserved) and the ledger records the settle with delta 0.
//
// Closing is exactly-once: settling a reservation that is already settled changes nothing and
// returns it without error, so that a job retried after its settle committed is harmless;
// settling a refunded reservation is ErrReservationClosed. An unknown id is ErrNotFound.
func (s *Store) SettleCredits(ctx context.Context, reservationID string) (Reservation, error) {
	return s.closeReservation(ctx, reservationID, ReservationSettled, "")
}

// RefundCredits closes a held reservation as not spent: its credits go back to the balance and
// the ledger records the refund with reason (the reservation's purpose when empty). Like
// SettleCredits it is exactly-once: refunding a refunded reservation changes nothing and is
// not an error, refunding a settled one is ErrReservationClosed.
func (s *Store) RefundCredits(ctx context.Context, reservationID, reason string) (Reservation, error) {
	return s.closeReservation(ctx, reservationID, ReservationRefunded, reason)
}

// SettleCredits is Store.SettleCredits inside a transaction, so that a job can settle in the
// transaction that records its result.
func (t *Tx) SettleCredits(ctx context.Context, reservationID string) (Reservation, error) {
	return t.closeReservation(ctx, reservationID, ReservationSettled, "")
}

// RefundCredits is Store.RefundCredits inside a transaction.
func (t *Tx) RefundCredits(ctx context.Context, reservationID, reason string) (Reservation, error) {
	return t.closeReservation(ctx, reservationID, ReservationRefunded, reason)
}

func (s *Store) closeReservation(ctx context.Context, id, to, reason string) (Reservation, error) {
	var r Reservation
	err := s.InTx(ctx, func(tx *Tx) (err error) {
		r, err = tx.closeReservation(ctx, id, to, reason)
		return err
	})
	if err != nil {
		return Reservation{}, err
	}
	return r, nil
}

func (t *Tx) closeReservation(ctx context.Context, id, to, reason string) (Reservation, error) {
	if !ValidID(id) {
		return Reservation{}, ErrNotFound
	}
	// The account row is locked before the reservation's, the order ReserveCredits and
	// UpdateAccount take too, so that concurrent closes and reservations cannot deadlock.
	var accountID string
	if err := t.tx.QueryRowContext(ctx, `SELECT account_id FROM credit_reservations WHERE id = $1`, id).Scan(&accountID); err != nil {
		return Reservation{}, notFound(err)
	}
	balance, err := t.lockCredits(ctx, accountID)
	if err != nil {
		return Reservation{}, err
	}
	r, err := scanReservation(t.tx.QueryRowContext(ctx, `SELECT `+reservationColumns+`
		FROM credit_reservations WHERE id = $1`+t.forUpdate(), id))
	if err != nil {
		return Reservation{}, notFound(err)
	}
	r.Balance = balance
	switch {
	case r.Status == to:
		return r, nil
	case r.Status != ReservationHeld:
		return Reservation{}, fmt.Errorf("store: reservation %s is %s, cannot be %s: %w", id, r.Status, to, ErrReservationClosed)
	}
	at := now()
	entry := LedgerEntry{AccountID: accountID, BalanceAfter: balance, ReservationID: id, Reason: r.Purpose, CreatedAt: at}
	if to == ReservationRefunded {
		entry.Kind, entry.Delta = CreditRefund, r.Amount
		entry.BalanceAfter = balance + r.Amount
		if reason != "" {
			entry.Reason = reason
		}
		if err := t.setCredits(ctx, accountID, entry.BalanceAfter); err != nil {
			return Reservation{}, err
		}
	} else {
		entry.Kind = CreditSettle
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE credit_reservations SET status = $1, closed_at = $2 WHERE id = $3`,
		to, at, id); err != nil {
		return Reservation{}, fmt.Errorf("store: close reservation: %w", err)
	}
	if _, err := t.insertLedger(ctx, entry); err != nil {
		return Reservation{}, err
	}
	r.Status, r.ClosedAt, r.Balance = to, &at, entry.BalanceAfter
	return r, nil
}

// GetReservation reads a reservation (Balance is left zero).
func (s *Store) GetReservation(ctx context.Context, id string) (Reservation, error) {
	if !ValidID(id) {
		return Reservation{}, ErrNotFound
	}
	r, err := scanReservation(s.read.QueryRowContext(ctx, `SELECT `+reservationColumns+` FROM credit_reservations WHERE id = $1`, id))
	return r, notFound(err)
}

// AddCredits grants an account amount more credits (amount > 0) and returns the ledger row,
// whose BalanceAfter is the new balance.
func (s *Store) AddCredits(ctx context.Context, accountID string, amount int64, reason string) (LedgerEntry, error) {
	if amount <= 0 {
		return LedgerEntry{}, fmt.Errorf("store: add credits: amount %d is not positive", amount)
	}
	return s.moveCredits(ctx, accountID, amount, CreditGrant, reason)
}

// RemoveCredits takes amount credits (amount > 0) from an account outside any reservation, as
// an operator's adjustment. A balance cannot go below zero: asking for more than the account
// has is an *InsufficientCreditsError and changes nothing.
func (s *Store) RemoveCredits(ctx context.Context, accountID string, amount int64, reason string) (LedgerEntry, error) {
	if amount <= 0 {
		return LedgerEntry{}, fmt.Errorf("store: remove credits: amount %d is not positive", amount)
	}
	return s.moveCredits(ctx, accountID, -amount, CreditAdjust, reason)
}

func (s *Store) moveCredits(ctx context.Context, accountID string, delta int64, kind, reason string) (LedgerEntry, error) {
	if !ValidID(accountID) {
		return LedgerEntry{}, ErrNotFound
	}
	var e LedgerEntry
	err := s.InTx(ctx, func(tx *Tx) error {
		balance, err := tx.lockCredits(ctx, accountID)
		if err != nil {
			return err
		}
		switch {
		case delta < 0 && balance < -delta:
			return &InsufficientCreditsError{Balance: balance, Needed: -delta}
		case delta > 0 && balance > math.MaxInt64-delta:
			return fmt.Errorf("store: add credits: a balance of %d plus %d does not fit in 64 bits", balance, delta)
		}
		if err := tx.setCredits(ctx, accountID, balance+delta); err != nil {
			return err
		}
		e, err = tx.insertLedger(ctx, LedgerEntry{AccountID: accountID, Delta: delta, BalanceAfter: balance + delta,
			Kind: kind, Reason: reason, CreatedAt: now()})
		return err
	})
	return e, err
}

// LedgerFilter pages an account's ledger, newest first.
type LedgerFilter struct {
	Limit int // at most this many rows; 0 for all
	// BeforeID continues after the last row of the previous page (rows with a smaller id).
	BeforeID int64
}

// CreditLedger lists an account's credit movements, newest first. It does not check that the
// account exists: an unknown account has an empty ledger.
func (s *Store) CreditLedger(ctx context.Context, accountID string, f LedgerFilter) ([]LedgerEntry, error) {
	if !ValidID(accountID) {
		return nil, ErrNotFound
	}
	q := `SELECT ` + ledgerColumns + ` FROM credit_ledger WHERE account_id = $1`
	args := []any{accountID}
	if f.BeforeID > 0 {
		args = append(args, f.BeforeID)
		q += fmt.Sprintf(` AND id < $%d`, len(args))
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	entries, err := collect(scanLedgerEntry)(s.read.QueryContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("store: credit ledger: %w", err)
	}
	return entries, nil
}

// lockCredits locks an account's row for the rest of the transaction and reads its balance.
func (t *Tx) lockCredits(ctx context.Context, accountID string) (int64, error) {
	var balance int64
	err := t.tx.QueryRowContext(ctx, `SELECT ai_credits FROM accounts WHERE id = $1`+t.forUpdate(), accountID).Scan(&balance)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotFound
		}
		return 0, fmt.Errorf("store: read credits: %w", err)
	}
	return balance, nil
}

func (t *Tx) setCredits(ctx context.Context, accountID string, balance int64) error {
	if _, err := t.tx.ExecContext(ctx, `UPDATE accounts SET ai_credits = $1 WHERE id = $2`, balance, accountID); err != nil {
		return fmt.Errorf("store: update credits: %w", err)
	}
	return nil
}

// insertLedger writes a ledger row and returns it with its id.
func (t *Tx) insertLedger(ctx context.Context, e LedgerEntry) (LedgerEntry, error) {
	err := t.tx.QueryRowContext(ctx, `INSERT INTO credit_ledger (account_id, delta, balance_after, kind, reservation_id, reason, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		e.AccountID, e.Delta, e.BalanceAfter, e.Kind, nullString(e.ReservationID), e.Reason, e.CreatedAt).Scan(&e.ID)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("store: write credit ledger: %w", err)
	}
	return e, nil
}

const reservationColumns = `id, account_id, amount, status, purpose, created_at, closed_at`

func scanReservation(r scanner) (Reservation, error) {
	var v Reservation
	var closed sql.NullTime
	err := r.Scan(&v.ID, &v.AccountID, &v.Amount, &v.Status, &v.Purpose, &v.CreatedAt, &closed)
	v.CreatedAt, v.ClosedAt = v.CreatedAt.UTC(), timePtr(closed)
	return v, err
}

const ledgerColumns = `id, account_id, delta, balance_after, kind, reservation_id, reason, created_at`

func scanLedgerEntry(r scanner) (LedgerEntry, error) {
	var e LedgerEntry
	var reservation sql.NullString
	err := r.Scan(&e.ID, &e.AccountID, &e.Delta, &e.BalanceAfter, &e.Kind, &reservation, &e.Reason, &e.CreatedAt)
	e.ReservationID, e.CreatedAt = reservation.String, e.CreatedAt.UTC()
	return e, err
}
