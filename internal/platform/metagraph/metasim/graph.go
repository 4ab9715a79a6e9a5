package metasim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// What the Graph API simulators (Instagram, Threads, Facebook) share of Graph itself, beside
// meta.go: its parameters (query, form or JSON body), tokens, field selection and errors.

// The limits Graph applies alike on every platform.
const (
	// metaWindow is the rolling day of Graph's publishing and rate limits.
	metaWindow = 24 * time.Hour
	// metaMaxParamBytes bounds a request's parameters read from its body.
	metaMaxParamBytes = 1 << 20
)

var VersionSegment = regexp.MustCompile(`^v\d+\.\d+$`)

// Field is one field of a fields parameter, with its expansion (name{a,b}) when it has one.
type Field struct {
	Name     string
	Expanded bool
	Sub      []Field
}

// ParseFields parses Graph's fields syntax: names separated by commas, each optionally
// followed by {subfields}, nested. Modifiers (.limit(n), .as(x)) are not simulated.
func ParseFields(s string) ([]Field, *Error) {
	fs, rest, err := igParseFieldList(s, 0)
	if err == nil && rest != len(s) {
		err = fmt.Errorf("unexpected %q at character %d", s[rest], rest)
	}
	if err != nil {
		return nil, Err(http.StatusBadRequest, 100, 0, "(#100) Syntax error in fields: "+err.Error())
	}
	return fs, nil
}

func igParseFieldList(s string, i int) ([]Field, int, error) {
	var out []Field
	for {
		start := i
		for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			i++
		}
		if i == start {
			if i < len(s) {
				return nil, i, fmt.Errorf("expected a field name at character %d, found %q", i, s[i])
			}
			return nil, i, fmt.Errorf("expected a field name at the end")
		}
		f := Field{Name: s[start:i]}
		if i < len(s) && s[i] == '{' {
			sub, j, err := igParseFieldList(s, i+1)
			if err != nil {
				return nil, j, err
			}
			if j >= len(s) || s[j] != '}' {
				return nil, j, fmt.Errorf("expected } at character %d", j)
			}
			f.Expanded, f.Sub, i = true, sub, j+1
		}
		out = append(out, f)
		if i >= len(s) || s[i] != ',' {
			return out, i, nil
		}
		i++
	}
}

// SelectFlat keeps the requested fields of a node (all of def when fields is empty), always
// with its id; an unknown field is Graph's error 100.
func SelectFlat(all map[string]any, typ, fields, def string) (map[string]any, *Error) {
	out := map[string]any{}
	if id, ok := all["id"]; ok {
		out["id"] = id
	}
	if fields == "" {
		fields = def
	}
	for _, f := range strings.Split(fields, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, ok := all[f]
		if !ok {
			return nil, Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (%s)", f, typ))
		}
		if v != nil {
			out[f] = v
		}
	}
	return out, nil
}

func Prune(ts []time.Time, now time.Time) []time.Time {
	i := sort.Search(len(ts), func(i int) bool { return now.Sub(ts[i]) < metaWindow })
	return append([]time.Time(nil), ts[i:]...)
}

func Unsupported(method, id string) string {
	return fmt.Sprintf("Unsupported %s request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
		strings.ToLower(method), id)
}

func HTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func ParseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// igParams merges the query string with a form or JSON body, as Graph accepts parameters in
// either place.
func igParams(r *http.Request) (url.Values, error) {
	p := r.URL.Query()
	if r.Body == nil || r.Method == http.MethodGet {
		return p, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body := http.MaxBytesReader(nil, r.Body, metaMaxParamBytes)
	switch ct {
	case "application/x-www-form-urlencoded":
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		f, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, fmt.Errorf("malformed form body: %v", err)
		}
		for k, v := range f {
			p[k] = v
		}
	case "multipart/form-data":
		r.Body = body
		if err := r.ParseMultipartForm(metaMaxParamBytes); err != nil {
			return nil, fmt.Errorf("malformed multipart body: %v", err)
		}
		for k, v := range r.MultipartForm.Value {
			p[k] = v
		}
	case "application/json":
		var m map[string]any
		dec := json.NewDecoder(body)
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("malformed JSON body: %v", err)
		}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				p.Set(k, v)
			case json.Number:
				p.Set(k, v.String())
			case bool:
				p.Set(k, strconv.FormatBool(v))
			case nil:
			default:
				b, _ := json.Marshal(v)
				p.Set(k, string(b))
			}
		}
	}
	return p, nil
}

func Token(r *http.Request, p url.Values) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "OAuth") {
			return strings.TrimSpace(tok)
		}
	}
	return p.Get("access_token")
}

// Error is a Graph API error.
type Error struct {
	status      int
	Header      map[string]string `json:"-"`
	Message     string            `json:"message"`
	Type        string            `json:"type"`
	Code        int               `json:"code"`
	Subcode     int               `json:"error_subcode,omitempty"`
	IsTransient bool              `json:"is_transient"`
	UserTitle   string            `json:"error_user_title,omitempty"`
	UserMsg     string            `json:"error_user_msg,omitempty"`
	FBTraceID   string            `json:"fbtrace_id"`
}

func Err(status, code, subcode int, msg string) *Error {
	return &Error{status: status, Message: msg, Type: "OAuthException", Code: code, Subcode: subcode, FBTraceID: igTraceID()}
}

func (e *Error) User(title, msg string) *Error {
	e.UserTitle, e.UserMsg = title, msg
	return e
}

func Write(w http.ResponseWriter, e *Error) {
	for k, v := range e.Header {
		w.Header().Set(k, v)
	}
	if e.Code == 190 || e.Code == 104 {
		w.Header().Set("WWW-Authenticate", `OAuth "Facebook Platform" "invalid_token" "`+strings.ReplaceAll(e.Message, `"`, `'`)+`"`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]*Error{"error": e})
}

func igTraceID() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
