package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// cappedKind is how the tests create, free and count one kind of thing an account holds a
// bounded number of.
type cappedKind struct {
	kind store.Capped
	caps func(n int) store.Caps
	// create makes one more for the account, in its first project where it goes in one.
	create func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (id string, err error)
	// free gives one back (revoke, disconnect, delete); nil when nothing can be.
	free func(ctx context.Context, s *store.Store, ca store.CreatedAccount, id string) error
	held func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (int, error)
}

var cappedKinds = []cappedKind{
	{
		kind: store.CappedAPIKeys,
		caps: func(n int) store.Caps { return store.Caps{APIKeys: n} },
		create: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (string, error) {
			k, err := s.CreateAPIKey(ctx, ca.Account.ID, store.NewAPIKey{Name: "k", Prefix: "rly_live_k", Hash: []byte(rand.Text())})
			return k.ID, err
		},
		free: func(ctx context.Context, s *store.Store, ca store.CreatedAccount, id string) error {
			return s.RevokeAPIKey(ctx, ca.Account.ID, id)
		},
		held: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (int, error) {
			keys, err := s.ListAPIKeys(ctx, ca.Account.ID)
			return len(keys), err
		},
	},
	{
		kind: store.CappedProjects,
		caps: func(n int) store.Caps { return store.Caps{Projects: n} },
		create: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (string, error) {
			p, err := s.CreateProject(ctx, ca.Account.ID, "p", "")
			return p.ID, err
		},
		held: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (int, error) {
			ps, err := s.ListProjects(ctx, ca.Account.ID)
			return len(ps), err
		},
	},
	{
		kind: store.CappedChannels,
		caps: func(n int) store.Caps { return store.Caps{Channels: n} },
		create: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (string, error) {
			c, _, err := s.SaveChannel(ctx, capChannel(ca, ca.Project.ID, uuid.NewString()))
			return c.ID, err
		},
		free: func(ctx context.Context, s *store.Store, ca store.CreatedAccount, id string) error {
			return s.DeleteChannel(ctx, ca.Account.ID, id)
		},
		held: heldChannels,
	},
	{
		kind: store.CappedWebhooks,
		caps: func(n int) store.Caps { return store.Caps{Webhooks: n} },
		create: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (string, error) {
			w, err := s.CreateWebhook(ctx, store.Webhook{AccountID: ca.Account.ID, URL: "https://hooks.example/x",
				Events: []string{store.EventPostFailed}, Secret: []byte("sealed")})
			return w.ID, err
		},
		free: func(ctx context.Context, s *store.Store, ca store.CreatedAccount, id string) error {
			return s.DeleteWebhook(ctx, ca.Account.ID, id)
		},
		held: func(ctx context.Context, s *store.Store, ca store.CreatedAccount) (int, error) {
			ws, err := s.ListWebhooks(ctx, ca.Account.ID)
			return len(ws), err
		},
	},
}

func capChannel(ca store.CreatedAccount, projectID, external string) store.Channel {
	return store.Channel{AccountID: ca.Account.ID, ProjectID: projectID, Platform: "telegram", Name: "c " + external,
		ExternalAccountID: external, Credentials: []byte("sealed")}
}

// heldChannels counts an account's connected channels across its projects.
func heldChannels(ctx context.Context, s *store.Store, ca store.CreatedAccount) (int, error) {
	ps, err := s.ListProjects(ctx, ca.Account.ID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range ps {
		cs, err := s.ListChannels(ctx, ca.Account.ID, p.ID)
		if err != nil {
			return 0, err
		}
		n += len(cs)
	}
	return n, nil
}

func mustHeld(t *testing.T, k cappedKind, s *store.Store, ca store.CreatedAccount) int {
	t.Helper()
	n, err := k.held(context.Background(), s, ca)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkCapRefusal checks that err is the refusal of a create past a cap of limit: the store's
// CapError inside the API's 409 limit_reached, whose message names the cap and its setting.
func checkCapRefusal(t *testing.T, err error, kind store.Capped, limit int) {
	t.Helper()
	var ce *store.CapError
	var ae *apierr.Error
	switch {
	case !errors.As(err, &ce) || !errors.As(err, &ae):
		t.Fatalf("want a cap refusal, got %v", err)
	case ce.Kind != kind || ce.Limit != limit:
		t.Errorf("refused as %+v, want kind %s and limit %d", ce, kind, limit)
	case ae.Status != http.StatusConflict || ae.Code != apierr.CodeLimitReached || ae.Extra["limit"] != limit:
		t.Errorf("answered %d %s %v", ae.Status, ae.Code, ae.Extra)
	case !strings.Contains(ae.Message, store.CapSetting(kind)) || !strings.Contains(ae.Message, "nothing was created"):
		t.Errorf("message does not name the setting or say nothing was created: %s", ae.Message)
	}
}

// TestCaps fills an account to each cap and checks that one more is refused, leaves nothing,
// and counts only what the account still holds: revoked keys, disconnected channels and
// deleted webhooks make room again. Another account is not affected, a lowered cap refuses at
// once, and 0 means no cap.
func TestCaps(t *testing.T) {
	t.Parallel()
	for _, k := range cappedKinds {
		t.Run(string(k.kind), func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, s *store.Store) {
				ctx := context.Background()
				a, b := newAccount(t, s, "alice"), newAccount(t, s, "bob")
				const limit = 4
				s.SetCaps(k.caps(limit))
				var ids []string
				for mustHeld(t, k, s, a) < limit {
					id, err := k.create(ctx, s, a)
					if err != nil {
						t.Fatalf("create %d under the cap: %v", len(ids)+1, err)
					}
					ids = append(ids, id)
				}

				_, err := k.create(ctx, s, a)
				checkCapRefusal(t, err, k.kind, limit)
				if n := mustHeld(t, k, s, a); n != limit {
					t.Errorf("after a refusal the account holds %d, want %d", n, limit)
				}

				// The cap is the account's own.
				if _, err := k.create(ctx, s, b); err != nil {
					t.Errorf("another account's create: %v", err)
				}

				if k.free != nil {
					if err := k.free(ctx, s, a, ids[len(ids)-1]); err != nil {
						t.Fatal(err)
					}
					if _, err := k.create(ctx, s, a); err != nil {
						t.Errorf("create after freeing one: %v", err)
					}
					_, err := k.create(ctx, s, a)
					checkCapRefusal(t, err, k.kind, limit)
				}

				// A cap lowered below what the account holds refuses at once; the count stops
				// at the cap.
				s.SetCaps(k.caps(2))
				_, err = k.create(ctx, s, a)
				checkCapRefusal(t, err, k.kind, 2)
				if ce := (*store.CapError)(nil); errors.As(err, &ce) && ce.Held != 2 {
					t.Errorf("held counted to %d, want the cap, 2", ce.Held)
				}
				if n := mustHeld(t, k, s, a); n != limit {
					t.Errorf("the account holds %d, want %d", n, limit)
				}

				s.SetCaps(store.Caps{})
				if _, err := k.create(ctx, s, a); err != nil {
					t.Errorf("create without a cap: %v", err)
				}
			})
		})
	}
}

// TestCapsConcurrently starts creates at once on an account one short of its cap: exactly
// one is stored, whatever the engine, and the others are refused.
func TestCapsConcurrently(t *testing.T) {
	t.Parallel()
	for _, k := range cappedKinds {
		t.Run(string(k.kind), func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, s *store.Store) {
				ctx := context.Background()
				a := newAccount(t, s, "alice")
				const limit, racers = 5, 8
				for mustHeld(t, k, s, a) < limit-1 {
					if _, err := k.create(ctx, s, a); err != nil {
						t.Fatal(err)
					}
				}
				s.SetCaps(k.caps(limit))
				var wg sync.WaitGroup
				errs := make([]error, racers)
				start := make(chan struct{})
				for i := range racers {
					wg.Go(func() {
						<-start
						_, errs[i] = k.create(ctx, s, a)
					})
				}
				close(start)
				wg.Wait()
				created := 0
				for _, err := range errs {
					var ce *store.CapError
					switch {
					case err == nil:
						created++
					case !errors.As(err, &ce):
						t.Errorf("a create failed otherwise than at the cap: %v", err)
					}
				}
				if created != 1 {
					t.Errorf("%d of %d creates at once were stored one short of the cap, want 1", created, racers)
				}
				if n := mustHeld(t, k, s, a); n != limit {
					t.Errorf("the account holds %d, want the cap, %d", n, limit)
				}
			})
		})
	}
}

// TestChannelCap checks what is particular to channels: the cap counts across the account's
// projects, reconnecting a channel it holds needs no room, and channels saved together (a
// consent's several Pages) are all stored or none.
func TestChannelCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		second, err := s.CreateProject(ctx, a.Account.ID, "second", "")
		if err != nil {
			t.Fatal(err)
		}
		s.SetCaps(store.Caps{Channels: 3})
		first, _, err := s.SaveChannel(ctx, capChannel(a, a.Project.ID, "one"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SaveChannel(ctx, capChannel(a, second.ID, "two")); err != nil {
			t.Fatal(err)
		}

		// Room for one: two new ones together are refused, and neither is stored.
		_, err = s.SaveChannels(ctx, []store.Channel{capChannel(a, second.ID, "three"), capChannel(a, second.ID, "four")})
		checkCapRefusal(t, err, store.CappedChannels, 3)
		var ce *store.CapError
		if errors.As(err, &ce) && (ce.Held != 2 || ce.Added != 2) {
			t.Errorf("refusal counted %d held and %d added, want 2 and 2", ce.Held, ce.Added)
		}
		if n, _ := heldChannels(ctx, s, a); n != 2 {
			t.Fatalf("after the refused pair the account holds %d channels, want 2", n)
		}

		// A reconnection and a new one fit in the room for one.
		saved, err := s.SaveChannels(ctx, []store.Channel{capChannel(a, a.Project.ID, "one"), capChannel(a, second.ID, "three")})
		if err != nil || len(saved) != 2 || saved[0].ID != first.ID {
			t.Fatalf("reconnection and one new: %+v, %v", saved, err)
		}

		// At the cap, reconnecting needs no room; connecting something else does, in any project.
		if again, created, err := s.SaveChannel(ctx, capChannel(a, second.ID, "two")); err != nil || created {
			t.Errorf("reconnection at the cap: created %v, %v", created, err)
		} else if again.Status != store.ChannelActive {
			t.Errorf("reconnected channel is %s", again.Status)
		}
		_, _, err = s.SaveChannel(ctx, capChannel(a, a.Project.ID, "five"))
		checkCapRefusal(t, err, store.CappedChannels, 3)
		if n, _ := heldChannels(ctx, s, a); n != 3 {
			t.Errorf("the account holds %d channels, want 3", n)
		}
	})
}

// TestCapSettingsAreServerFlags: the setting a refusal names is one `reelay serve` has.
func TestCapSettingsAreServerFlags(t *testing.T) {
	var c config.Config
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.RegisterServer(fs)
	settings := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { settings[config.EnvName(f.Name)] = true })
	for _, k := range store.CappedKinds {
		if s := store.CapSetting(k); !settings[s] {
			t.Errorf("%s: the setting %q is not a flag of reelay serve", k, s)
		}
	}
}
