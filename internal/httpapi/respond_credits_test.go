package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// TestInsufficientCreditsAnswer checks that a reservation the store refused becomes the
// contract's 402 insufficient_credits, whichever handler passes it on and however wrapped.
func TestInsufficientCreditsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		err         error
		wantMessage string
	}{
		{"as the store returns it", &store.InsufficientCreditsError{Balance: 2, Needed: 5},
			"this needs 5 AI credits and the account has 2"},
		{"wrapped", fmt.Errorf("generate: %w", &store.InsufficientCreditsError{Balance: 0, Needed: 1}),
			"this needs 1 AI credits and the account has 0"},
		{"the bare sentinel", store.ErrInsufficientCredits, "this account does not have enough AI credits"},
	} {
		rec := httptest.NewRecorder()
		writeError(rec, httptest.NewRequest("POST", "/api/v1/ai/generate-video", nil), tc.err)
		var body struct {
			Success bool        `json:"success"`
			Error   errorDetail `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rec.Code != http.StatusPaymentRequired || body.Success || body.Error.Code != "insufficient_credits" || body.Error.Message != tc.wantMessage {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
	}
	if ae := toAPIError(errors.New("other")); ae.Status != http.StatusInternalServerError {
		t.Errorf("another error became %d", ae.Status)
	}
}
