package provider

import (
	"errors"
	"net/url"
)

// WithoutURL is err without the URL that net/http's *url.Error puts in front of it, for a
// message that ends up in a destination: the URL of a provider's call may carry a token
// (Telegram's Bot API paths, Discord's webhooks) or a signature (signed upload URLs). Any other
// error is returned as it is.
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
