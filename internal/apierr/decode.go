package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DecodeJSON decodes one JSON value from r into dst strictly: unknown fields and trailing data
// are refused. Every failure is an error a client can act on, naming the field where there is
// one; an *http.MaxBytesError from r is returned as it is, for the caller's 413.
func DecodeJSON(r io.Reader, dst any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body must hold a single JSON object")
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
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body ends in the middle of a JSON value")
	case errors.As(err, &syn):
		return Newf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return Newf(http.StatusBadRequest, CodeInvalidJSON, "request body must be a JSON object, got %s", typ.Value)
		}
		return Field(typ.Field, fmt.Sprintf("must be %s, got %s", jsonTypeName(typ.Type.Kind().String()), typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Field(name, "unknown field")
	default:
		return New(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON: "+err.Error())
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
