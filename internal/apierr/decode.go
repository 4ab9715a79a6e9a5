package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
)

// DecodeJSON decodes one JSON value from r into dst strictly: unknown fields, trailing data,
// a member given twice and text that is not UTF-8 are refused (CheckJSON). Every failure is
// an error a client can act on, naming the field where there is one; an *http.MaxBytesError
// from r is returned as it is, for the caller's 413. r is read whole before decoding (the
// decoder would buffer the whole value anyway), so the caller bounds it.
func DecodeJSON(r io.Reader, dst any) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return jsonError("", err)
	}
	if err := CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError("", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body must hold a single JSON object")
	}
	return nil
}

// DecodeObject decodes b, the JSON value of field in a larger request, into dst strictly, as
// DecodeJSON does, naming its own fields field.name in errors. A type calls it from its
// UnmarshalJSON: encoding/json says which field was unknown but not in which object.
func DecodeObject(field string, b []byte, dst any) error {
	if err := checkJSON(field, b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(field, err)
	}
	return nil
}

// jsonError turns a decoding error of the object at path prefix ("" for the body) into an
// error a client can act on.
func jsonError(prefix string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	var own *Error
	switch {
	case errors.As(err, &own):
		return own // from a nested DecodeObject, already naming its field
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return New(http.StatusBadRequest, CodeInvalidJSON, "request body ends in the middle of a JSON value")
	case errors.As(err, &syn):
		return Newf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := fieldPath(prefix, typ.Field)
		if field == "" {
			return Newf(http.StatusBadRequest, CodeInvalidJSON, "request body must be a JSON object, got %s", typ.Value)
		}
		return Field(field, fmt.Sprintf("must be %s, got %s", jsonTypeName(typ.Type.Kind().String()), typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Field(fieldPath(prefix, name), "unknown field")
	default:
		return New(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON: "+err.Error())
	}
}

// fieldPath joins prefix and the dotted path encoding/json reports, leaving out the names of
// embedded Go structs it puts in (the API's field names are all lower case).
func fieldPath(prefix, path string) string {
	parts := []string{}
	if prefix != "" {
		parts = append(parts, prefix)
	}
	for _, p := range strings.Split(path, ".") {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
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
