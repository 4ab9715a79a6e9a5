package app

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// TestProvidersAreEveryPlatform: the wiring builds one provider for each platform of the
// registry, and each says it is the platform it is filed under.
func TestProvidersAreEveryPlatform(t *testing.T) {
	providers := Providers(nil, 0, http.DefaultClient)
	t.Cleanup(func() {
		for _, p := range providers {
			if c, ok := p.(provider.Closer); ok {
				c.Close()
			}
		}
	})
	if got, want := slices.Sorted(maps.Keys(providers)), slices.Sorted(slices.Values(platform.All)); !slices.Equal(got, want) {
		t.Fatalf("providers of %v, want one for each of %v", got, want)
	}
	for name, p := range providers {
		if p.Platform() != name {
			t.Errorf("the provider filed under %s says it is %s", name, p.Platform())
		}
	}
}

// TestPinterestSettingsReachTheProvider: REELAY_PINTEREST_API_URL is where a channel's calls
// go (Pinterest's API Sandbox, for an app with Trial access), and REELAY_PINTEREST_API_VERSION
// the first segment of their paths.
func TestPinterestSettingsReachTheProvider(t *testing.T) {
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path)
		http.Error(w, `{"code":2,"message":"Authentication failed."}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	v6 := "v6"
	for _, c := range []struct {
		versions map[string]*string
		want     string
	}{
		{nil, "/v5/user_account"},
		{map[string]*string{platform.Pinterest: &v6}, "/v6/user_account"},
	} {
		cfg := &config.Config{PinterestAPIURL: srv.URL, APIVersions: c.versions}
		p := Providers(cfg, 0, http.DefaultClient)[platform.Pinterest]
		if _, err := p.(provider.Identifier).Identify(context.Background(), "", map[string]string{"access_token": "t"}); err == nil {
			t.Fatal("identified with a refused token")
		}
		if got, _ := asked.Load().(string); got != c.want {
			t.Errorf("the configured Pinterest API was asked %q, want %q", got, c.want)
		}
	}
}
