package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

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

// errorBody is the contract's error body (DESIGN.md section 4).
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
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reelay"`)
	}
	writeJSON(w, ae.Status, body)
}

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
	return decodeStrict(http.MaxBytesReader(w, r.Body, maxJSONBody), dst)
}

// decodeStrict decodes one JSON value from r, refusing unknown fields and trailing data.
func decodeStrict(r io.Reader, dst any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body must hold a single JSON object")
	}
	return nil
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

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body ends in the middle of a JSON value")
	case errors.As(err, &syn):
		return apierr.Newf(http.StatusBadRequest, apierr.CodeInvalidJSON, "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return apierr.Newf(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body must be a JSON object, got %s", typ.Value)
		}
		return apierr.Field(typ.Field, fmt.Sprintf("must be %s, got %s", jsonTypeName(typ.Type.Kind().String()), typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apierr.Field(name, "unknown field")
	default:
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "malformed JSON: "+err.Error())
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	default:
		return "of another type"
	}
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
