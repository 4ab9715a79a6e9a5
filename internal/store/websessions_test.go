package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestWebSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		other := newAccount(t, s, "b")
		now := time.Now().UTC()
		open := func(hash string, ttl, max time.Duration) store.WebSession {
			t.Helper()
			ws, err := s.CreateWebSession(ctx, store.NewWebSession{TokenHash: []byte(hash), AccountID: ca.Account.ID,
				APIKeyID: ca.Key.ID, ExpiresAt: now.Add(ttl), MaxExpiresAt: now.Add(max)})
			if err != nil {
				t.Fatal(err)
			}
			return ws
		}
		lookup := func(hash string, at time.Time) (store.WebSession, error) {
			return s.LookupWebSession(ctx, []byte(hash), at)
		}

		ws := open("live", time.Hour, 2*time.Hour)
		got, err := lookup("live", now)
		if err != nil || got.ID != ws.ID || got.AccountID != ca.Account.ID || got.APIKeyID != ca.Key.ID || got.ProjectID != "" {
			t.Fatalf("lookup: %+v %v", got, err)
		}
		if _, err := lookup("live", now.Add(time.Hour+time.Second)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired session found: %v", err)
		}
		if _, err := lookup("unknown", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown token found: %v", err)
		}

		// Sliding renewal moves the expiry forward, never past the absolute end, never back.
		cases := []struct {
			name string
			to   time.Time
			want time.Time
		}{
			{"forward", now.Add(90 * time.Minute), now.Add(90 * time.Minute)},
			{"capped", now.Add(5 * time.Hour), now.Add(2 * time.Hour)},
			{"never back", now.Add(30 * time.Minute), now.Add(2 * time.Hour)},
		}
		for _, c := range cases {
			if err := s.ExtendWebSession(ctx, ws.ID, c.to); err != nil {
				t.Fatal(err)
			}
			got, err := lookup("live", now)
			if err != nil || !got.ExpiresAt.Equal(c.want.Truncate(time.Microsecond)) {
				t.Errorf("%s: expires %v, want %v (%v)", c.name, got.ExpiresAt, c.want, err)
			}
		}

		// The project switcher takes the account's own projects only.
		if err := s.SetWebSessionProject(ctx, ws.ID, ca.Account.ID, other.Project.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's project: %v", err)
		}
		if err := s.SetWebSessionProject(ctx, ws.ID, ca.Account.ID, ca.Project.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := lookup("live", now); got.ProjectID != ca.Project.ID {
			t.Errorf("project %q", got.ProjectID)
		}

		// Sign-out ends the session; revoking its key ends every session opened with it.
		if err := s.DeleteWebSession(ctx, []byte("live")); err != nil {
			t.Fatal(err)
		}
		if _, err := lookup("live", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("signed-out session found: %v", err)
		}
		open("second", time.Hour, time.Hour)
		if err := s.RevokeAPIKey(ctx, ca.Account.ID, ca.Key.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := lookup("second", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session of a revoked key found: %v", err)
		}
	})
}
