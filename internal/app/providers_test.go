package app

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// TestProvidersAreEveryPlatform: the wiring builds one provider for each platform of the
// registry, and each says it is the platform it is filed under.
func TestProvidersAreEveryPlatform(t *testing.T) {
	providers := Providers(0, http.DefaultClient, ProviderSettings{})
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
