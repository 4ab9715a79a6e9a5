package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/media/s3test"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestMain stops the S3 server that the tests of media storage start (s3test) once they all
// ran.
func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// newAppEnv is an env running the whole process as `reelay serve` assembles it (workers,
// simulators, media storage) behind a real listener, so that providers reach the sandbox
// simulators over HTTP and the simulators pull media links from it.
func newAppEnv(t *testing.T, d store.Dialect, tune ...func(*config.Config)) *env {
	t.Helper()
	st := storetest.New(t, d)
	skew := new(atomic.Int64)
	srv := apptest.Start(t, st, apptest.WithConfig(tune...), apptest.WithParams(func(p *app.Params) {
		p.SecretKey = bytes.Repeat([]byte{4}, 32)
		p.SimulatorClock = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	}))
	e := &env{t: t, st: st, h: srv.App.Handler, routers: contractRouters(t), app: srv.App, cfg: srv.Config, simSkew: skew}
	e.a = e.newTenant("alice")
	e.b = e.newTenant("bob")
	return e
}

// advanceSimulators moves the simulators' clock d ahead of the real one (their audience grows,
// their processing ends).
func (e *env) advanceSimulators(d time.Duration) { e.simSkew.Add(int64(d)) }

// eachApp runs fn on a fresh app env of every dialect.
func eachApp(t *testing.T, fn func(t *testing.T, e *env), tune ...func(*config.Config)) {
	t.Helper()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, newAppEnv(t, d, tune...))
		})
	}
}

// sandboxChannel connects a sandbox channel of platform to the tenant's project and returns
// its id and external account id. A TikTok channel's app is an audited one unless behavior
// says otherwise: the tests publish direct with reelay's default privacy, PUBLIC_TO_EVERYONE,
// which TikTok refuses from the unaudited app a sandbox channel has by default.
func (e *env) sandboxChannel(tn tenant, platform string, behavior map[string]any) (id, account string) {
	e.t.Helper()
	body := map[string]any{"project_id": tn.ProjectID, "platform": platform, "sandbox": true}
	if platform == "tiktok" {
		b := map[string]any{"app_access": "audited"}
		maps.Copy(b, behavior)
		behavior = b
	}
	if behavior != nil {
		body["sandbox_behavior"] = behavior
	}
	r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: tn.Key, Body: body})
	if r.Code != http.StatusCreated {
		e.t.Fatalf("create %s channel: %d %s", platform, r.Code, r.Body)
	}
	ch := r.JSON["channel"].(map[string]any)
	return ch["id"].(string), ch["external_account_id"].(string)
}

// defaultChannels connects instant sandbox channels on YouTube, Instagram and TikTok.
func (e *env) defaultChannels(tn tenant) map[string]string {
	ids := map[string]string{}
	for _, p := range []string{"youtube", "instagram", "tiktok"} {
		ids[p], _ = e.sandboxChannel(tn, p, map[string]any{"processing_ms": 0})
	}
	return ids
}

// mediaServer serves files at URLs the fetcher may reach (the env allows private addresses)
// and counts the downloads.
type mediaServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newMediaServer(t *testing.T, files map[string][]byte) *mediaServer {
	t.Helper()
	m := &mediaServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		m.hits.Add(1)
		w.Write(b)
	}))
	t.Cleanup(m.Close)
	return m
}

// video returns a small vertical MP4 accepted by the default platforms.
func video(t *testing.T, seconds int) []byte {
	t.Helper()
	return mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Duration(seconds) * time.Second, Width: 1080, Height: 1920})
}

// introspect reads what a simulator received for the tenant's sandbox channels.
func (e *env) introspect(tn tenant, platform string) (uploads, published []map[string]any) {
	e.t.Helper()
	r := e.do(req{Method: "GET", Path: "/sandbox/" + platform + "/_introspect", Key: tn.Key})
	if r.Code != http.StatusOK {
		e.t.Fatalf("introspect %s: %d %s", platform, r.Code, r.Body)
	}
	for _, u := range r.JSON["uploads"].([]any) {
		uploads = append(uploads, u.(map[string]any))
	}
	for _, p := range r.JSON["published"].([]any) {
		published = append(published, p.(map[string]any))
	}
	return uploads, published
}

// waitPost polls GET /posts/{id} until cond holds or the deadline passes.
func (e *env) waitPost(tn tenant, id string, d time.Duration, cond func(p map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := e.do(req{Method: "GET", Path: "/api/v1/posts/" + id, Key: tn.Key})
		if r.Code != http.StatusOK {
			e.t.Fatalf("get post: %d %s", r.Code, r.Body)
		}
		if cond(r.JSON) {
			return r.JSON
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("post %s did not reach the expected state in %s: %s", id, d, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func statusIs(want string) func(map[string]any) bool {
	return func(p map[string]any) bool { return p["status"] == want }
}

// multipartBody builds a multipart publish form; files maps a field to its bytes.
func multipartBody(t *testing.T, fields map[string]string, files map[string][]byte) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for k, v := range files {
		w, err := mw.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(v)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// blobCount counts the files in the env's media storage (temporary uploads included).
func (e *env) blobCount() int {
	e.t.Helper()
	n := 0
	it := e.app.Media.Bucket().List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return n
		}
		if err != nil {
			e.t.Fatalf("listing the media storage: %v", err)
		}
		if !obj.IsDir {
			n++
		}
	}
}

// eachBlobStore runs fn on the env's default media storage, a folder, and on a bucket of a
// real S3 server (SeaweedFS, s3test, which skips saying why where it is not built); blob
// tunes a config to the store.
func eachBlobStore(t *testing.T, fn func(t *testing.T, blob func(*config.Config))) {
	t.Run("file", func(t *testing.T) { fn(t, func(*config.Config) {}) })
	t.Run("s3", func(t *testing.T) {
		u := s3test.BlobURL(t)
		fn(t, func(c *config.Config) { c.BlobURL = u })
	})
}
