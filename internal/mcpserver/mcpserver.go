// Package mcpserver is reelay's agent-tool server: the Model Context Protocol tools
// reelay_publish_post, reelay_get_post, reelay_list_channels, reelay_list_projects and
// reelay_get_analytics, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// # One implementation, two transports
//
// Every tool is a call of the public Go client (package client) and nothing else: the tools
// hold no store, no service and no privilege of their own, so what an agent may do is exactly
// what the API lets the same credential do, checked by the same code (authentication, rate
// limits, tenant isolation, validation, allowance). The transport only decides which
// client.Client the tools get:
//
//   - stdio (`reelay mcp`): a client of a running server over HTTP, with REELAY_URL and
//     REELAY_API_KEY. The agent runs on the user's machine, so reelay_publish_post also takes
//     video_path and thumbnail_path, local files streamed to the server with the client's
//     upload (Options.LocalFiles).
//   - streamable HTTP (POST /api/v1/mcp, package httpapi): one server for the process, whose
//     tools get a client per call (NewPerCall) built from the call's HTTP request headers
//     (mcp.RequestExtra): its transport hands each API call straight to the server's own
//     handler, carrying the caller's credential header. There video_path and thumbnail_path
//     are refused: a path would name a file on the server.
//
// The alternative, tools calling the publish service and the store directly, would have been
// a second front door with its own decoding and checks to keep equal to the API's; going
// through the client keeps one.
//
// # Answers
//
// A tool's answer is the API's answer as structured content (its output schema is derived from
// the client's types), plus a text summary written for a model and the same JSON as text for
// clients that read only text. Failures are tool results with isError set, never JSON-RPC
// errors: the API's message, status, code, the fields at fault, Retry-After, and what to do next.
// Arguments that do not fit the input schema are refused by the SDK before a tool runs; those
// messages are rewritten to name the field ("invalid argument tiktok.mode: ...").
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
)

// Tool names.
const (
	ToolPublishPost   = "reelay_publish_post"
	ToolGetPost       = "reelay_get_post"
	ToolListChannels  = "reelay_list_channels"
	ToolListProjects  = "reelay_list_projects"
	ToolGetAnalytics  = "reelay_get_analytics"
	implementationTag = "reelay"
)

// ToolNames lists the tools in the order tools/list answers them.
var ToolNames = []string{ToolGetAnalytics, ToolGetPost, ToolListChannels, ToolListProjects, ToolPublishPost}

// Options configure a server.
type Options struct {
	// LocalFiles lets reelay_publish_post read video_path and thumbnail_path from this
	// machine's disk. Only for stdio, where the tools run on the user's own machine with the
	// user's own permissions.
	LocalFiles bool
	// Version is reelay's version, announced to clients.
	Version string
	// Logger receives the SDK's own diagnostics (nil: discarded). Never stdout under stdio.
	Logger *slog.Logger
}

// instructions tell a model how the tools fit together (sent in the initialize answer).
const instructions = `reelay publishes short vertical videos to social platforms (YouTube, Instagram, TikTok, LinkedIn, Pinterest, Threads, Facebook, Bluesky, Telegram, Discord, Mastodon, Reddit) through connected channels.
Start with reelay_list_projects and reelay_list_channels: they give the ids the other tools take, and each channel's capabilities (text limits, video size and duration) to respect.
reelay_publish_post publishes or schedules a video and answers a post_id. Publishing takes time: when the answer is not settled, poll reelay_get_post with that post_id; never publish again because a poll timed out or the outcome is unknown, which would post twice.
TikTok posts in inbox mode (the default) end as sent_to_inbox: delivered to the creator's TikTok app, public only once the creator finishes them there.
reelay_get_analytics reports views, likes, comments and impressions; a figure a platform does not give is null, not 0.`

// ClientFunc gives one tool call the API client it works with.
type ClientFunc func(ctx context.Context, req *mcp.CallToolRequest) (*client.Client, error)

// New returns an MCP server whose tools call the API through c (one caller: stdio).
func New(c *client.Client, o Options) *mcp.Server {
	return NewPerCall(func(context.Context, *mcp.CallToolRequest) (*client.Client, error) { return c, nil }, o)
}

// NewPerCall returns an MCP server whose tools ask clientFor for their API client at each
// call, so that one server can serve many callers, each call acting as its own caller. A
// failure of clientFor is the call's tool error.
func NewPerCall(clientFor ClientFunc, o Options) *mcp.Server {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: implementationTag, Title: "reelay", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger})
	s.AddReceivingMiddleware(nameArgumentErrors)
	defs := toolDefinitions(o.LocalFiles)
	t := &tools{localFiles: o.LocalFiles}
	addTool(s, defs[ToolPublishPost], clientFor, t.publishPost)
	addTool(s, defs[ToolGetPost], clientFor, t.getPost)
	addTool(s, defs[ToolListChannels], clientFor, t.listChannels)
	addTool(s, defs[ToolListProjects], clientFor, t.listProjects)
	addTool(s, defs[ToolGetAnalytics], clientFor, t.getAnalytics)
	return s
}

// tools are the handlers; each gets the API client of its call.
type tools struct {
	localFiles bool
}

// answer is what a tool found: the API's answer, a summary of it, and whether what it
// reports is a failure (a post that failed on every destination) although the call worked.
type answer[Out any] struct {
	Value   Out
	Summary string
	Failed  bool
}

// addTool registers run as a typed tool: the SDK validates the arguments against def's input
// schema and the answer against its output schema. Errors become tool results with isError
// (errorResult) without structured content, which would not match the output schema that
// clients check it against; an answer that reports a failure (Failed) keeps its structured
// content, which does.
func addTool[In, Out any](s *mcp.Server, def *mcp.Tool, clientFor ClientFunc,
	run func(context.Context, *client.Client, In) (answer[Out], error)) {
	mcp.AddTool(s, def, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		api, err := clientFor(ctx, req)
		if err != nil {
			return errorResult(err), nil, nil
		}
		a, err := run(ctx, api, in)
		if err != nil {
			return errorResult(err), nil, nil
		}
		raw, err := json.Marshal(a.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("encode answer: %w", err)
		}
		return &mcp.CallToolResult{
			IsError: a.Failed,
			Content: []mcp.Content{&mcp.TextContent{Text: a.Summary}, &mcp.TextContent{Text: string(raw)}},
		}, a.Value, nil
	})
}

// argumentError is an argument the tool refuses before calling the API.
type argumentError struct {
	Field   string
	Problem string
}

func (e *argumentError) Error() string { return "invalid argument " + e.Field + ": " + e.Problem }

func badArgument(field, format string, args ...any) error {
	return &argumentError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// nameArgumentErrors rewrites the SDK's schema-validation failures, which name the field as a
// schema pointer inside a chain of "validating ..." prefixes, into "invalid argument <field>:
// <problem>" with the field as a dotted path ("tiktok.mode"), the way the API names fields.
func nameArgumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r.IsError && len(r.Content) == 1 {
			if tc, ok := r.Content[0].(*mcp.TextContent); ok {
				if text, ok := rewriteSchemaError(tc.Text); ok {
					r.Content = []mcp.Content{&mcp.TextContent{Text: text}}
				}
			}
		}
		return res, err
	}
}

// rewriteSchemaError turns the SDK's
//
//	validating "arguments": validating root: validating /properties/tiktok: validating /properties/tiktok/properties/mode: enum: bad does not equal any of: [inbox direct]
//
// into "invalid argument tiktok.mode: enum: bad does not equal any of: [inbox direct]". Text of
// another shape is left alone (ok false).
func rewriteSchemaError(text string) (string, bool) {
	const prefix = `validating "arguments": `
	rest, found := strings.CutPrefix(text, prefix)
	if !found {
		return "", false
	}
	field := ""
	for {
		head, tail, ok := strings.Cut(rest, ": ")
		if !ok || !strings.HasPrefix(head, "validating ") {
			break
		}
		if ptr := strings.TrimPrefix(head, "validating "); strings.HasPrefix(ptr, "/") {
			field = fieldPath(ptr)
		}
		rest = tail
	}
	if names, ok := strings.CutPrefix(rest, "unexpected additional properties "); ok {
		return fmt.Sprintf("invalid argument %s: unknown field; the tool's input schema lists the fields it takes",
			childFields(field, names)), true
	}
	if names, ok := strings.CutPrefix(rest, "required: missing properties: "); ok {
		return fmt.Sprintf("invalid argument %s: required", childFields(field, names)), true
	}
	if field == "" {
		return "invalid arguments: " + rest, true
	}
	return "invalid argument " + field + ": " + rest, true
}

// fieldPath turns a schema pointer (/properties/tiktok/properties/mode, /properties/platforms/items)
// into the field's dotted name (tiktok.mode, platforms[]).
func fieldPath(ptr string) string {
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items":
			b.WriteString("[]")
		}
	}
	return b.String()
}

// childFields turns a list of property names as the SDK quotes them (["a" "b"]) into their
// dotted paths under parent ("tiktok.a, tiktok.b").
func childFields(parent, quoted string) string {
	var out []string
	for _, q := range strings.Fields(strings.Trim(quoted, "[]")) {
		name := strings.Trim(q, `"`)
		if parent != "" {
			name = parent + "." + name
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

// errorResult turns a failed call into a tool result with isError: a summary for the model and
// the details as JSON.
func errorResult(err error) *mcp.CallToolResult {
	detail := describeError(err)
	raw, _ := json.Marshal(map[string]any{"error": detail})
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: detail.text()}, &mcp.TextContent{Text: string(raw)}},
	}
}

// errorDetail is a failure as a tool reports it.
type errorDetail struct {
	// Status is the API's HTTP status; 0 when there was no answer or the tool refused first.
	Status int `json:"status,omitempty"`
	// Code is the API's error code, or invalid_argument, unreachable.
	Code              string            `json:"code,omitempty"`
	Message           string            `json:"message"`
	Fields            map[string]string `json:"fields,omitempty"`
	RequestID         string            `json:"request_id,omitempty"`
	RetryAfterSeconds int               `json:"retry_after_seconds,omitempty"`
	PostID            string            `json:"post_id,omitempty"`
	// Hint says what to do about it.
	Hint string `json:"hint,omitempty"`
}

func describeError(err error) errorDetail {
	var arg *argumentError
	var unknown *unknownOutcome
	var reqErr *client.RequestError
	if e, ok := client.AsError(err); ok {
		return apiErrorDetail(e)
	}
	switch {
	case errors.As(err, &unknown):
		return errorDetail{Code: "unknown_outcome", Message: unknown.err.Error(),
			Hint: "The outcome is unknown: the post may have been created. Do not publish different arguments. Repeat this exact call (idempotency key " +
				unknown.key + "): it answers the existing post instead of posting twice."}
	case errors.As(err, &arg):
		return errorDetail{Code: "invalid_argument", Message: arg.Error(), Fields: map[string]string{arg.Field: arg.Problem}}
	case errors.As(err, &reqErr):
		d := errorDetail{Code: "unreachable", Message: reqErr.Error(),
			Hint: "The reelay server did not answer. Check that it runs and that REELAY_URL names it."}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			d.Hint = "The call was cut off before reelay answered."
		}
		return d
	default:
		return errorDetail{Code: "tool_error", Message: err.Error()}
	}
}

// apiErrorDetail explains an error answer of the API and what a model should do about it.
func apiErrorDetail(e *client.Error) errorDetail {
	d := errorDetail{Status: e.StatusCode, Code: e.Code, Message: e.Message, RequestID: e.RequestID,
		PostID: e.PostID, RetryAfterSeconds: int((e.RetryAfter + 999_999_999) / 1_000_000_000)}
	if d.Message == "" {
		d.Message = e.Error()
	}
	if len(e.Fields) > 0 {
		d.Fields = make(map[string]string, len(e.Fields))
		for k, v := range e.Fields {
			// The API names its header; the tool takes it as an argument.
			if k == "Idempotency-Key" {
				k = "idempotency_key"
			}
			d.Fields[k] = v
		}
	}
	switch {
	case e.StatusCode == 401 || e.Code == client.CodeUnauthorized:
		d.Hint = "The API key is missing, invalid or revoked. Set REELAY_API_KEY to a live key (`reelay keys create` makes one) and restart the agent's connection."
	case e.Code == client.CodeValidationFailed:
		d.Hint = "Correct the fields named and call again."
	case e.StatusCode == 404 || e.Code == client.CodeNotFound:
		d.Hint = "There is no such object in this account. Take ids from reelay_list_projects, reelay_list_channels or a publish answer."
	case e.StatusCode == 429 || e.Code == client.CodeRateLimited:
		d.Hint = "Rate limited: wait before calling again."
		if d.RetryAfterSeconds > 0 {
			d.Hint = fmt.Sprintf("Rate limited: wait %d s before calling again.", d.RetryAfterSeconds)
		}
	case e.Code == client.CodeDuplicatePost:
		d.Hint = "The same video and text went to the same channel less than 10 minutes ago"
		if e.PostID != "" {
			d.Hint += " as post " + e.PostID + ": read it with reelay_get_post"
		}
		d.Hint += ". Publish it again only if that is really wanted, with allow_duplicate: true."
	case e.Code == client.CodeIdempotencyConflict:
		d.Hint = "This idempotency_key was used in the last 24 h with other arguments. Repeat the first call unchanged to read its post, or use a new key for a new post."
	case e.Code == client.CodeInsufficientCredits:
		d.Hint = "The account has too few AI credits; an operator adds them."
	case e.Code == client.CodeMonthlyLimitReached:
		d.Hint = "The account's monthly post allowance is used up; nothing was published."
	case e.Code == client.CodeAccountSuspended:
		d.Hint = "The account is suspended; nothing was published."
	case e.StatusCode == 502 || e.Code == client.CodeUpstreamError:
		d.Hint = "A platform or upstream service failed; the message is its own. Try again later."
	case e.StatusCode >= 500:
		d.Hint = "The server failed; try again later and quote the request id if it persists."
	}
	return d
}

// text is the readable form of a failure.
func (d errorDetail) text() string {
	var b strings.Builder
	switch {
	case d.Status != 0:
		fmt.Fprintf(&b, "reelay answered %d %s: %s", d.Status, cmp.Or(d.Code, http.StatusText(d.Status)), d.Message)
	default:
		b.WriteString(d.Message)
	}
	if len(d.Fields) > 0 && !(len(d.Fields) == 1 && d.Code == "invalid_argument") {
		b.WriteString("\nFields at fault:")
		for _, k := range sortedKeys(d.Fields) {
			fmt.Fprintf(&b, "\n- %s: %s", k, d.Fields[k])
		}
	}
	if d.Hint != "" {
		b.WriteString("\n" + d.Hint)
	}
	if d.RequestID != "" {
		b.WriteString("\nRequest id: " + d.RequestID)
	}
	return b.String()
}
