package client

import (
	"context"
	"iter"
	"time"
)

// Usage is the account's use of its plan this UTC month.
type Usage struct {
	AccountID string `json:"account_id"`
	// Month is the UTC month counted, YYYY-MM.
	Month          string `json:"month"`
	PostsThisMonth int    `json:"posts_this_month"`
	// MonthlyPostLimit is nil when unlimited.
	MonthlyPostLimit *int `json:"monthly_post_limit"`
	// AICredits is the remaining AI credit balance.
	AICredits int64 `json:"ai_credits"`
}

// CreditLedger is the AI credit balance and a page of its movements, newest first.
type CreditLedger struct {
	AccountID string        `json:"account_id"`
	AICredits int64         `json:"ai_credits"`
	Entries   []CreditEntry `json:"entries"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor"`
}

// CreditEntry is one movement of AI credits.
type CreditEntry struct {
	ID int64 `json:"id"`
	// Kind is "grant", "reserve", "settle", "refund" or "adjust".
	Kind         string `json:"kind"`
	Delta        int64  `json:"delta"`
	BalanceAfter int64  `json:"balance_after"`
	// ReservationID ties reserve, settle and refund rows together; empty for the others.
	ReservationID string    `json:"reservation_id"`
	Reason        string    `json:"reason"`
	CreatedAt     time.Time `json:"created_at"`
}

// APIKey is a key of the account; its raw value is only ever in APIKeyCreated.
type APIKey struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Prefix is the key's first characters, to recognise it.
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	// LastUsedAt is nil for a key never used; it is updated every few minutes at most.
	LastUsedAt *time.Time `json:"last_used_at"`
}

// CreateAPIKeyRequest names a new key.
type CreateAPIKeyRequest struct {
	Name string `json:"name"`
}

// APIKeyCreated is a new key with its raw value, shown this once.
type APIKeyCreated struct {
	APIKey APIKey `json:"api_key"`
	Key    string `json:"key"`
}

type apiKeyList struct {
	APIKeys []APIKey `json:"api_keys"`
}

// Usage answers the account's posts this month against its limit, and its AI credits.
func (c *Client) Usage(ctx context.Context) (*Usage, error) {
	var out Usage
	if err := c.get(ctx, "/account/usage", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Credits answers the AI credit balance and a page of the ledger.
func (c *Client) Credits(ctx context.Context, params ListParams) (*CreditLedger, error) {
	var out CreditLedger
	if err := c.get(ctx, "/account/credits", encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllCreditEntries walks the whole ledger, newest first, page by page.
func (c *Client) AllCreditEntries(ctx context.Context, params ListParams) iter.Seq2[CreditEntry, error] {
	return pages(ctx, params.Cursor, func(ctx context.Context, cursor string) ([]CreditEntry, string, error) {
		p := params
		p.Cursor = cursor
		l, err := c.Credits(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return l.Entries, l.NextCursor, nil
	})
}

// ListAPIKeys answers the account's active keys.
func (c *Client) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	var out apiKeyList
	if err := c.get(ctx, "/api-keys", nil, &out); err != nil {
		return nil, err
	}
	return out.APIKeys, nil
}

// CreateAPIKey creates a key; the answer's Key is its raw value, never shown again.
func (c *Client) CreateAPIKey(ctx context.Context, req CreateAPIKeyRequest) (*APIKeyCreated, error) {
	var out APIKeyCreated
	if _, err := c.post(ctx, "/api-keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeAPIKey revokes a key; requests made with it fail at once.
func (c *Client) RevokeAPIKey(ctx context.Context, id string) error {
	path, err := idPath("/api-keys", id, "")
	if err != nil {
		return err
	}
	return c.remove(ctx, path, id)
}
