package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func newAccount(t *testing.T, s *store.Store, name string) store.CreatedAccount {
	t.Helper()
	limit := 10
	ca, err := s.CreateAccount(context.Background(), store.NewAccount{
		Name: name, MonthlyPostLimit: &limit, AICredits: 5,
		Key: &store.NewAPIKey{Name: "first", Prefix: "rly_live_" + name, Hash: []byte("hash-" + name)},
	})
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return ca
}

func TestAccountsKeysProjects(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		b := newAccount(t, s, "bob")

		got, err := s.GetAccount(ctx, a.Account.ID)
		if err != nil || got.Name != "alice" || got.MonthlyPostLimit == nil || *got.MonthlyPostLimit != 10 || got.AICredits != 5 {
			t.Fatalf("GetAccount = %+v, %v", got, err)
		}
		if !got.CreatedAt.Equal(a.Account.CreatedAt) {
			t.Errorf("created_at round trip: %v != %v", got.CreatedAt, a.Account.CreatedAt)
		}
		if n, _ := s.CountAccounts(ctx); n != 2 {
			t.Errorf("CountAccounts = %d, want 2", n)
		}

		// The key resolves to its owner; a revoked key does not; another account cannot revoke it.
		owner, err := s.LookupAPIKey(ctx, []byte("hash-alice"))
		if err != nil || owner.AccountID != a.Account.ID || owner.KeyID != a.Key.ID {
			t.Fatalf("LookupAPIKey = %+v, %v", owner, err)
		}
		if err := s.RevokeAPIKey(ctx, b.Account.ID, a.Key.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke by other account: %v, want ErrNotFound", err)
		}
		if err := s.RevokeAPIKey(ctx, a.Account.ID, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke of a malformed id: %v, want ErrNotFound", err)
		}
		second, err := s.CreateAPIKey(ctx, a.Account.ID, store.NewAPIKey{Name: "ci", Prefix: "rly_live_x", Hash: []byte("h2")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeAPIKey(ctx, a.Account.ID, a.Key.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		if err := s.RevokeAPIKey(ctx, a.Account.ID, a.Key.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second revoke: %v, want ErrNotFound", err)
		}
		if _, err := s.LookupAPIKey(ctx, []byte("hash-alice")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("lookup of revoked key: %v, want ErrNotFound", err)
		}
		keys, err := s.ListAPIKeys(ctx, a.Account.ID)
		if err != nil || len(keys) != 1 || keys[0].ID != second.ID || keys[0].LastUsedAt != nil {
			t.Fatalf("ListAPIKeys = %+v, %v", keys, err)
		}

		// last_used_at only moves forward.
		t1 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		if err := s.TouchAPIKeys(ctx, map[string]time.Time{second.ID: t1}); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchAPIKeys(ctx, map[string]time.Time{second.ID: t1.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		keys, _ = s.ListAPIKeys(ctx, a.Account.ID)
		if keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(t1) {
			t.Errorf("last_used_at = %v, want %v", keys[0].LastUsedAt, t1)
		}

		// Projects are per account.
		p, err := s.CreateProject(ctx, a.Account.ID, "Launch", "spring")
		if err != nil {
			t.Fatal(err)
		}
		list, _ := s.ListProjects(ctx, a.Account.ID)
		if len(list) != 2 || list[0].Name != store.DefaultProjectName || list[1].ID != p.ID {
			t.Fatalf("ListProjects = %+v", list)
		}
		if _, err := s.GetProject(ctx, b.Account.ID, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetProject across accounts: %v, want ErrNotFound", err)
		}
		if _, err := s.GetProject(ctx, a.Account.ID, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetProject malformed id: %v", err)
		}
	})
}

func TestIdentities(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		id := store.Identity{Issuer: "https://idp.example", Subject: "user-1"}
		if _, err := s.AccountForIdentity(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unlinked identity: %v", err)
		}
		if err := s.LinkIdentity(ctx, a.Account.ID, id); err != nil {
			t.Fatal(err)
		}
		got, err := s.AccountForIdentity(ctx, id)
		if err != nil || got != a.Account.ID {
			t.Fatalf("AccountForIdentity = %q, %v", got, err)
		}
		b := newAccount(t, s, "bob")
		if err := s.LinkIdentity(ctx, b.Account.ID, id); !errors.Is(err, store.ErrConflict) {
			t.Errorf("linking a linked subject: %v, want ErrConflict", err)
		}
	})
}

func TestChannels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		b := newAccount(t, s, "bob")
		c := store.Channel{AccountID: a.Account.ID, ProjectID: a.Project.ID, Platform: "bluesky", Name: "Alice",
			Username: "alice.bsky.social", ExternalAccountID: "did:plc:alice", Credentials: []byte{1, 2, 3}}
		saved, created, err := s.SaveChannel(ctx, c)
		if err != nil || !created || saved.Status != store.ChannelActive {
			t.Fatalf("SaveChannel = %+v, %v, %v", saved, created, err)
		}
		// Reconnecting the same account updates the channel and reactivates it.
		if err := s.SetChannelStatus(ctx, saved.ID, store.ChannelReauthRequired); err != nil {
			t.Fatal(err)
		}
		c.Credentials = []byte{9}
		again, created, err := s.SaveChannel(ctx, c)
		if err != nil || created || again.ID != saved.ID {
			t.Fatalf("reconnect = %+v, created=%v, %v", again, created, err)
		}
		got, err := s.GetChannel(ctx, a.Account.ID, saved.ID)
		if err != nil || got.Status != store.ChannelActive || string(got.Credentials) != "\x09" || got.SandboxBehavior != "{}" {
			t.Fatalf("GetChannel = %+v, %v", got, err)
		}
		if _, err := s.GetChannel(ctx, b.Account.ID, saved.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetChannel across accounts: %v", err)
		}
		list, _ := s.ListChannels(ctx, a.Account.ID, a.Project.ID)
		if len(list) != 1 {
			t.Fatalf("ListChannels = %d channels", len(list))
		}
		if other, _ := s.ListChannels(ctx, b.Account.ID, a.Project.ID); len(other) != 0 {
			t.Errorf("another account listed %d channels of a foreign project", len(other))
		}
		if err := s.DeleteChannel(ctx, b.Account.ID, saved.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteChannel across accounts: %v", err)
		}
		if err := s.DeleteChannel(ctx, a.Account.ID, saved.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetChannel(ctx, a.Account.ID, saved.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetChannel after delete: %v", err)
		}
		// After a delete the same account can be connected afresh.
		if _, created, err := s.SaveChannel(ctx, c); err != nil || !created {
			t.Errorf("connect after delete: created=%v, %v", created, err)
		}
	})
}

// Concurrent writers must queue, never fail with "database is locked".
func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					_, err := s.CreateProject(ctx, a.Account.ID, fmt.Sprintf("p%d", i), "")
					errs <- err
				} else {
					_, err := s.ListProjects(ctx, a.Account.ID)
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		list, _ := s.ListProjects(ctx, a.Account.ID)
		if len(list) != 101 {
			t.Errorf("projects = %d, want 101", len(list))
		}
	})
}

func TestTxRollback(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.SQL().ExecContext(ctx, `INSERT INTO accounts (id, name, ai_credits, suspended, created_at) VALUES ($1, 'x', 0, $2, $3)`,
				uuid.NewString(), false, time.Now().UTC())
			if err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if n, _ := s.CountAccounts(ctx); n != 0 {
			t.Errorf("rolled-back insert left %d accounts", n)
		}
	})
}

func TestReadyAndReopen(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			url := storetest.URL(t, d)
			ctx := context.Background()
			s, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			for name, err := range s.Ready(ctx) {
				if err != nil {
					t.Errorf("ready check %s: %v", name, err)
				}
			}
			s.Close()
			// Opening again applies nothing and keeps the data layout.
			s2, err := store.Open(ctx, url)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer s2.Close()
			s.Close()
			if checks := s.Ready(ctx); checks["database"] == nil {
				t.Error("a closed store reported its database reachable")
			}
		})
	}
}
