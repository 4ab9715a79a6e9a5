package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/httpapi"
)

// BenchmarkMCPToolCall is one tools/call of reelay_list_projects through POST /api/v1/mcp: the
// MCP request's authentication, a protocol session and tool server built for it, and the
// tool's in-process GET /projects with its own authentication. Compare with
// BenchmarkAuthenticatedListProjects, the same API call made directly.
func BenchmarkMCPToolCall(b *testing.B) {
	e := newBenchEnv(b)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reelay_list_projects","arguments":{}}}`)
	serve := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://reelay.test"+httpapi.APIPrefix+"/mcp", bytes.NewReader(body))
		r.Header.Set("X-API-Key", e.tenant.Key)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		return e.serve(r)
	}
	if rec := serve(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), e.tenant.ProjectID) {
		b.Fatalf("tools/call: %d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := serve(); rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
