// Package videogen makes short videos with hosted text-to-video and image-to-video models
// that use the queue pattern of fal.ai: the request is submitted once, its status is polled
// until it completes, then its result names the video. The protocol facts here (the answers'
// fields, 202 while queued, the requests path under the model's app, errors as a "detail")
// come from https://docs.fal.ai/documentation/model-apis/inference/queue; a model URL on
// another host points the client at any service that speaks the same protocol.
//
// Submit and Wait are separate because a generation costs money and takes minutes: a caller
// keeps the Job that Submit answers and, after a restart, waits on it again rather than
// paying for a second video. The key goes only in the Authorization header, and only to the
// configured model's host, whatever URLs a provider answers.
package videogen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Config configures a Client.
type Config struct {
	TextURL    string       // model endpoint for text-to-video (required)
	ImageURL   string       // model endpoint for image-to-video ("" = TextURL)
	APIKey     string       // default key; a call's own key overrides it
	HTTPClient *http.Client // nil = a client with a 30 s per-request timeout
	// PollInitial is the delay before the first status poll (default 2 s); it doubles after
	// every poll up to PollMax (default 15 s), since a video takes minutes and most of a
	// generation is spent waiting.
	PollInitial time.Duration
	PollMax     time.Duration
	Timeout     time.Duration // bounds a Submit and a whole Wait (default 10 min)
	Logger      *slog.Logger
}

// Defaults of Config.
const (
	DefaultPollInitial = 2 * time.Second
	DefaultPollMax     = 15 * time.Second
	DefaultTimeout     = 10 * time.Minute
	requestTimeout     = 30 * time.Second
)

const (
	// maxAnswer bounds what is read of any answer: the protocol's answers are a few hundred bytes.
	maxAnswer = 1 << 20
	// maxMessage bounds a provider's message in an Error, in characters.
	maxMessage = 300
	// maxFailures is how many failed polls in a row Wait lets pass before giving up: the
	// request goes on at the provider, so a network blip must not throw away a paid video.
	maxFailures = 3
	// defaultAspect is reelay's format, short vertical video.
	defaultAspect = "9:16"
)

// Client submits generations and waits for their videos. It is safe for concurrent use.
type Client struct {
	text, image                   *url.URL
	key                           string
	http                          *http.Client
	pollInitial, pollMax, timeout time.Duration
	log                           *slog.Logger
	// sleep waits between polls; tests replace it to see the back-off without waiting for it.
	sleep func(context.Context, time.Duration) error
}

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	text, err := modelURL("TextURL", cfg.TextURL)
	if err != nil {
		return nil, err
	}
	image := text
	if cfg.ImageURL != "" {
		if image, err = modelURL("ImageURL", cfg.ImageURL); err != nil {
			return nil, err
		}
	}
	c := &Client{text: text, image: image, key: cfg.APIKey, http: cfg.HTTPClient,
		pollInitial: cfg.PollInitial, pollMax: cfg.PollMax, timeout: cfg.Timeout, log: cfg.Logger, sleep: sleep}
	if c.http == nil {
		c.http = &http.Client{Timeout: requestTimeout}
	}
	if c.pollInitial <= 0 {
		c.pollInitial = DefaultPollInitial
	}
	if c.pollMax <= 0 {
		c.pollMax = DefaultPollMax
	}
	c.pollMax = max(c.pollMax, c.pollInitial)
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

func modelURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("videogen: %s must be an absolute http(s) URL such as https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video", field)
	}
	if u.User != nil {
		return nil, fmt.Errorf("videogen: %s must not carry credentials: give the key as the API key", field)
	}
	if strings.Trim(u.Path, "/") == "" {
		return nil, fmt.Errorf("videogen: %s %s names no model: its path is the model's, such as /fal-ai/kling-video/v2/master/text-to-video", field, u)
	}
	u.Fragment = ""
	return u, nil
}

// Name is a short description for logs and answers, e.g.
// "queue.fal.run/fal-ai/kling-video/v2/master/text-to-video" (host+path, no query).
func (c *Client) Name() string { return c.text.Host + c.text.Path }

// Request is a video to generate.
type Request struct {
	Prompt      string
	ImageURL    string // "" = text-to-video
	AspectRatio string // "9:16" or "16:9"; "" = "9:16"
}

// Job identifies submitted work, so a caller can save it and resume polling after a restart
// instead of submitting again.
type Job struct {
	RequestID   string `json:"request_id"`
	StatusURL   string `json:"status_url"`
	ResponseURL string `json:"response_url"`
}

// input is what the models take. Duration is a string in their schemas.
type input struct {
	Prompt      string `json:"prompt"`
	AspectRatio string `json:"aspect_ratio"`
	Duration    string `json:"duration"`
	ImageURL    string `json:"image_url,omitempty"`
}

// errBound is the cause of a context ended by Config.Timeout, told apart from the caller's own
// deadline or cancellation.
var errBound = errors.New("videogen: time bound reached")

// Submit sends the request; key "" = the configured key. A request with an image goes to the
// image-to-video endpoint. It is not retried: a repeated submit is a second paid generation.
func (c *Client) Submit(ctx context.Context, key string, req Request) (Job, error) {
	key = c.keyFor(key)
	model := c.text
	if req.ImageURL != "" {
		model = c.image
	}
	in := input{Prompt: req.Prompt, AspectRatio: req.AspectRatio, Duration: "5", ImageURL: req.ImageURL}
	if in.AspectRatio == "" {
		in.AspectRatio = defaultAspect
	}
	body, err := json.Marshal(in)
	if err != nil {
		return Job{}, fmt.Errorf("videogen: encoding the input: %w", err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errBound)
	defer cancel()
	a, err := c.do(ctx, http.MethodPost, model.String(), key, body)
	if err != nil {
		return Job{}, err
	}
	if a.status < 200 || a.status > 299 {
		return Job{}, c.refusal(a, key)
	}
	var job Job
	if err := json.Unmarshal(a.body, &job); err != nil || job.RequestID == "" {
		return Job{}, &Error{Kind: Failed, Status: a.status, Message: "the submit answer has no request_id"}
	}
	if err := c.resolve(&job, model, key); err != nil {
		return Job{}, err
	}
	c.log.Info("video generation submitted", "model", model.Host+model.Path, "request_id", job.RequestID,
		"image", req.ImageURL != "", "aspect_ratio", in.AspectRatio)
	return job, nil
}

// Wait polls the job's status with back-off (PollInitial doubling to PollMax, honouring
// Retry-After on 429) until it completes, then fetches the result and returns the generated
// video's URL. Bounded by Timeout and ctx. A job without URLs (only its id was kept) is looked
// for under the text-to-video model's app, where fal keeps the image model's requests too.
func (c *Client) Wait(ctx context.Context, key string, job Job) (videoURL string, err error) {
	key = c.keyFor(key)
	if job.RequestID == "" {
		return "", errors.New("videogen: the job has no request id")
	}
	if err := c.resolve(&job, c.text, key); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errBound)
	defer cancel()
	log := c.log.With("model", c.Name(), "request_id", job.RequestID)
	start := time.Now()
	delay, wait := c.pollInitial, c.pollInitial
	complete, modelErr, failures := false, "", 0
	for {
		if err := c.sleep(ctx, wait); err != nil {
			return "", c.ctxErr(ctx, "waiting for "+job.RequestID)
		}
		delay = min(delay*2, c.pollMax)
		wait = delay
		var err error
		if !complete {
			complete, modelErr, err = c.status(ctx, key, job, log)
		}
		if complete && err == nil {
			if videoURL, err = c.result(ctx, key, job, modelErr); err == nil {
				log.Info("video generated", "duration", time.Since(start).Round(time.Millisecond))
				return videoURL, nil
			}
		}
		if err == nil {
			failures = 0
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			return "", err
		}
		switch {
		case e.Kind == RateLimited:
			wait = max(wait, e.RetryAfter)
			if end, ok := ctx.Deadline(); ok && time.Until(end) < wait {
				return "", e // waiting as asked would outlast the bound: say why now
			}
		// A network failure, or a failed status poll (a failed result is the model's own).
		case e.Kind == Failed && (e.Status == 0 || (e.Status >= 500 && !complete)) && failures < maxFailures:
			failures++
		default:
			return "", err
		}
		log.Warn("video generation poll failed, retrying", "error", e.Error(), "wait", wait)
	}
}

// status polls once. complete is true once the request is done, modelErr the error a failed
// model reported with it.
func (c *Client) status(ctx context.Context, key string, job Job, log *slog.Logger) (complete bool, modelErr string, err error) {
	a, err := c.do(ctx, http.MethodGet, job.StatusURL, key, nil)
	if err != nil {
		return false, "", err
	}
	// fal answers 202 while the request waits or runs, 200 once it is complete.
	if a.status != http.StatusOK && a.status != http.StatusAccepted {
		return false, "", c.refusal(a, key)
	}
	var st struct {
		Status        string `json:"status"`
		QueuePosition *int   `json:"queue_position"`
		Error         string `json:"error"`
		ErrorType     string `json:"error_type"`
	}
	if err := json.Unmarshal(a.body, &st); err != nil {
		return false, "", &Error{Kind: Failed, Status: a.status, Message: "the status answer is not JSON"}
	}
	log.Debug("video generation status", "status", st.Status, "queue_position", st.QueuePosition)
	switch st.Status {
	case "IN_QUEUE", "IN_PROGRESS":
		return false, "", nil
	case "COMPLETED":
		if st.Error != "" && st.ErrorType != "" {
			st.Error += " (" + st.ErrorType + ")"
		}
		return true, c.clean(st.Error, key), nil
	}
	return false, "", &Error{Kind: Failed, Status: a.status, Message: c.clean(fmt.Sprintf("the request ended %q", st.Status), key)}
}

// result fetches a completed request's output. A model that failed answers its own error status
// and detail here, which say more than the status's error (modelErr), so both are read.
func (c *Client) result(ctx context.Context, key string, job Job, modelErr string) (string, error) {
	a, err := c.do(ctx, http.MethodGet, job.ResponseURL, key, nil)
	if err != nil {
		return "", err
	}
	if a.status < 200 || a.status > 299 {
		e := c.refusal(a, key)
		if modelErr != "" && e.Message == http.StatusText(a.status) {
			e.Message = modelErr
		}
		return "", e
	}
	if modelErr != "" {
		return "", &Error{Kind: Failed, Status: a.status, Message: modelErr}
	}
	var out struct {
		Video struct {
			URL string `json:"url"`
		} `json:"video"`
	}
	_ = json.Unmarshal(a.body, &out)
	if u, err := url.Parse(out.Video.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &Error{Kind: Failed, Status: a.status, Message: "the result has no video URL"}
	}
	return out.Video.URL, nil
}

func (c *Client) keyFor(key string) string {
	if key == "" {
		return c.key
	}
	return key
}

// resolve fills in a job's missing URLs from the model URL, and refuses URLs that would take the
// key anywhere but a configured model's scheme and host: a provider's answer is not trusted with
// where the key goes next. A refused URL is not quoted, as it may carry anything.
func (c *Client) resolve(job *Job, model *url.URL, key string) error {
	if job.StatusURL == "" || job.ResponseURL == "" {
		base := requestsURL(model, job.RequestID)
		if job.StatusURL == "" {
			job.StatusURL = base + "/status"
		}
		if job.ResponseURL == "" {
			job.ResponseURL = base
		}
	}
	for _, raw := range []string{job.StatusURL, job.ResponseURL} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &Error{Kind: Failed, Message: c.clean(fmt.Sprintf("request %s: the provider answered a status or response URL that is not an absolute http(s) URL", job.RequestID), key)}
		}
		if o := origin(u); o != origin(c.text) && o != origin(c.image) {
			return &Error{Kind: Failed, Message: c.clean(fmt.Sprintf("request %s: the provider answered a status or response URL on %s, not on the model's %s: not followed, so that the key goes nowhere else",
				job.RequestID, u.Host, c.text.Host), key)}
		}
	}
	return nil
}

// requestsURL is where fal keeps a request: under the model's app, the first two segments of
// its path, so a submit to /fal-ai/kling-video/v2/master/text-to-video is polled at
// /fal-ai/kling-video/requests/{id}/status.
func requestsURL(model *url.URL, id string) string {
	segs := strings.SplitN(strings.Trim(model.EscapedPath(), "/"), "/", 3)
	app := strings.Join(segs[:min(2, len(segs))], "/")
	return model.Scheme + "://" + model.Host + "/" + app + "/requests/" + url.PathEscape(id)
}

// origin is a URL's scheme, host and port, with the port a scheme implies written out.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// answer is an HTTP answer, its body read.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request. Its error is an *Error (the provider could not be reached, or answered
// too much) or the end of ctx; an answer of any status is returned for the caller to judge.
func (c *Client) do(ctx context.Context, method, target, key string, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return answer{}, &Error{Kind: Failed, Message: "unusable URL: " + c.clean(err.Error(), key)}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Key "+key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return answer{}, c.ctxErr(ctx, method+" "+req.URL.Host)
		}
		return answer{}, &Error{Kind: Failed, Message: c.clean("could not reach the provider: "+err.Error(), key)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return answer{}, c.ctxErr(ctx, method+" "+req.URL.Host)
	case err != nil:
		return answer{}, &Error{Kind: Failed, Message: c.clean("reading the provider's answer: "+err.Error(), key)}
	case len(data) > maxAnswer:
		return answer{}, &Error{Kind: Failed, Status: resp.StatusCode, Message: "the provider's answer is larger than 1 MiB"}
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// ctxErr is the error of an ended ctx: Timeout when Config.Timeout ended it, else the caller's
// own cancellation or deadline, wrapped.
func (c *Client) ctxErr(ctx context.Context, doing string) error {
	if errors.Is(context.Cause(ctx), errBound) {
		return &Error{Kind: Timeout, Message: fmt.Sprintf("no answer within %s", c.timeout)}
	}
	return fmt.Errorf("videogen: %s: %w", doing, ctx.Err())
}

// refusal is the Error of an answer with an error status.
func (c *Client) refusal(a answer, key string) *Error {
	e := &Error{Kind: Failed, Status: a.status, Message: c.clean(detailOf(a.body), key)}
	if e.Message == "" {
		e.Message = http.StatusText(a.status)
	}
	switch a.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		e.Kind = KeyRefused
	case http.StatusUnprocessableEntity:
		e.Kind = InputRefused
	case http.StatusTooManyRequests:
		e.Kind, e.RetryAfter = RateLimited, retryAfter(a.header)
	}
	return e
}

// detailOf reads the provider's message from an error body: fal's "detail", a string or a
// validation list of {loc, msg}, or the "error" or "message" other services use.
func detailOf(body []byte) string {
	var b struct {
		Detail  json.RawMessage `json:"detail"`
		Error   any             `json:"error"`
		Message any             `json:"message"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(b.Detail, &s) == nil {
		return s
	}
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(b.Detail, &list) == nil && len(list) > 0 {
		parts := make([]string, 0, len(list))
		for _, f := range list {
			var loc []string
			for _, l := range f.Loc {
				if l != "body" {
					loc = append(loc, fmt.Sprint(l))
				}
			}
			if len(loc) > 0 {
				parts = append(parts, strings.Join(loc, ".")+": "+f.Msg)
			} else {
				parts = append(parts, f.Msg)
			}
		}
		return strings.Join(parts, "; ")
	}
	for _, v := range []any{b.Error, b.Message} {
		if s, ok := v.(string); ok {
			return s
		}
	}
	if len(b.Detail) > 0 && string(b.Detail) != "null" {
		return string(b.Detail)
	}
	return ""
}

// retryAfter reads a Retry-After header, seconds or an HTTP date; 0 when absent or past.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// clean makes a provider's text fit for an error or a log: the keys taken out (a provider may
// echo the header it refused) and trimmed.
func (c *Client) clean(s, key string) string {
	for _, k := range []string{key, c.key} {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return trim(strings.TrimSpace(s))
}

// trim cuts s to maxMessage characters.
func trim(s string) string {
	if utf8.RuneCountInString(s) <= maxMessage {
		return s
	}
	n := 0
	for i := range s {
		if n == maxMessage {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrorKind tells a caller how to answer its own client.
type ErrorKind int

// Kinds of Error.
const (
	KeyRefused   ErrorKind = iota + 1 // 401/403: the key is wrong, revoked or out of credit
	InputRefused                      // 422: the model refused the input; Message says why
	RateLimited                       // 429: try again after RetryAfter (0 when not said)
	Failed                            // the model or provider failed, or answered something unusable
	Timeout                           // no video within Config.Timeout
)

func (k ErrorKind) String() string {
	switch k {
	case KeyRefused:
		return "key refused"
	case InputRefused:
		return "input refused"
	case RateLimited:
		return "rate limited"
	case Failed:
		return "failed"
	case Timeout:
		return "timed out"
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error is a failure the provider reported or caused. Kind tells the caller how to answer its
// own client.
type Error struct {
	Kind       ErrorKind // KeyRefused, InputRefused, RateLimited, Failed, Timeout
	Status     int       // the provider's HTTP status, 0 when none
	Message    string    // the provider's own message (detail / error), trimmed; never contains the key
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := "video generation " + e.Kind.String()
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf("; retry after %s", e.RetryAfter)
	}
	return s
}
