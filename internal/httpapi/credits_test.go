package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

func TestAccountCredits(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// Alice: granted 10, reserves 4 (refunded) and 3 (settled), so 7 remain; Bob: 50.
		if _, err := e.st.AddCredits(ctx, e.a.AccountID, 10, "welcome"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.AddCredits(ctx, e.b.AccountID, 50, "bob's"); err != nil {
			t.Fatal(err)
		}
		failed, err := e.st.ReserveCredits(ctx, e.a.AccountID, 4, "generate-video")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.RefundCredits(ctx, failed.ID, "provider timed out"); err != nil {
			t.Fatal(err)
		}
		spent, err := e.st.ReserveCredits(ctx, e.a.AccountID, 3, "storyboard/stitch")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.SettleCredits(ctx, spent.ID); err != nil {
			t.Fatal(err)
		}

		r := e.do(req{Method: "GET", Path: "/api/v1/account/credits", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["ai_credits"] != float64(7) || r.JSON["account_id"] != e.a.AccountID || r.JSON["next_cursor"] != nil {
			t.Fatalf("credits: %d %s", r.Code, r.Body)
		}
		entries := r.JSON["entries"].([]any)
		want := []struct {
			kind               string
			delta, balance     float64
			reservation, cause string
		}{
			{"settle", 0, 7, spent.ID, "storyboard/stitch"},
			{"reserve", -3, 7, spent.ID, "storyboard/stitch"},
			{"refund", 4, 10, failed.ID, "provider timed out"},
			{"reserve", -4, 6, failed.ID, "generate-video"},
			{"grant", 10, 10, "", "welcome"},
		}
		if len(entries) != len(want) {
			t.Fatalf("%d entries, want %d: %s", len(entries), len(want), r.Body)
		}
		for i, w := range want {
			got := entries[i].(map[string]any)
			var reservation any
			if w.reservation != "" {
				reservation = w.reservation
			}
			if got["kind"] != w.kind || got["delta"] != w.delta || got["balance_after"] != w.balance ||
				got["reservation_id"] != reservation || got["reason"] != w.cause {
				t.Errorf("entry %d: %v, want %+v", i, got, w)
			}
		}
		if u := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key}); u.JSON["ai_credits"] != float64(7) {
			t.Errorf("usage shows %v credits, want 7", u.JSON["ai_credits"])
		}

		// Pages of two walk the same rows.
		var paged []any
		path := "/api/v1/account/credits?limit=2"
		for range 4 {
			p := e.do(req{Method: "GET", Path: path, Key: e.a.Key})
			if p.Code != http.StatusOK {
				t.Fatalf("page: %d %s", p.Code, p.Body)
			}
			paged = append(paged, p.JSON["entries"].([]any)...)
			next, _ := p.JSON["next_cursor"].(string)
			if next == "" {
				break
			}
			path = "/api/v1/account/credits?limit=2&cursor=" + url.QueryEscape(next)
		}
		if len(paged) != len(entries) {
			t.Fatalf("paged %d entries, want %d", len(paged), len(entries))
		}
		for i := range paged {
			if paged[i].(map[string]any)["id"] != entries[i].(map[string]any)["id"] {
				t.Errorf("page row %d: %v, want %v", i, paged[i], entries[i])
			}
		}

		// Bob sees his own ledger only.
		b := e.do(req{Method: "GET", Path: "/api/v1/account/credits", Key: e.b.Key})
		if b.Code != http.StatusOK || b.JSON["ai_credits"] != float64(50) || len(b.JSON["entries"].([]any)) != 1 {
			t.Errorf("bob: %d %s", b.Code, b.Body)
		}

		for _, q := range []string{"cursor=nope", "cursor=" + url.QueryEscape("bGVkZ2VyfDA"), "limit=0", "limit=101"} {
			if r := e.do(req{Method: "GET", Path: "/api/v1/account/credits?" + q, Key: e.a.Key}); r.Code != http.StatusBadRequest {
				t.Errorf("%s: %d %s", q, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/account/credits"}); r.Code != http.StatusUnauthorized {
			t.Errorf("no key: %d", r.Code)
		}
	})
}
