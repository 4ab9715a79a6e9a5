package sim

import (
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"testing"
)

func TestSandboxToken(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	tok := sandboxtoken.Token(key, "youtube", "sbx_ab12")
	p, a, ok := sandboxtoken.Parse(key, tok)
	if !ok || p != "youtube" || a != "sbx_ab12" {
		t.Fatalf("parse = %q %q %v", p, a, ok)
	}
	other := sandboxtoken.Token(key, "youtube", "sbx_other")
	for name, bad := range map[string]string{
		"other key":      sandboxtoken.Token([]byte("another key of thirty-two bytes!!"), "youtube", "sbx_ab12"),
		"swapped mac":    tok[:len(tok)-24] + other[len(other)-24:],
		"other platform": "sbx1.tiktok" + tok[len("sbx1.youtube"):],
		"no prefix":      tok[5:],
		"empty":          "",
		"truncated":      tok[:len(tok)-1],
	} {
		if _, _, ok := sandboxtoken.Parse(key, bad); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCallFaultAndRecorder(t *testing.T) {
	t.Parallel()
	always := func() float64 { return 0 }
	never := func() float64 { return 0.99 }
	for _, c := range []struct {
		b    Behavior
		rnd  func() float64
		want string
	}{
		{Behavior{}, always, ""},
		{Behavior{Fail: FailReject}, always, ""},
		{Behavior{Fail: FailUnavailable}, never, FailUnavailable},
		{Behavior{Fail: FailAuth}, never, FailAuth},
		{Behavior{Fail: FailRateLimit}, never, FailRateLimit},
		{Behavior{Fail: FailFlaky, FailRate: 0.3}, func() float64 { return 0.2 }, FailUnavailable},
		{Behavior{Fail: FailFlaky, FailRate: 0.3}, func() float64 { return 0.4 }, ""},
	} {
		if got := CallFault(c.b, c.rnd); got != c.want {
			t.Errorf("CallFault(%+v) = %q, want %q", c.b, got, c.want)
		}
	}
	var r Recorder
	r.RecordUpload(Upload{Account: "a", Bytes: 3})
	r.RecordUpload(Upload{Account: "b", Bytes: 4})
	r.RecordPublished(Published{Account: "a", ID: "1"})
	snap := r.Snapshot(func(acc string) bool { return acc == "a" })
	if len(snap.Uploads) != 1 || snap.Uploads[0].Bytes != 3 || len(snap.Published) != 1 || snap.Replies == nil {
		t.Errorf("snapshot = %+v", snap)
	}
}
