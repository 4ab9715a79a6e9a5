// Package metasim is what the simulators of Meta's Graph API platforms (Instagram, Threads,
// Facebook Pages: instagramsim, threadssim, facebooksim) share of Graph itself, on the core all
// simulators share (package sim). It sits beside metagraph, the providers' own Graph client.
package metasim

// This file: request paths below an optional API version segment, the reading
// of /{id}/{edge} requests, authentication with the account's call faults, the throttling
// headers Meta sends, the answers to unknown routes, and list paging by "after" cursor.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// Segments splits a request path below the simulator's base path into its segments,
// dropping a leading API version segment (/v1.0, /v26.0): Graph serves unversioned paths too.
func Segments(prefix, path string) []string {
	if prefix != "" {
		path = strings.TrimPrefix(path, prefix)
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 0 && VersionSegment.MatchString(segs[0]) {
		segs = segs[1:]
	}
	return segs
}

// metaAuth resolves the access token a Graph request presents (Authorization: Bearer or OAuth,
// or an access_token parameter) and applies the account's call fault. rateCode is the Graph
// error code the platform throttles with (4 application, 17 user, 32 Page). The error, when
// not nil, is written as it is.
func metaAuth(cfg sim.Config, r *http.Request, params url.Values, rateCode int) (sim.Account, *Error) {
	token := Token(r, params)
	if token == "" {
		return sim.Account{}, Err(http.StatusBadRequest, 104, 0, "An access token is required to request this resource.")
	}
	acct, ok := cfg.Accounts.Resolve(r.Context(), token)
	if !ok {
		return sim.Account{}, Err(http.StatusBadRequest, 190, 0, "Invalid OAuth access token - Cannot parse access token")
	}
	if e := Fault(cfg, acct, rateCode); e != nil {
		return sim.Account{}, e
	}
	return acct, nil
}

// Fault is the Graph error for the account's call fault on this call, or nil.
func Fault(cfg sim.Config, acct sim.Account, rateCode int) *Error {
	switch sim.CallFault(acct.Behavior, cfg.Rand) {
	case sim.FailUnavailable:
		e := Err(http.StatusInternalServerError, 2, 0, "An unexpected error has occurred. Please retry your request later.")
		e.IsTransient = true
		return e
	case sim.FailAuth:
		return Err(http.StatusBadRequest, 190, 463,
			"Error validating access token: Session has expired on "+cfg.Now().UTC().Add(-time.Hour).Format("Monday, 02-Jan-06 15:04:05 MST")+".")
	case sim.FailRateLimit:
		// Graph throttles with an error code (HTTP 400 or 403), never 429 or Retry-After; the
		// wait is in the usage header's estimated_time_to_regain_access, in minutes.
		msg := map[int]string{
			4:  "(#4) Application request limit reached",
			17: "(#17) User request limit reached",
			32: "(#32) Page request limit reached",
		}[rateCode]
		e := Err(http.StatusForbidden, rateCode, 0, msg)
		e.IsTransient = true
		e.Header = map[string]string{"X-Business-Use-Case-Usage": Usage(acct.ID, "pages")}
		return e
	}
	return nil
}

// Usage is an X-Business-Use-Case-Usage header value saying the account is throttled for
// one more minute; typ is the business use case ("pages", "instagram").
func Usage(id, typ string) string {
	b, _ := json.Marshal(map[string][]map[string]any{id: {{
		"type": typ, "call_count": 100, "total_cputime": 25, "total_time": 30,
		"estimated_time_to_regain_access": 1,
	}}})
	return string(b)
}

// Internal is Graph's answer to a failure of the simulator's own (its State): an
// unexpected error, to be retried.
func Internal() *Error {
	e := Err(http.StatusInternalServerError, 2, 0, "An unexpected error has occurred. Please retry your request later.")
	e.IsTransient = true
	return e
}

// NewID draws a new Graph-like numeric id for a record of kind's platform and kind: base
// plus a random number below 10^13 (the ranges of the simulators' bases do not overlap), drawn
// again in the unlikely case a record has it already. Ids are random, not counted, so that two
// processes, or a process and its predecessor, never hand out the same.
func NewID(tx sim.Tx, kind sim.Key, base uint64) (string, error) {
	for {
		id := RandomID(base)
		kind.ID = id
		_, found, err := tx.Get(kind)
		if err != nil || !found {
			return id, err
		}
	}
}

// RandomID is base plus a random number below 10^13 (see NewID), for ids that are not
// the keys of records.
func RandomID(base uint64) string {
	return strconv.FormatUint(base+binary.BigEndian.Uint64(sim.RandomBytes(8))%(1e13-1)+1, 10)
}

// JSON writes a 200 answer.
func JSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// Timestamp formats a time as Graph does (2026-03-01T12:00:00+0000).
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-0700")
}

// Params reads a Graph request's parameters and checks that its path is /{id} or
// /{id}/{edge}. When ok is false, the error answer is written.
func Params(w http.ResponseWriter, r *http.Request, segs []string) (params url.Values, ok bool) {
	params, err := igParams(r)
	if err != nil {
		Write(w, Err(http.StatusBadRequest, 100, 0, "(#100) "+err.Error()))
		return nil, false
	}
	if len(segs) == 0 || segs[0] == "" || len(segs) > 2 {
		Write(w, Err(http.StatusBadRequest, 2500, 0, "Unknown path components: /"+strings.Join(segs, "/")))
		return nil, false
	}
	return params, true
}

// Request reads a Graph request (Params), authenticates it (metaAuth, throttled with
// rateCode) and splits its path into the node id ("me" being the token's account) and the
// edge ("" for the node itself). When ok is false, the error answer is written.
func Request(cfg sim.Config, w http.ResponseWriter, r *http.Request, segs []string, rateCode int) (acct sim.Account, params url.Values, id, edge string, ok bool) {
	params, ok = Params(w, r, segs)
	if !ok {
		return sim.Account{}, nil, "", "", false
	}
	acct, gerr := metaAuth(cfg, r, params, rateCode)
	if gerr != nil {
		Write(w, gerr)
		return sim.Account{}, nil, "", "", false
	}
	id = segs[0]
	if id == "me" {
		id = acct.ID
	}
	if len(segs) == 2 {
		edge = segs[1]
	}
	return acct, params, id, edge, true
}

// NoRoute is Graph's answer to a call no route takes: a method the node does not support,
// or an edge the node type (nodeType) does not have.
func NoRoute(method, id, edge, nodeType string) *Error {
	if edge == "" {
		return Err(http.StatusBadRequest, 100, 33, Unsupported(method, id))
	}
	return Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (%s)", edge, nodeType))
}

// Answer writes gerr when it is not nil, else the 200 answer res.
func Answer(w http.ResponseWriter, res any, gerr *Error) {
	if gerr != nil {
		Write(w, gerr)
		return
	}
	JSON(w, res)
}

// Paging reads the limit (25 when absent, at most 100) and "after" cursor parameters of
// a Graph list edge; start is the offset the cursor stands for.
func Paging(p url.Values) (start, limit int, gerr *Error) {
	limit = 25
	if v := p.Get("limit"); v != "" {
		var err error
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return 0, 0, Err(http.StatusBadRequest, 100, 0, "(#100) Param limit must be a positive integer")
		}
		limit = min(limit, 100)
	}
	if v := p.Get("after"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil {
			return 0, 0, Err(http.StatusBadRequest, 100, 0, "(#100) Invalid after cursor")
		}
		start, _ = strconv.Atoi(string(b))
	}
	return start, limit, nil
}

// Page is one page of a Graph list: the rows of items[start:start+limit], with their
// "before" and "after" cursors and, when more follow, the link to the next page (next builds
// it from the "after" cursor).
func Page[T any](items []T, start, limit int, next func(after string) string, row func(T) (map[string]any, *Error)) (any, *Error) {
	data := []any{}
	for i := start; i < len(items) && i < start+limit; i++ {
		r, gerr := row(items[i])
		if gerr != nil {
			return nil, gerr
		}
		data = append(data, r)
	}
	paging := map[string]any{}
	if len(data) > 0 {
		paging["cursors"] = map[string]string{"before": metaCursor(start), "after": metaCursor(start + len(data))}
		if start+limit < len(items) {
			paging["next"] = next(metaCursor(start + limit))
		}
	}
	return map[string]any{"data": data, "paging": paging}, nil
}

func metaCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset)))
}

// Next builds the paging.next links of a list read at path below base with parameters p:
// the same request with the "after" cursor, without the access token (Graph's links carry
// it; the simulator's do not, so that no logged link does).
func Next(base, path string, p url.Values) func(after string) string {
	return func(after string) string {
		q := url.Values{}
		for k, v := range p {
			if k != "access_token" {
				q[k] = v
			}
		}
		q.Set("after", after)
		return base + path + "?" + q.Encode()
	}
}
