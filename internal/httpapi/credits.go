package httpapi

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/store"
)

// creditEntryJSON is a credit ledger row as the API answers it.
type creditEntryJSON struct {
	ID            int64     `json:"id"`
	Kind          string    `json:"kind"`
	Delta         int64     `json:"delta"`
	BalanceAfter  int64     `json:"balance_after"`
	ReservationID *string   `json:"reservation_id"`
	Reason        string    `json:"reason"`
	CreatedAt     time.Time `json:"created_at"`
}

func toCreditEntryJSON(e store.LedgerEntry) creditEntryJSON {
	j := creditEntryJSON{ID: e.ID, Kind: e.Kind, Delta: e.Delta, BalanceAfter: e.BalanceAfter, Reason: e.Reason, CreatedAt: e.CreatedAt}
	if e.ReservationID != "" {
		j.ReservationID = &e.ReservationID
	}
	return j
}

// accountCredits answers the caller's AI credit balance and its ledger, newest first, paged
// like GET /posts. The balance is read before the page, so on a busy account the newest row
// may be a little newer than it; each row's balance_after is exact.
func (s *Server) accountCredits(w http.ResponseWriter, r *http.Request) error {
	accountID := mustPrincipal(r).AccountID
	limit, err := limitQuery(r, 20, 100)
	if err != nil {
		return err
	}
	filter := store.LedgerFilter{Limit: limit + 1} // one more tells whether there is a next page
	if c := r.URL.Query().Get("cursor"); c != "" {
		id, ok := decodeLedgerCursor(c)
		if !ok {
			return store.CursorRefused()
		}
		filter.BeforeID = id
	}
	a, err := s.store.GetAccount(r.Context(), accountID)
	if err != nil {
		return err
	}
	entries, err := s.store.CreditLedger(r.Context(), accountID, filter)
	if err != nil {
		return err
	}
	var next *string
	if len(entries) > limit {
		entries = entries[:limit]
		c := encodeLedgerCursor(entries[limit-1].ID)
		next = &c
	}
	out := make([]creditEntryJSON, len(entries))
	for i, e := range entries {
		out[i] = toCreditEntryJSON(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "account_id": accountID, "ai_credits": a.AICredits,
		"entries": out, "next_cursor": next})
	return nil
}

// Ledger rows are paged by their id, which orders them; the prefix keeps a cursor of another
// listing from being taken for one of these.
const ledgerCursorPrefix = "ledger|"

func encodeLedgerCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(ledgerCursorPrefix + strconv.FormatInt(id, 10)))
}

func decodeLedgerCursor(c string) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(raw), ledgerCursorPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}
