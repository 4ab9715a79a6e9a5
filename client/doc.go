// Package client is the Go client of reelay's HTTP API (api/openapi.yaml): typed requests and
// answers for every operation, streamed uploads, typed errors and safe retries. It is the one
// Go way to call a reelay server; the CLI and the agent-tool server are built on it, and its
// own tests drive a real in-process server.
//
// # Use
//
//	c, err := client.New("http://127.0.0.1:8080", os.Getenv("REELAY_API_KEY"))
//	if err != nil { ... }
//	f, _ := os.Open("clip.mp4")
//	defer f.Close()
//	res, err := c.Publish(ctx, client.PublishRequest{
//		ProjectID: projectID,
//		Title:     "Launch day",
//		Platforms: []client.Platform{client.YouTube, client.TikTok},
//		TikTok:    &client.TikTokOptions{Mode: "direct"},
//		Video:     &client.Upload{Reader: f},
//		Progress:  func(sent, total int64) { fmt.Printf("\r%d/%d", sent, total) },
//	})
//	if e, ok := client.AsError(err); ok && e.Code == client.CodeValidationFailed {
//		for field, problem := range e.Fields { ... }
//	}
//	post, err := c.WaitPost(ctx, res.PostID) // until every destination has settled
//
// Every method takes a context first; its deadline bounds the call, retries and waits
// included. Listings come a page at a time (List*, with NextCursor) or as iterators over
// every page (All*).
//
// # Types
//
// Request and answer types are written by hand with the contract's JSON names; a test checks
// every json tag against api/openapi.yaml and every schema property against the types, so
// renaming a field on one side only makes this package's tests fail. Nullable strings of the
// contract are plain strings, empty for null; nullable numbers and times are pointers, since
// a missing metric is not 0. Where the contract leaves an object open (a channel's
// capabilities and options, a dry run's payload) the type is map[string]any rather than a
// struct promising more than the contract does.
//
// The per-platform settings of a post (PublishRequest.YouTube, .TikTok, .Reddit, ...) are
// twelve small structs, each with every field of its contract object: they are short enough
// to type in full, and the server refuses unknown fields, so a map would only move typos
// from the compiler to the server. For a field or platform newer than this client,
// PublishRequest.Extra and UpdatePostRequest.Extra are merged into the body last.
//
// # Uploads
//
// PublishRequest.Video (and Thumbnail) is an io.Reader streamed as multipart/form-data
// through a pipe: the file is never held in memory. Its size is taken from Upload.Size, a
// Len method or by seeking; when known the request has a Content-Length and Progress a total,
// otherwise it is sent chunked with a total of -1.
//
// # Errors
//
// An error answer is an *Error (status, the contract's code, message, fields at fault,
// request id, Retry-After), also for a body that is not the contract's JSON, such as a
// proxy's 502 page; IsNotFound, IsValidation, IsRateLimited, IsUnauthorized, IsConflict and
// errors.As read it. A request that got no answer is a *RequestError wrapping the cause
// (errors.Is(err, context.DeadlineExceeded) works through it).
//
// # Retries
//
// Transient failures are retried with exponential back-off and jitter (3 retries from
// 500 ms by default, WithRetries, WithRetryPolicy), honouring Retry-After (seconds or a date)
// up to the policy's MaxDelay; a longer Retry-After is returned as Error.RetryAfter instead
// of waited out. What is retried depends on whether repeating the request is safe:
//
//   - GET, DELETE, PATCH (an edit sets values, so repeating it changes nothing more), dry
//     runs and analytics syncs: after 429, 502, 503, 504 and network errors.
//   - Publish: the same, because each call carries an Idempotency-Key (the caller's, or a
//     random UUID made for the call) sent unchanged on every retry, so the server answers a
//     repeat with the first post instead of publishing twice. A 502 that carries a post (all
//     destinations failed on their platforms) is an answer, not retried.
//   - Replies: the same, under an Idempotency-Key of their own; a repeat whose reply the
//     platform may have posted unbeknown to the server is answered 409 idempotency_conflict
//     rather than posted again.
//   - Other POSTs (AI generation, channels, keys, webhooks, post retries): only
//     after 429 and 503, which say the request was refused before any work, or when the
//     connection could not be made at all; never after a 500, a 502 or a lost answer, which
//     could mean the work was done.
//   - An upload is sent with "Expect: 100-continue", so a request refused at the door (401,
//     429: the server authenticates and rate-limits before reading a body) takes none of the
//     file when the transport waits for the server's go-ahead (http.DefaultTransport waits
//     up to 1 s). It is retried if every file can be rewound (an io.Seeker, sought back to where it
//     started) or if the failed attempt read none of it; otherwise the error is returned.
//
// A 202 answer (a long AI job, see WaitAIJob) is a success.
package client
