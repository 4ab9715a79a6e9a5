package apierr

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// What encoding/json would take silently (the last of two members, U+FFFD in place of bytes
// that are not UTF-8 or of half a surrogate pair) is a 400 naming the member.
func TestDecodeJSONRefusesAmbiguousInput(t *testing.T) {
	t.Parallel()
	type inner struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags"`
	}
	type body struct {
		Caption string            `json:"caption"`
		YouTube *inner            `json:"youtube"`
		Scenes  []inner           `json:"scenes"`
		Creds   map[string]string `json:"credentials"`
	}
	cases := []struct {
		name, body, field, says string
	}{
		{"duplicate at the top", `{"caption":"a","caption":"b"}`, "caption", "given twice"},
		{"duplicate differing in case", `{"caption":"a","Caption":"b"}`, "Caption", "regardless of case"},
		{"duplicate in a nested object", `{"youtube":{"title":"a","tags":[],"title":"b"}}`, "youtube.title", "given twice"},
		{"duplicate in an array element", `{"scenes":[{"title":"a"},{"title":"a","title":"b"}]}`, "scenes[1].title", "given twice"},
		{"duplicate spelled with an escape", `{"capti\u006fn":"a","caption":"b"}`, "caption", "given twice"},
		{"many members, the last a duplicate", `{"youtube":{"title":"a","tags":[]},"credentials":{"a":"","b":"","c":"","d":"","e":"","f":"","g":"","h":"","i":"","j":"","k":"","l":"","m":"","n":"","o":"","p":"","q":"","r":"","s":"","t":"","U":"","u":""}}`, "credentials.u", "regardless of case"},
		{"duplicate in a map", `{"credentials":{"token":"a","token":"b"}}`, "credentials.token", "given twice"},
		{"invalid UTF-8 in a value", "{\"caption\":\"caf\xe9\"}", "caption", "not valid UTF-8 (byte 0xE9)"},
		{"invalid UTF-8 in an array element", "{\"youtube\":{\"tags\":[\"ok\",\"\xff\"]}}", "youtube.tags[1]", "not valid UTF-8"},
		{"invalid UTF-8 in a member name", "{\"youtube\":{\"ti\xfftle\":\"a\"}}", "youtube", "member name that is not valid UTF-8"},
		{"truncated sequence", "{\"caption\":\"\xe2\x82\"}", "caption", "not valid UTF-8"},
		{"lone high surrogate", `{"caption":"a\ud83d b"}`, "caption", `\uD83D, the first half`},
		{"lone high surrogate at the end", `{"caption":"\ud83d"}`, "caption", `\uD83D, the first half`},
		{"lone low surrogate", `{"scenes":[{"title":"\udc00"}]}`, "scenes[0].title", `\uDC00, the second half`},
		{"high surrogate before a non-surrogate", `{"caption":"\ud83d\u0041"}`, "caption", "first half"},
	}
	for _, c := range cases {
		var dst body
		err := DecodeJSON(strings.NewReader(c.body), &dst)
		var ae *Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Fields[c.field], c.says) {
			t.Errorf("%s: %v (fields %v)", c.name, err, fieldsOf(ae))
		}
	}

	// What is fine stays fine: a pair of surrogates, an escaped backslash before "u", the
	// same name in different objects, non-ASCII text.
	ok := []string{
		`{"caption":"\ud83d\ude00"}`,
		`{"caption":"\\ud800"}`,
		`{"caption":"x","youtube":{"title":"x"},"scenes":[{"title":"a"},{"title":"b"}]}`,
		`{"caption":"café ☕ 😀 עברית"}`,
		`{"credentials":{"a":"1","b":"2"}}`,
	}
	for _, b := range ok {
		var dst body
		if err := DecodeJSON(strings.NewReader(b), &dst); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}

	// The objects a type decodes itself (DecodeObject) are checked too, under their field.
	var in inner
	err := DecodeObject("tiktok", []byte(`{"title":"a","title":"b"}`), &in)
	var ae *Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Fields["tiktok.title"], "given twice") {
		t.Errorf("DecodeObject: %v", err)
	}
}

func fieldsOf(e *Error) map[string]string {
	if e == nil {
		return nil
	}
	return e.Fields
}

// FuzzCheckJSON: no input makes the scanner panic or read past the body, and a refusal always
// names a field.
func FuzzCheckJSON(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":[true,null,{"c":"\u00e9"}],"A":2}`, `[1, 2 ,"x"]`, `"\ud800"`, "{\"k\":\"\xff\"}",
		`{"a":{"b":{"c":[{"d":1,"d":2}]}}}`, ` 12.5e3 `, `{}`, `[]`, `{"\u0061":1,"a":2}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckJSON(b)
		var ae *Error
		if err != nil && (!errors.As(err, &ae) || len(ae.Fields) != 1) {
			t.Fatalf("CheckJSON(%q) = %v", b, err)
		}
	})
}
