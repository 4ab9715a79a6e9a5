package web

import (
	"errors"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
)

// The services (auth.Keys, webhooks.Service, connect.Channels, and for the lists
// publish.Posts and inbox.Comments) word a refusal once, as the API's error body; a form's
// page shows the same words: the fields' messages beside the fields, any other message as a
// sentence above the form.

// refusal is err when it is the caller's mistake (an *apierr.Error below 500), which the page
// of the form shows; nil otherwise.
func refusal(err error) *apierr.Error {
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status < 500 {
		return ae
	}
	return nil
}

// limitReached is err when it refuses a create past one of the account's caps (nil
// otherwise): the page of the form says so (pageSentence), above the list of what could be
// freed.
func limitReached(err error) *apierr.Error {
	if ae := refusal(err); ae != nil && ae.Code == apierr.CodeLimitReached {
		return ae
	}
	return nil
}

// pageSentence is a refusal's message as a sentence on a page.
func pageSentence(ae *apierr.Error) string {
	return strings.ToUpper(ae.Message[:1]) + ae.Message[1:] + "."
}
