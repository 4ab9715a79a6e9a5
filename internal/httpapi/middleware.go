package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxLogger
	ctxPrincipal
)

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(ctxRequestID).(string)
	return id
}

// RequestID is the id of the request ctx belongs to ("" outside one), for handlers mounted
// beside the API (the web dashboard shows it on its error pages).
func RequestID(ctx context.Context) string { return requestIDFrom(ctx) }

// Logger is the logger of the request ctx belongs to, carrying its request id.
func Logger(ctx context.Context) *slog.Logger { return loggerFrom(ctx) }

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(ctxLogger).(*slog.Logger); ok {
		return l
	}
	return discardLogger
}

// validRequestID accepts a caller's X-Request-Id only when it is short and plain, so that it
// can go into logs and headers as it is.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom passes a copy on to the real writer's ReadFrom, which sends a file with sendfile
// (media served to pulling platforms); without it io.Copy would move the bytes through
// Write, 32 KiB at a time.
func (s *statusRecorder) ReadFrom(src io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(writerOnly{s.ResponseWriter}, src)
	}
	s.bytes += n
	return n, err
}

// writerOnly hides every method but Write, so that io.Copy cannot call back into ReadFrom.
type writerOnly struct{ io.Writer }

// Unwrap lets http.ResponseController reach the real writer (flushing, deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe is the outermost middleware: request id, a logger carrying it, recovery from
// panics, the access log line and the request metrics. The route label is the mux pattern,
// never the raw path, so that ids do not explode the metric's cardinality; the log line has
// the path but never the query string, where a misplaced credential could sit.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		log := s.log.With("request_id", id)
		ctx := context.WithValue(context.WithValue(r.Context(), ctxRequestID, id), ctxLogger, log)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}

		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic in handler", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, r, apierr.Internal(fmt.Errorf("panic: %v", v)))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			status := strconv.Itoa(rec.status)
			s.metrics.requests.WithLabelValues(route, r.Method, status).Inc()
			s.metrics.latency.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
			attrs := []any{"method", r.Method, "path", redactPath(r.URL.Path), "route", route, "status", rec.status,
				"bytes", rec.bytes, "duration_ms", float64(elapsed.Microseconds()) / 1000}
			if p, ok := principalFrom(r.Context()); ok {
				attrs = append(attrs, "account_id", p.AccountID)
			}
			level := slog.LevelInfo
			if rec.status >= 500 {
				level = slog.LevelError
			}
			log.Log(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// redactPath hides the secrets some platforms carry in their URL paths (Telegram's bot token,
// a Discord webhook's token), which the simulators receive like the platforms do: any path
// segment holding a sandbox token is logged as "REDACTED".
func redactPath(p string) string {
	if !strings.Contains(p, "sbx1.") && !strings.Contains(p, "sbx2.") {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.Contains(s, "sbx1.") || strings.Contains(s, "sbx2.") {
			segs[i] = "REDACTED"
		}
	}
	return strings.Join(segs, "/")
}
