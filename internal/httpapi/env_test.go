package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/api"
	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// tenant is an account as a test sees it: its ids and a live key, named "default".
type tenant = apptest.Tenant

// env is a server on a real store, with two tenants, whose every answer is checked against the
// OpenAPI document.
type env struct {
	t       *testing.T
	st      *store.Store
	h       http.Handler
	usage   *auth.UsageTracker
	a, b    tenant
	routers []routers.Router
	// app and cfg are set by newAppEnv, and simSkew, how far the simulators' clock runs ahead.
	app     *app.App
	cfg     *config.Config
	simSkew *atomic.Int64
}

var (
	contractOnce sync.Once
	contractDoc  *openapi3.T
	opsDoc       *openapi3.T // the paths outside /api/v1, which carry servers of their own
	contractJSON []byte
	contractErr  error
)

func contract(t *testing.T) (doc, ops *openapi3.T, spec []byte) {
	t.Helper()
	contractOnce.Do(func() {
		contractDoc, contractErr = api.Load()
		if contractErr != nil {
			return
		}
		contractJSON, contractErr = api.JSON()
		// The router matches absolute URLs: anchor the document's relative servers on the
		// host the tests send to.
		// kin-openapi's router ignores path-level servers, so those paths get a router of their own.
		contractDoc.Servers = openapi3.Servers{{URL: "http://reelay.test" + httpapi.APIPrefix}}
		ops := *contractDoc
		ops.Servers = openapi3.Servers{{URL: "http://reelay.test"}}
		ops.Paths = openapi3.NewPaths()
		for path, item := range contractDoc.Paths.Map() {
			if len(item.Servers) > 0 {
				ops.Paths.Set(path, item)
			}
		}
		opsDoc = &ops
	})
	if contractErr != nil {
		t.Fatal(contractErr)
	}
	return contractDoc, opsDoc, contractJSON
}

// contractRouters find the contract's operation of a request: the versioned API's, and the
// operational paths' (outside /api/v1).
func contractRouters(t *testing.T) []routers.Router {
	t.Helper()
	doc, ops, _ := contract(t)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	opsRouter, err := legacy.NewRouter(ops)
	if err != nil {
		t.Fatal(err)
	}
	return []routers.Router{router, opsRouter}
}

type envOption func(*httpapi.Options)

func newEnv(t *testing.T, d store.Dialect, opts ...envOption) *env {
	t.Helper()
	st := storetest.New(t, d)
	_, _, spec := contract(t)
	box, _ := secret.NewBox(bytes.Repeat([]byte{3}, secret.KeySize))
	usage := auth.NewUsageTracker(st.TouchAPIKeys, nil)
	o := httpapi.Options{Store: st, Access: publish.ChannelAccess{Box: box}, Usage: usage, RateLimitRPS: 1000, RateLimitBurst: 1000,
		Sandbox: true, Registry: prometheus.NewRegistry(), OpenAPIJSON: spec}
	for _, opt := range opts {
		opt(&o)
	}
	e := &env{t: t, st: st, h: httpapi.New(o), usage: usage, routers: contractRouters(t)}
	e.a = e.newTenant("alice")
	e.b = e.newTenant("bob")
	return e
}

func (e *env) newTenant(name string) tenant {
	e.t.Helper()
	return apptest.NewTenant(e.t, e.st, name, "default")
}

// resp is an answer, decoded.
type resp struct {
	Code   int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// errCode returns the contract error code of an error answer.
func (r *resp) errCode() string {
	e, _ := r.JSON["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r *resp) field(name string) string {
	e, _ := r.JSON["error"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	v, _ := f[name].(string)
	return v
}

// req describes a request: Body is JSON-encoded unless it is a string (sent raw) or nil.
type req struct {
	Method, Path string
	Key          string
	Body         any
	Header       map[string]string
	// RemoteAddr is the client's address and port (httptest's 192.0.2.1:1234 when empty).
	RemoteAddr string
}

// do sends a request and checks the answer against the contract: a documented path must answer
// a documented status with a body matching its schema; an undocumented one may only be a 404
// or 405.
func (e *env) do(r req) *resp {
	e.t.Helper()
	var body []byte
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		body, _ = json.Marshal(b)
	}
	hr := httptest.NewRequest(r.Method, "http://reelay.test"+r.Path, bytes.NewReader(body))
	if r.Body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.Key != "" {
		hr.Header.Set("X-API-Key", r.Key)
	}
	if r.RemoteAddr != "" {
		hr.RemoteAddr = r.RemoteAddr
	}
	for k, v := range r.Header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, hr)
	out := &resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(out.Body, &out.JSON); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %v: %s", r.Method, r.Path, err, out.Body)
		}
	}
	e.checkContract(hr, body, out)
	// A publish whose every destination failed upstream answers 502 with the publish body.
	publishFailed := out.Code == http.StatusBadGateway && out.JSON["post_id"] != nil
	if out.Code >= 400 && out.JSON != nil && strings.HasPrefix(r.Path, httpapi.APIPrefix) && !publishFailed {
		if out.JSON["success"] != false || out.errCode() == "" || out.JSON["request_id"] == "" {
			e.t.Errorf("%s %s: error body lacks success/code/request_id: %s", r.Method, r.Path, out.Body)
		}
	}
	return out
}

func (e *env) checkContract(hr *http.Request, body []byte, out *resp) {
	e.t.Helper()
	vr := hr.Clone(context.Background())
	vr.Body = io.NopCloser(bytes.NewReader(body))
	var route *routers.Route
	var params map[string]string
	var err error
	for _, router := range e.routers {
		if route, params, err = router.FindRoute(vr); err == nil {
			break
		}
	}
	if err != nil {
		if out.Code != http.StatusNotFound && out.Code != http.StatusMethodNotAllowed {
			e.t.Errorf("%s %s answered %d but is not in the contract: %v", hr.Method, hr.URL.Path, out.Code, err)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  out.Code,
		Header:  out.Header,
		Body:    io.NopCloser(bytes.NewReader(out.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s answer %d does not match the contract: %v\nbody: %s", hr.Method, hr.URL.Path, out.Code, err, out.Body)
	}
}

// each runs fn on a fresh env of every dialect.
func each(t *testing.T, fn func(t *testing.T, e *env), opts ...envOption) {
	t.Helper()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, d, opts...))
		})
	}
}
