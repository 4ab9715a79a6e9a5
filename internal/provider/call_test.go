package provider

import (
	"errors"
	"net/url"
	"testing"
)

func TestWithoutURL(t *testing.T) {
	cause := errors.New("connection refused")
	err := &url.Error{Op: "Post", URL: "https://api.telegram.org/bot123:secret/sendVideo", Err: cause}
	if got := WithoutURL(err); got != cause {
		t.Errorf("WithoutURL(%v) = %v, want the cause alone", err, got)
	}
	if got := WithoutURL(cause); got != cause {
		t.Errorf("WithoutURL changed an error without a URL: %v", got)
	}
}
