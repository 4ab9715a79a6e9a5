package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// A dry run answers what the publish itself would: the duplicate, the replayed or conflicting
// Idempotency-Key, the spent allowance, the suspension; and it stores nothing, claims no key
// and spends no allowance.
func TestDryRunAnswersWhatThePublishWould(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		body := publishBody(e.a, ms, nil)
		key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }
		dry := func(b map[string]any, header map[string]string) *resp {
			return e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: b, Header: header})
		}
		posts := func() int {
			list, err := e.st.ListPosts(context.Background(), e.a.AccountID, store.PostFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}

		if r := dry(body, key("first")); r.Code != http.StatusOK || r.JSON["dry_run"] != true {
			t.Fatalf("dry run before any post: %d %s", r.Code, r.Body)
		}
		first := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body, Header: key("first")})
		if first.Code != http.StatusOK || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("publish after the dry run claimed its key: %d %v %s", first.Code, first.Header, first.Body)
		}
		id := first.JSON["post_id"]

		r := dry(body, nil)
		if r.Code != http.StatusConflict || r.errCode() != "duplicate_post" || r.JSON["post_id"] != id {
			t.Errorf("dry run of a duplicate: %d %s", r.Code, r.Body)
		}
		if r := dry(publishBody(e.a, ms, map[string]any{"allow_duplicate": true}), nil); r.Code != http.StatusOK || r.JSON["dry_run"] != true {
			t.Errorf("dry run of an allowed duplicate: %d %s", r.Code, r.Body)
		}
		r = dry(body, key("first"))
		if r.Code != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || r.JSON["post_id"] != id {
			t.Errorf("dry run with a used key: %d %v %s", r.Code, r.Header, r.Body)
		}
		r = dry(publishBody(e.a, ms, map[string]any{"title": "Another"}), key("first"))
		if r.Code != http.StatusConflict || r.errCode() != "idempotency_conflict" {
			t.Errorf("dry run reusing a key for another request: %d %s", r.Code, r.Body)
		}
		if n := posts(); n != 1 {
			t.Errorf("%d posts after one publish and dry runs", n)
		}

		// At the monthly limit, and when suspended, a dry run is refused as the publish is.
		one := 1
		limit := &one
		if _, err := e.st.UpdateAccount(context.Background(), e.a.AccountID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		if r := dry(publishBody(e.a, ms, map[string]any{"caption": "new"}), nil); r.Code != http.StatusForbidden || r.errCode() != "monthly_limit_reached" {
			t.Errorf("dry run at the limit: %d %s", r.Code, r.Body)
		}
		yes := true
		if _, err := e.st.UpdateAccount(context.Background(), e.a.AccountID, store.AccountUpdate{Suspended: &yes}); err != nil {
			t.Fatal(err)
		}
		if r := dry(publishBody(e.a, ms, map[string]any{"caption": "new"}), nil); r.Code != http.StatusForbidden || r.errCode() != "account_suspended" {
			t.Errorf("dry run when suspended: %d %s", r.Code, r.Body)
		}
		if u := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key}); u.JSON["posts_this_month"] != float64(1) {
			t.Errorf("dry runs spent allowance: %s", u.Body)
		}
	})
}
