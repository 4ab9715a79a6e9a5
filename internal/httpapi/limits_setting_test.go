package httpapi_test

import "github.com/reelay/reelay/internal/config"

// limitAddresses sets the limit per client address of an app env: rps and burst.
func limitAddresses(rps float64, burst int) func(*config.Config) {
	return func(c *config.Config) { c.RateLimitAddressRPS, c.RateLimitAddressBurst = rps, burst }
}
