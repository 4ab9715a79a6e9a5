package simtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/providertest"
)

// What the tests of the Graph API simulators (Instagram, Threads, Facebook) share: a Graph
// request and its answer, and the fuzz seeds common to the three.

// MetaAnswer is a Graph answer: status, headers and decoded body.
type MetaAnswer struct {
	Status int
	Header http.Header
	Body   map[string]any
}

// Code is the Graph error code of the answer (0 when it is no error).
func (a MetaAnswer) Code() int {
	ge, _ := a.Body["error"].(map[string]any)
	n, _ := ge["code"].(float64)
	return int(n)
}

// Str is the string the answer holds under k ("" when it holds none).
func (a MetaAnswer) Str(k string) string { s, _ := a.Body[k].(string); return s }

// MetaCall sends one request to a simulator on e: params in the query for GET, in a form body
// otherwise; auth is the Authorization header ("" for none).
func MetaCall(t *testing.T, e *providertest.Env, method, path string, params url.Values, auth string) MetaAnswer {
	t.Helper()
	u := e.BaseURL + path
	body := ""
	if method == http.MethodGet {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
	} else {
		body = params.Encode()
	}
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := MetaAnswer{Status: resp.StatusCode, Header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.Body); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.Status != http.StatusOK {
		ge, ok := a.Body["error"].(map[string]any)
		if !ok || ge["type"] != "OAuthException" || ge["message"] == "" || ge["fbtrace_id"] == "" {
			t.Fatalf("%s %s: error answer %d %v is not Graph's error shape", method, path, a.Status, a.Body)
		}
	}
	return a
}

// MetaSeeds are the Graph API requests common to Instagram, Facebook and Threads.
func MetaSeeds(id string, edges ...FuzzSeed) []FuzzSeed {
	out := []FuzzSeed{
		{"GET", "/v21.0/" + id + "?fields=id,username&access_token=tok", "", ""},
		{"GET", "/v21.0/me/accounts?access_token=tok", "", ""},
		{"GET", "/v21.0/" + id + "/insights?metric=views,likes&period=lifetime", FuzzBearer, ""},
		{"GET", "/v21.0/" + id + "/comments?limit=5000&after=xyz", FuzzBearer, ""},
		{"POST", "/v21.0/" + id + "?hide=true", FuzzForm, "hide=maybe"},
		{"DELETE", "/v21.0/" + id, FuzzBearer, ""},
	}
	return append(out, edges...)
}
