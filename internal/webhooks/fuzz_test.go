package webhooks_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/webhooks"
)

// FuzzSignVerify signs arbitrary messages under arbitrary keys and checks them with verify,
// the receiver's check written from the Standard Webhooks text (sign_test.go): what Sign makes
// verifies; changing the body, the timestamp or the id alone breaks it; Key takes any string
// without panicking; and arbitrary header values given to the receiver never panic it nor pass
// unless they carry the signature itself.
func FuzzSignVerify(f *testing.F) {
	f.Add("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), []byte(`{"test": 2432232314}`), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	f.Add("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "", int64(0), []byte{}, "")
	f.Add("whsec_", "id.with.dots", int64(-1), []byte("1.2.3"), "v1, v2,abc v1,")
	f.Add("whsec_not base64!", "msg", int64(1<<62), []byte{0xff, 0x00}, "v1a,==== v1,x v1")
	f.Fuzz(func(t *testing.T, secret, id string, ts int64, body []byte, header string) {
		key, err := webhooks.Key(secret)
		if err != nil {
			return
		}
		sig := webhooks.Sign(key, id, ts, body)
		stamp := strconv.FormatInt(ts, 10)
		if !verify(secret, id, stamp, sig, body) {
			t.Fatalf("the signature of its own message does not verify: %s", sig)
		}
		// A receiver reads the signature from a header: it must survive the trip.
		h := http.Header{}
		h.Set(webhooks.HeaderSignature, sig)
		if !verify(secret, id, stamp, h.Get(webhooks.HeaderSignature), body) {
			t.Fatal("the signature does not survive an HTTP header")
		}
		if verify(secret, id+"x", stamp, sig, body) {
			t.Fatal("a changed id still verifies")
		}
		if verify(secret, id, strconv.FormatInt(ts+1, 10), sig, body) {
			t.Fatal("a changed timestamp still verifies")
		}
		if verify(secret, id, stamp, sig, append(append([]byte{}, body...), '.')) {
			t.Fatal("a longer body still verifies")
		}
		if len(body) > 0 {
			flipped := append([]byte{}, body...)
			flipped[len(flipped)/2] ^= 1
			if verify(secret, id, stamp, sig, flipped) {
				t.Fatal("a changed body still verifies")
			}
		}
		// An arbitrary header passes only if one of its signatures is the right one.
		if verify(secret, id, stamp, header, body) && !containsField(header, sig) {
			t.Fatalf("header %q verifies without the signature %s", header, sig)
		}
	})
}

// containsField reports whether sig is one of the whitespace-separated signatures of header,
// split as the receiver splits them.
func containsField(header, sig string) bool { return slices.Contains(strings.Fields(header), sig) }
