package apierr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckJSON refuses what encoding/json takes without a word but a client cannot have meant: a
// member name given twice in one object (the decoder keeps the last; for a struct field it
// also matches names regardless of case, so "Caption" after "caption" replaces it too), and
// text that is not UTF-8, or a \u escape of half a surrogate pair, both of which the decoder
// replaces with U+FFFD. Each is a 400 naming the member by its path (youtube.title,
// scenes[2].prompt). A body that is not well-formed JSON passes: the decoder that follows
// says what is wrong with it, as it always has.
func CheckJSON(b []byte) error { return checkJSON("", b) }

// checkJSON is CheckJSON for the value at path prefix of a larger request. It scans the raw
// bytes itself, once well-formedness is known (json.Valid): the decoder's token interface
// would cost an allocation a token.
func checkJSON(prefix string, b []byte) error {
	if !json.Valid(b) {
		return nil
	}
	s := scanner{b: b, prefix: prefix}
	return s.value()
}

// scanner walks a well-formed JSON text.
type scanner struct {
	b      []byte
	i      int
	prefix string
	// names holds the member names of the objects being walked, innermost last: a stack
	// shared by all of them, so that small objects cost no allocation.
	names [][]byte
	// at is the path from the root to the value being walked.
	at []step
}

// step is one member name or array index on the path from the root to a value.
type step struct {
	name   []byte
	index  int
	inList bool
}

// path is the field path of the value being walked, as errors name fields.
func (s *scanner) path() string {
	out := s.prefix
	for _, st := range s.at {
		switch {
		case st.inList:
			out += "[" + strconv.Itoa(st.index) + "]"
		case out == "":
			out = string(st.name)
		default:
			out += "." + string(st.name)
		}
	}
	return orBody(out)
}

// enter walks the value at st, one step below the current one.
func (s *scanner) enter(st step) error {
	s.at = append(s.at, st)
	err := s.value()
	s.at = s.at[:len(s.at)-1]
	return err
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str skips the string starting at s.i and returns its raw text, quotes included.
func (s *scanner) str() []byte {
	start := s.i
	s.i++
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
	return s.b[start:s.i]
}

func (s *scanner) value() error {
	s.space()
	switch s.b[s.i] {
	case '{':
		return s.object()
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.space()
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if s.b[s.i] == ',' {
				s.i++
			}
			if err := s.enter(step{index: n, inList: true}); err != nil {
				return err
			}
		}
	case '"':
		if problem := textProblem(s.str()); problem != "" {
			return Field(s.path(), problem)
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[s.i])) {
			s.i++
		}
	}
	return nil
}

// manyNames is the size from which an object's names are looked up in a map rather than by
// comparing each with all before it.
const manyNames = 16

func (s *scanner) object() error {
	s.i++
	base := len(s.names)
	defer func() { s.names = s.names[:base] }()
	var folded map[string][]byte
	for {
		s.space()
		switch s.b[s.i] {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			s.space()
		}
		raw := s.str()
		if problem := textProblem(raw); problem != "" {
			return Field(s.path(), "has a member name that "+problem)
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var decoded string
			_ = json.Unmarshal(raw, &decoded) // well-formed, and checked above
			name = []byte(decoded)
		}
		var first []byte
		if folded != nil {
			first = folded[foldName(name)]
		} else {
			for _, seen := range s.names[base:] {
				if bytes.EqualFold(seen, name) {
					first = seen
					break
				}
			}
		}
		if first != nil {
			s.at = append(s.at, step{name: name})
			path := s.path()
			if bytes.Equal(first, name) {
				return Field(path, "is given twice; each member of an object may appear once")
			}
			return Field(path, fmt.Sprintf("is given twice, as %q and %q (names are matched regardless of case); each member of an object may appear once", first, name))
		}
		s.names = append(s.names, name)
		switch {
		case folded != nil:
			folded[foldName(name)] = name
		case len(s.names)-base > manyNames:
			folded = make(map[string][]byte, 2*manyNames)
			for _, seen := range s.names[base:] {
				folded[foldName(seen)] = seen
			}
		}
		s.space()
		s.i++ // the colon
		if err := s.enter(step{name: name}); err != nil {
			return err
		}
	}
}

// foldName is name in a form equal for names that differ only in case, as bytes.EqualFold
// compares them.
func foldName(name []byte) string {
	return string(bytes.Map(func(r rune) rune {
		// The smallest rune of r's case-folding orbit stands for all of them.
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < least {
				least = f
			}
		}
		return least
	}, name))
}

// textProblem says what is wrong with the raw JSON text of one string token (with whatever
// separators precede it): "" when it is UTF-8 and its escapes stand for characters.
func textProblem(raw []byte) string {
	if !utf8.Valid(raw) {
		for i := 0; i < len(raw); {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Sprintf("is not valid UTF-8 (byte 0x%02X); text must be sent as UTF-8", raw[i])
			}
			i += n
		}
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		i++ // the escaped character; an escaped backslash is skipped whole
		if raw[i] != 'u' || i+4 >= len(raw) {
			continue
		}
		u, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
		if err != nil {
			continue
		}
		i += 4
		switch {
		case u >= 0xDC00 && u <= 0xDFFF:
			return fmt.Sprintf(`holds \u%04X, the second half of a UTF-16 surrogate pair without its first, which stands for no character`, u)
		case u >= 0xD800 && u <= 0xDBFF:
			next := raw[i+1:]
			if len(next) >= 6 && next[0] == '\\' && next[1] == 'u' {
				if lo, err := strconv.ParseUint(string(next[2:6]), 16, 16); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return fmt.Sprintf(`holds \u%04X, the first half of a UTF-16 surrogate pair without its second, which stands for no character`, u)
		}
	}
	return ""
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
