// Package videogentest is a local stand-in for a hosted video model behind fal's queue API
// (https://docs.fal.ai/documentation/model-apis/inference/queue), as strict as fal documents
// it, so that the videogen client is tested against the protocol rather than against its own
// assumptions: a submit is refused without the exact key, with a body that is not JSON or an
// input the model would reject; a request moves IN_QUEUE → IN_PROGRESS → COMPLETED only as it
// is polled (or as time passes); its result is refused until it is complete; and the video it
// answers is a real MP4 of the requested aspect that the server itself serves. Options inject
// the provider's faults, and the calls it received are kept for tests to inspect.
package videogentest

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// Paths of the two model endpoints tests usually configure; any other model path works too.
const (
	TextPath  = "/fal-ai/kling-video/v2/master/text-to-video"
	ImagePath = "/fal-ai/kling-video/v2/master/image-to-video"
)

// DefaultKey is the key the server accepts unless WithKey says otherwise.
const DefaultKey = "sim-key-0123456789"

// Server is the simulator. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL, such as http://127.0.0.1:41234.
	URL string
	// Key is the only key accepted, sent as "Authorization: Key <Key>".
	Key string

	queuedPolls, runningPolls int
	queuedFor, runningFor     time.Duration
	now                       func() time.Time
	never, failSubmit, omit   bool
	failStatus                int
	failMessage               string
	limited                   map[int]time.Duration // call number → Retry-After
	foreign                   string

	mu       sync.Mutex
	calls    []Call
	requests map[string]*request
	order    []string // request ids in submit order, for queue positions
}

// Call is one call the server received on the queue API (video downloads are not counted).
type Call struct {
	Method string
	URL    string // path and query, as received
	Status int    // what the server answered
	// Input is a submit's body when it was a JSON object, nil otherwise.
	Input map[string]any
}

type state int

const (
	queued state = iota
	running
	completed
)

type request struct {
	id, app string // app is "owner/name", under which its status lives
	input   map[string]any
	state   state
	polls   int       // status answers given in the current state
	since   time.Time // when the current state began
	video   []byte    // made when the request completes
}

// Option changes the server's behaviour.
type Option func(*Server)

// WithKey sets the accepted key.
func WithKey(key string) Option { return func(s *Server) { s.Key = key } }

// WithPolls sets how many status answers a request spends IN_QUEUE and then IN_PROGRESS before
// it completes (default 1 and 1, so the third poll sees COMPLETED; 0 and 0 complete at once).
func WithPolls(queued, running int) Option {
	return func(s *Server) { s.queuedPolls, s.runningPolls = queued, running }
}

// WithDurations makes a request also stay at least this long IN_QUEUE and then IN_PROGRESS, by
// the server's clock. Both bounds apply: the polls and the time.
func WithDurations(queued, running time.Duration) Option {
	return func(s *Server) { s.queuedFor, s.runningFor = queued, running }
}

// WithClock sets the clock WithDurations is measured on (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// NeverComplete keeps every request IN_PROGRESS for ever.
func NeverComplete() Option { return func(s *Server) { s.never = true } }

// FailModel makes the model fail every request: its status turns COMPLETED carrying message as
// the error, and its result answers status with message as the detail (a validation list for
// 422, as fal's models give, a string otherwise).
func FailModel(status int, message string) Option {
	return func(s *Server) { s.failStatus, s.failMessage = status, message }
}

// RateLimit answers 429 with Retry-After (whole seconds, rounded up) to the call'th call (1 is
// the first) on the queue API. It can be given for several calls.
func RateLimit(call int, retryAfter time.Duration) Option {
	return func(s *Server) { s.limited[call] = retryAfter }
}

// FailSubmit answers 500 to every submit, after checking the key.
func FailSubmit() Option { return func(s *Server) { s.failSubmit = true } }

// ForeignURLs makes the submit answer's status_url, response_url and cancel_url point to base
// (such as http://attacker.example) instead of the server: a provider answer a client must not
// follow with its key.
func ForeignURLs(base string) Option { return func(s *Server) { s.foreign = base } }

// OmitURLs leaves status_url, response_url and cancel_url out of the submit answer, so that a
// client has to derive them from the model URL.
func OmitURLs() Option { return func(s *Server) { s.omit = true } }

// NewServer starts a simulator, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{Key: DefaultKey, queuedPolls: 1, runningPolls: 1, now: time.Now,
		limited: map[int]time.Duration{}, requests: map[string]*request{}}
	for _, o := range opts {
		o(s)
	}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// TextURL is the URL of the text-to-video model endpoint.
func (s *Server) TextURL() string { return s.URL + TextPath }

// ImageURL is the URL of the image-to-video model endpoint, which requires an image_url.
func (s *Server) ImageURL() string { return s.URL + ImagePath }

// Calls returns the calls received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Submits returns the submits received so far (refused ones included), in order.
func (s *Server) Submits() []Call {
	return s.filter(func(c Call) bool { return c.Method == http.MethodPost })
}

// StatusPolls counts the status calls received so far.
func (s *Server) StatusPolls() int {
	return len(s.filter(func(c Call) bool { return strings.HasSuffix(pathOf(c.URL), "/status") }))
}

func (s *Server) filter(keep func(Call) bool) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func pathOf(uri string) string {
	p, _, _ := strings.Cut(uri, "?")
	return p
}

// maxBody bounds a submit body, as a gateway would.
const maxBody = 1 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		s.serveVideo(w, r, strings.TrimSuffix(id, ".mp4"))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, URL: r.URL.RequestURI()})
	call := len(s.calls)
	status, answer := s.answer(w, r, body, call)
	s.calls[call-1].Status = status
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

// detail is fal's error body.
func detail(v any) map[string]any { return map[string]any{"detail": v} }

// fieldError is one entry of a validation detail list.
type fieldError struct {
	Loc  []string `json:"loc"`
	Msg  string   `json:"msg"`
	Type string   `json:"type"`
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, body []byte, call int) (int, any) {
	if r.Header.Get("Authorization") != "Key "+s.Key {
		return http.StatusUnauthorized, detail("No valid key: send 'Authorization: Key <your key>'")
	}
	if d, ok := s.limited[call]; ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
		return http.StatusTooManyRequests, detail("Rate limit exceeded, retry later")
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(segs) < 2 || segs[0] == "" {
		return http.StatusNotFound, detail("Not Found")
	}
	if len(segs) < 4 || segs[2] != "requests" {
		if r.Method != http.MethodPost {
			return http.StatusMethodNotAllowed, detail("Method Not Allowed")
		}
		return s.submit(r, segs, body, call)
	}
	rq := s.requests[segs[3]]
	if rq == nil || rq.app != segs[0]+"/"+segs[1] {
		return http.StatusNotFound, detail("Request not found")
	}
	switch {
	case len(segs) == 5 && segs[4] == "status" && r.Method == http.MethodGet:
		return s.status(rq)
	case len(segs) == 4 && r.Method == http.MethodGet:
		return s.result(rq)
	case len(segs) == 5 && segs[4] == "cancel" && r.Method == http.MethodPut:
		return s.cancel(rq)
	case len(segs) <= 5:
		return http.StatusMethodNotAllowed, detail("Method Not Allowed")
	}
	return http.StatusNotFound, detail("Not Found")
}

func (s *Server) submit(r *http.Request, segs []string, body []byte, call int) (int, any) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, detail("Content-Type must be application/json")
	}
	if len(body) > maxBody {
		return http.StatusRequestEntityTooLarge, detail("Request body too large")
	}
	if s.failSubmit {
		return http.StatusInternalServerError, detail("Internal Server Error")
	}
	var input map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&input); err != nil || input == nil || dec.More() {
		return http.StatusUnprocessableEntity, detail([]fieldError{{Loc: []string{"body"},
			Msg: "Input should be a valid JSON object", Type: "model_attributes_type"}})
	}
	s.calls[call-1].Input = input
	if errs := validate(input, strings.HasSuffix(r.URL.Path, "image-to-video")); len(errs) > 0 {
		return http.StatusUnprocessableEntity, detail(errs)
	}
	rq := &request{id: uuid.NewString(), app: segs[0] + "/" + segs[1], input: input, since: s.now()}
	s.requests[rq.id] = rq
	s.order = append(s.order, rq.id)
	return http.StatusOK, s.queued(rq, true)
}

// validate checks an input as the Kling models' schema does, listing every fault.
func validate(in map[string]any, image bool) []fieldError {
	var errs []fieldError
	bad := func(field, msg, typ string) {
		errs = append(errs, fieldError{Loc: []string{"body", field}, Msg: msg, Type: typ})
	}
	switch p, ok := in["prompt"]; {
	case !ok:
		bad("prompt", "Field required", "missing")
	case !isString(p):
		bad("prompt", "Input should be a valid string", "string_type")
	case p == "":
		bad("prompt", "String should have at least 1 character", "string_too_short")
	}
	if a, ok := in["aspect_ratio"]; ok && a != "16:9" && a != "9:16" && a != "1:1" {
		bad("aspect_ratio", "Input should be '16:9', '9:16' or '1:1'", "literal_error")
	}
	if d, ok := in["duration"]; ok && d != "5" && d != "10" {
		bad("duration", "Input should be '5' or '10'", "literal_error")
	}
	switch u, ok := in["image_url"]; {
	case !ok && image:
		bad("image_url", "Field required", "missing")
	case ok && !isHTTPURL(u):
		bad("image_url", "Input should be a valid URL with an http or https scheme and a host", "url_parsing")
	}
	return errs
}

func isString(v any) bool { _, ok := v.(string); return ok }

func isHTTPURL(v any) bool {
	s, _ := v.(string)
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// urls are a request's status, result and cancel URLs, on the foreign base when asked.
func (s *Server) urls(rq *request) (status, result, cancel string) {
	base := s.URL
	if s.foreign != "" {
		base = s.foreign
	}
	result = base + "/" + rq.app + "/requests/" + rq.id
	return result + "/status", result, result + "/cancel"
}

// queued is the answer for a request IN_QUEUE: a submit's answer, or a status answer.
func (s *Server) queued(rq *request, submit bool) map[string]any {
	pos := 0
	for _, id := range s.order {
		if id == rq.id {
			break
		}
		if o := s.requests[id]; o != nil && o.state == queued {
			pos++
		}
	}
	a := map[string]any{"status": "IN_QUEUE", "queue_position": pos}
	if submit {
		a["request_id"] = rq.id
	}
	if !s.omit {
		a["status_url"], a["response_url"], a["cancel_url"] = s.urls(rq)
	}
	return a
}

// advance moves rq on as far as its polls and the clock allow.
func (s *Server) advance(rq *request) {
	now := s.now()
	if rq.state == queued && rq.polls >= s.queuedPolls && now.Sub(rq.since) >= s.queuedFor {
		rq.state, rq.polls, rq.since = running, 0, now
	}
	if rq.state == running && !s.never && rq.polls >= s.runningPolls && now.Sub(rq.since) >= s.runningFor {
		rq.state, rq.polls, rq.since = completed, 0, now
	}
}

func (s *Server) status(rq *request) (int, any) {
	s.advance(rq)
	rq.polls++
	var a map[string]any
	switch rq.state {
	case queued:
		return http.StatusAccepted, s.queued(rq, false)
	case running:
		a = map[string]any{"status": "IN_PROGRESS", "logs": nil}
	default:
		a = map[string]any{"status": "COMPLETED", "logs": nil, "metrics": map[string]any{"inference_time": 1.5}}
		if s.failStatus != 0 {
			a["error"], a["error_type"] = s.failMessage, "model_error"
		}
	}
	if !s.omit {
		a["status_url"], a["response_url"], a["cancel_url"] = s.urls(rq)
	}
	if rq.state == completed {
		return http.StatusOK, a
	}
	return http.StatusAccepted, a
}

func (s *Server) result(rq *request) (int, any) {
	s.advance(rq)
	switch {
	case rq.state != completed:
		return http.StatusBadRequest, detail("Request is still in progress")
	case s.failStatus == http.StatusUnprocessableEntity:
		return s.failStatus, detail([]fieldError{{Loc: []string{"body"}, Msg: s.failMessage, Type: "value_error"}})
	case s.failStatus != 0:
		return s.failStatus, detail(s.failMessage)
	}
	if rq.video == nil {
		w, h := dimensions(rq.input["aspect_ratio"])
		d := 5 * time.Second
		if rq.input["duration"] == "10" {
			d = 10 * time.Second
		}
		var buf bytes.Buffer
		if err := mediatest.WriteMP4(&buf, mediatest.Options{Width: w, Height: h, Duration: d}); err != nil {
			return http.StatusInternalServerError, detail(err.Error())
		}
		rq.video = buf.Bytes()
	}
	return http.StatusOK, map[string]any{
		"video": map[string]any{"url": s.URL + "/files/" + rq.id + ".mp4", "content_type": "video/mp4",
			"file_name": "output.mp4", "file_size": len(rq.video)},
		"seed": 42,
	}
}

// cancel removes a queued request (fal forgets it) and only signals a running one, which this
// model ignores.
func (s *Server) cancel(rq *request) (int, any) {
	s.advance(rq)
	switch rq.state {
	case completed:
		return http.StatusBadRequest, map[string]any{"status": "ALREADY_COMPLETED"}
	case queued:
		delete(s.requests, rq.id)
	}
	return http.StatusAccepted, map[string]any{"status": "CANCELLATION_REQUESTED"}
}

// dimensions are the picture size of an aspect ratio (Kling's default is 16:9).
func dimensions(aspect any) (w, h int) {
	switch aspect {
	case "9:16":
		return 1080, 1920
	case "1:1":
		return 1080, 1080
	}
	return 1920, 1080
}

// serveVideo serves a completed request's MP4 without a key, as fal's CDN does.
func (s *Server) serveVideo(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	var video []byte
	if rq := s.requests[id]; rq != nil {
		video = rq.video
	}
	s.mu.Unlock()
	if video == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	http.ServeContent(w, r, "output.mp4", time.Time{}, bytes.NewReader(video))
}
