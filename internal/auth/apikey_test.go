package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestNewKey(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		raw, rec := NewKey("ci")
		if !LooksLikeKey(raw) {
			t.Fatalf("minted key %q is not recognised", raw)
		}
		if seen[raw] {
			t.Fatal("duplicate key")
		}
		seen[raw] = true
		if !strings.HasPrefix(raw, rec.Prefix) || len(rec.Prefix) != len(KeyPrefix)+4 {
			t.Errorf("prefix %q of %q", rec.Prefix, raw)
		}
		if !bytes.Equal(rec.Hash, HashKey(raw)) || bytes.Contains(rec.Hash, []byte(raw)) {
			t.Error("record hash does not match the key")
		}
	}
}

func TestLooksLikeKey(t *testing.T) {
	t.Parallel()
	raw, _ := NewKey("x")
	for _, s := range []string{"", "rly_live_", raw[:len(raw)-1], raw + "A", strings.Replace(raw, raw[12:13], "-", 1),
		"eyJhbGciOiJSUzI1NiJ9.e30.sig", "rly_test_" + raw[len(KeyPrefix):]} {
		if LooksLikeKey(s) {
			t.Errorf("LooksLikeKey(%q) = true", s)
		}
	}
}

func TestUsageTracker(t *testing.T) {
	t.Parallel()
	var written []map[string]time.Time
	fail := true
	u := NewUsageTracker(func(_ context.Context, m map[string]time.Time) error {
		if fail {
			return errors.New("db down")
		}
		written = append(written, m)
		return nil
	}, slog.New(slog.DiscardHandler))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u.Used("k1", t0)
	u.Used("k1", t0.Add(-time.Minute)) // older: ignored
	u.Used("k2", t0)
	if err := u.Flush(context.Background()); err == nil {
		t.Fatal("flush should fail")
	}
	if at, ok := u.Pending("k1"); !ok || !at.Equal(t0) {
		t.Fatalf("after a failed flush pending = %v, %v", at, ok)
	}
	fail = false
	u.Used("k1", t0.Add(time.Minute))
	if err := u.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(written) != 1 || len(written[0]) != 2 || !written[0]["k1"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("written = %v", written)
	}
	if _, ok := u.Pending("k1"); ok {
		t.Error("still pending after a flush")
	}
	if err := u.Flush(context.Background()); err != nil || len(written) != 1 {
		t.Error("an empty flush wrote")
	}
}
