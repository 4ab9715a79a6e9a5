package store_test

import (
	"testing"

	"github.com/reelay/reelay/internal/store"
)

func TestPostStatusOf(t *testing.T) {
	cases := []struct {
		current string
		dests   []string
		want    string
	}{
		{"scheduled", []string{"queued", "queued"}, "scheduled"},
		{"scheduled", []string{"uploading", "queued"}, "processing"},
		{"processing", []string{"queued", "queued"}, "processing"},
		{"processing", []string{"published", "processing"}, "processing"},
		{"processing", []string{"published", "sent_to_inbox"}, "published"},
		{"processing", []string{"published", "failed"}, "partially_published"},
		{"processing", []string{"sent_to_inbox", "failed"}, "partially_published"},
		{"processing", []string{"failed", "failed"}, "failed"},
		{"processing", []string{"failed", "canceled"}, "failed"},
		{"scheduled", []string{"canceled", "canceled"}, "canceled"},
		{"processing", []string{"published", "canceled"}, "published"},
	}
	for _, c := range cases {
		if got := store.PostStatusOf(c.current, c.dests); got != c.want {
			t.Errorf("PostStatusOf(%s, %v) = %s, want %s", c.current, c.dests, got, c.want)
		}
	}
}
