package providertest_test

import (
	"testing"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/tiktok"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
)

// The harness drives a real provider against its simulator to the end, and what the simulator
// received is the video, byte for byte.
func TestHarnessDrivesAProviderToItsSimulator(t *testing.T) {
	t.Parallel()
	e := providertest.NewEnv(t, "tiktok", sim.StaticAccounts{"tok": {ID: "acct"}}, tiktoksim.New, providertest.Options{})
	prov := tiktok.New(tiktok.Config{HTTPClient: e.Client, Now: e.Clock.Now})
	v := providertest.NewVideo(3<<20+17, 12e9, 1080, 1920)
	d := e.Destination("acct", map[string]string{"access_token": "tok"}, v, `{"privacy_level":"SELF_ONLY"}`)
	outs, err := e.Run(prov, d, 100)
	if err != nil {
		t.Fatal(err)
	}
	if last := outs[len(outs)-1]; !last.Done() {
		t.Fatalf("last outcome %+v is not done", last)
	}
	got := e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || got.Uploads[0].Bytes != v.Size() {
		t.Fatalf("uploads %+v; want one of %d bytes, sha256 %s", got.Uploads, v.Size(), v.SHA256())
	}
	if len(e.Requests("POST", "/video/init/")) != 1 {
		t.Fatalf("init requests: %+v", e.Requests("POST", "/init/"))
	}
}
