package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

// maxJSONBody bounds every JSON request body; media arrive as multipart, never as JSON.
const maxJSONBody = 1 << 20

// writeJSON sends v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// errorBody is the contract's error body (docs/CONTRACT.md, Errors).
type errorBody struct {
	Success   bool        `json:"success"`
	Error     errorDetail `json:"error"`
	RequestID string      `json:"request_id"`
}

type errorDetail struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// writeError is the one place where errors become HTTP answers. Errors meant for clients carry
// their own status and code; store.ErrNotFound is a 404, store.ErrInsufficientCredits a 402;
// anything else is a 500 whose cause is logged, not sent.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := toAPIError(err)
	log := loggerFrom(r.Context())
	if ae.Status >= 500 {
		log.Error("request failed", "error", err, "code", ae.Code)
	} else if ae.Err != nil {
		log.Debug("request refused", "error", err)
	}
	body := map[string]any{
		"success":    false,
		"error":      errorDetail{Code: ae.Code, Message: ae.Message, Fields: ae.Fields},
		"request_id": requestIDFrom(r.Context()),
	}
	for k, v := range ae.Extra {
		body[k] = v
	}
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
	}
	if ae.Code == apierr.CodeRequestTimeout {
		// The rest of a body that came too slowly is not worth waiting for.
		w.Header().Set("Connection", "close")
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reelay"`)
	}
	writeJSON(w, ae.Status, body)
}

// ClientError is err as a client is told it: its status, code, message and fields (a 500
// hiding the cause for anything not meant for clients). The web dashboard renders errors from it.
func ClientError(err error) *apierr.Error { return toAPIError(err) }

func toAPIError(err error) *apierr.Error {
	var ae *apierr.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, store.ErrNotFound):
		return apierr.NotFound("resource").Wrap(err)
	case errors.Is(err, store.ErrInsufficientCredits):
		// A reservation refused for want of credits: whichever handler asked, the answer is
		// the contract's 402, and nothing was charged.
		msg := "this account does not have enough AI credits"
		var lacking *store.InsufficientCreditsError
		if errors.As(err, &lacking) {
			msg = fmt.Sprintf("this needs %d AI credits and the account has %d", lacking.Needed, lacking.Balance)
		}
		return apierr.New(http.StatusPaymentRequired, apierr.CodeInsufficientCredits, msg).Wrap(err)
	case errors.As(err, &mbe):
		return apierr.Newf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge,
			"request body is larger than %d bytes", mbe.Limit).Wrap(err)
	default:
		return apierr.Internal(err)
	}
}

// decodeJSON reads a JSON request body into dst strictly: the content type must be JSON, the
// body at most maxJSONBody bytes, one value, no unknown fields. Every failure is an error a
// client can act on, naming the field where there is one.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if err := requireContentType(r, "application/json"); err != nil {
		return err
	}
	return apierr.DecodeJSON(http.MaxBytesReader(w, r.Body, maxJSONBody), dst)
}

// decodeOptionalJSON is decodeJSON for operations whose body may be left out entirely.
func decodeOptionalJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	return decodeJSON(w, r, dst)
}

func requireContentType(r *http.Request, want string) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != want {
		return apierr.Newf(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
			"Content-Type must be %s, got %q", want, ct)
	}
	return nil
}

// pathID reads a UUID path parameter; anything else is a 400 naming the parameter.
func pathID(r *http.Request, name string) (string, error) {
	id := r.PathValue(name)
	if !store.ValidID(id) {
		return "", apierr.Field(name, "must be a UUID")
	}
	return id, nil
}

var discardLogger = slog.New(slog.DiscardHandler)
