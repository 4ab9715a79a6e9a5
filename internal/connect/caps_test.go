package connect

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestFacebookPagesWithinTheCap: a Facebook consent grants several Pages, a channel each. When
// they do not all fit within the account's cap of channels, none is connected (the refusal is
// the API's 409 limit_reached); when they fit, all are.
func TestFacebookPagesWithinTheCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st)
		// The simulator's user manages one Page; this one manages three. Everything else is
		// the simulator's.
		mint := sandboxtoken.Mint{Key: f.c.Access.SandboxKey, Platform: "facebook"}
		simulators, _ := url.Parse(f.c.Access.SimulatorsURL)
		passOn := httputil.NewSingleHostReverseProxy(simulators)
		threePages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/me/accounts") {
				passOn.ServeHTTP(w, r)
				return
			}
			var data []map[string]any
			for _, id := range []string{"sbx_page_a", "sbx_page_b", "sbx_page_c"} {
				data = append(data, map[string]any{"id": id, "name": "Page " + id, "access_token": mint.Access(id, time.Now().Add(time.Hour))})
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"data": data})
		}))
		t.Cleanup(threePages.Close)
		f.c.Access.SimulatorsURL = threePages.URL

		if _, _, err := st.SaveChannel(ctx, store.Channel{AccountID: f.account, ProjectID: f.project, Platform: "telegram",
			ExternalAccountID: "held", Name: "held", Credentials: []byte("sealed")}); err != nil {
			t.Fatal(err)
		}
		// Room for two more.
		st.SetCaps(store.Caps{Channels: 3})
		_, err := f.c.Complete(ctx, "facebook", f.consent("facebook"))
		var ae *apierr.Error
		var ce *store.CapError
		if !errors.As(err, &ae) || ae.Code != apierr.CodeLimitReached || !errors.As(err, &ce) || ce.Held != 1 || ce.Added != 3 {
			t.Fatalf("three Pages with room for two: %v", err)
		}
		if chans, _ := st.ListChannels(ctx, f.account, f.project); len(chans) != 1 {
			t.Fatalf("a refused consent left %d channels, want the 1 held before", len(chans))
		}

		st.SetCaps(store.Caps{Channels: 4})
		chans, err := f.c.Complete(ctx, "facebook", f.consent("facebook"))
		if err != nil || len(chans) != 3 {
			t.Fatalf("three Pages with room for three: %d channels, %v", len(chans), err)
		}
		for _, ch := range chans {
			if ch.Platform != "facebook" || !strings.HasPrefix(ch.ExternalAccountID, "sbx_page_") || ch.TokenExpiresAt != nil {
				t.Errorf("Page channel %+v", ch)
			}
		}
		// Consenting again reconnects the same Pages: no room needed.
		if again, err := f.c.Complete(ctx, "facebook", f.consent("facebook")); err != nil || len(again) != 3 || again[0].ID != chans[0].ID {
			t.Fatalf("reconnecting the Pages at the cap: %v", err)
		}
	})
}
