package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/webhooks"
)

// The Standard Webhooks test vector, from the convention's own libraries
// (standard-webhooks/standard-webhooks, libraries/go/webhook_test.go, TestWebhookSign).
func TestSignStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	key, err := webhooks.Key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhooks.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// verify is a receiver's check written from the convention's text alone, independently of the
// package: the key is the base64 after "whsec_", the signed content "id.timestamp.body", the
// header a space-separated list of "v1,<base64>" of which one must match.
func verify(secret, id, timestamp, header string, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", id, timestamp, body)
	want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, sig := range strings.Fields(header) {
		version, value, ok := strings.Cut(sig, ",")
		if ok && version == "v1" && subtle.ConstantTimeCompare([]byte(value), want) == 1 {
			return true
		}
	}
	return false
}

func TestSignVerifiesIndependently(t *testing.T) {
	t.Parallel()
	secret := webhooks.NewSecret()
	key, err := webhooks.Key(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"post.published","timestamp":"2026-01-02T03:04:05Z","data":{"id":"x"}}`)
	ts := time.Now().Unix()
	sig := webhooks.Sign(key, "msg_abc", ts, body)
	if !verify(secret, "msg_abc", fmt.Sprint(ts), sig, body) {
		t.Fatalf("independent verification refused %s", sig)
	}
	// Any change to the id, the timestamp or the body breaks it; so does another secret.
	if verify(secret, "msg_abd", fmt.Sprint(ts), sig, body) || verify(secret, "msg_abc", fmt.Sprint(ts+1), sig, body) ||
		verify(secret, "msg_abc", fmt.Sprint(ts), sig, append(body, ' ')) || verify(webhooks.NewSecret(), "msg_abc", fmt.Sprint(ts), sig, body) {
		t.Error("a changed message still verifies")
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	if a == b || !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secrets %q %q", a, b)
	}
	key, err := webhooks.Key(a)
	if err != nil || len(key) < 24 {
		t.Fatalf("key of %q: %d bytes, %v", a, len(key), err)
	}
	if _, err := webhooks.Key("whsec_not base64!"); err == nil {
		t.Error("a malformed secret was accepted")
	}
}

func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	// With the default base, the Standard Webhooks example schedule.
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
	if webhooks.MaxAttempts != len(want)+1 {
		t.Errorf("MaxAttempts = %d", webhooks.MaxAttempts)
	}
	for i, w := range want {
		if got := webhooks.RetryDelay(0, i+1); got != w {
			t.Errorf("delay after attempt %d = %s, want %s", i+1, got, w)
		}
	}
	// A shorter base scales the whole schedule (tests).
	if got := webhooks.RetryDelay(50*time.Millisecond, 2); got != 3*time.Second {
		t.Errorf("scaled second delay = %s", got)
	}
	if got := webhooks.RetryDelay(0, 99); got != 24*time.Hour {
		t.Errorf("delay past the schedule = %s", got)
	}
}
