package ai

import (
	"hash/fnv"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
)

// ellipsis marks text cut inside a sentence.
const ellipsis = "…"

// listMarker matches the bullet or number that starts a list item, which scripts often are.
var listMarker = regexp.MustCompile(`^\s*(?:[-*•·▪►]+|\d{1,2}[.)])\s+`)

// abbreviations end in a period without ending a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true, "ms": true,
	"dr": true, "st": true, "no": true, "approx": true, "min": true, "max": true, "jr": true, "sr": true,
}

// sentences splits a script into sentences: at . ! ? … (with the quotes and brackets that
// close them) followed by a space, at CJK full stops, and at line ends, so that a list of
// lines reads as a list of sentences. List markers are dropped and spaces collapsed.
func sentences(text string) []string {
	text = validUTF8(strings.ReplaceAll(text, "\r\n", "\n"))
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = listMarker.ReplaceAllString(line, "")
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		start := 0
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			r := rs[i]
			cjk := r == '。' || r == '！' || r == '？'
			if !cjk && r != '.' && r != '!' && r != '?' && r != '…' {
				continue
			}
			// Take the whole run of terminators and closers ("?!", ".”", "...").
			j := i + 1
			for j < len(rs) && strings.ContainsRune(".!?…。！？\"'”’)]»", rs[j]) {
				j++
			}
			atEnd := j == len(rs)
			if !cjk && !atEnd && !unicode.IsSpace(rs[j]) {
				i = j - 1 // 3.5, example.com, "e.g.x"
				continue
			}
			if r == '.' && j == i+1 && isAbbreviation(rs[start:i]) {
				continue
			}
			if s := strings.TrimSpace(string(rs[start:j])); s != "" {
				out = append(out, s)
			}
			start = j
			i = j - 1
		}
		if s := strings.TrimSpace(string(rs[start:])); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// isAbbreviation reports whether the word before a period (the end of before) is an
// abbreviation or an initial.
func isAbbreviation(before []rune) bool {
	s := string(before)
	if i := strings.LastIndexFunc(s, unicode.IsSpace); i >= 0 {
		s = s[i+1:]
	}
	if utf8.RuneCountInString(s) == 1 && unicode.IsUpper([]rune(s)[0]) && s != "I" && s != "A" {
		return true
	}
	return abbreviations[strings.ToLower(strings.TrimLeft(s, "(\"'“"))]
}

// powerWords make a sentence a stronger hook: promises, warnings, extremes and the words of
// curiosity.
var powerWords = map[string]bool{
	"best": true, "worst": true, "never": true, "always": true, "secret": true, "secrets": true,
	"mistake": true, "mistakes": true, "stop": true, "only": true, "first": true, "free": true,
	"most": true, "nobody": true, "everyone": true, "why": true, "how": true, "instantly": true,
	"hack": true, "truth": true, "actually": true, "surprising": true, "shocking": true,
	"easy": true, "simple": true, "fast": true, "proven": true, "exactly": true, "finally": true,
	"ultimate": true, "biggest": true, "fastest": true, "easiest": true, "cheapest": true,
}

// notSuperlatives end in -est without being superlatives.
var notSuperlatives = map[string]bool{
	"test": true, "rest": true, "interest": true, "honest": true, "forest": true, "request": true,
	"suggest": true, "invest": true, "contest": true, "protest": true, "harvest": true, "modest": true,
	"guest": true, "chest": true, "quest": true, "west": true, "nest": true, "digest": true, "manifest": true,
}

// hookScore rates how well a sentence opens a short video: a question or a number stops the
// scroll, extremes and promises pull, "you" speaks to the viewer, and a hook is short enough to
// read in two seconds but long enough to say something. The script's first sentence, where
// writers usually put their point, gets a small edge.
func hookScore(s string, index int) int {
	words := strings.Fields(s)
	score := 0
	if strings.ContainsAny(s, "?？") {
		score += 3
	}
	if strings.ContainsFunc(s, unicode.IsDigit) {
		score += 2
	}
	power, you := 0, false
	for _, w := range words {
		w = strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' }))
		switch {
		case powerWords[w]:
			power++
		case len(w) >= 6 && strings.HasSuffix(w, "est") && !notSuperlatives[w]:
			power++
		case w == "you" || w == "your" || w == "you're" || w == "you’re" || w == "yourself":
			you = true
		}
	}
	score += min(power, 3)
	if you {
		score++
	}
	if strings.ContainsAny(s, "!！") {
		score++
	}
	switch n := len(words); {
	case n < 4:
		score -= 2
	case n <= 18:
		score += 2
	case n > 28:
		score -= 2
	}
	if index == 0 {
		score++
	}
	return score
}

// strongest returns the index of the best hook among ss (the earliest on a tie).
func strongest(ss []string) int {
	best, bestScore := 0, 0
	for i, s := range ss {
		if sc := hookScore(s, i); i == 0 || sc > bestScore {
			best, bestScore = i, sc
		}
	}
	return best
}

// stopWords are the English words too common to say what a script is about, with
// contractions written without their apostrophe (as words() leaves them).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are aren as at be
		because been before being below between both but by can cannot could couldn did didn do does doesn
		doing don down during each even ever every few for from further get gets getting got had hadn has hasn
		have haven having he her here hers herself him himself his how however i if in into is isn it its
		itself just let lets like make makes made me more most much must my myself need needs no nor not now of
		off on once one only or other ought our ours ourselves out over own really same say says she should
		shouldn so some such than that thats the their theirs them themselves then there theres these they
		thing things this those through to too under until up upon us use used using very via want was wasn
		way we well were weren what whats when where which while who whom why will with within without won
		would wouldn yes yet you your yours yourself yourselves youre youve youll im ive id ill hes shes
		weve were theyre theyve dont cant wont isnt arent doesnt didnt wasnt just still ok okay
		go going gonna know see look new thats here today time day really actually maybe lot lots
		good great bad better worse best worst wrong right big bigger small smaller little many long short
		high low old young first last next real sure whole half easy easier hard harder keep keeps kept take
		takes took think thinks thought come comes came give gives gave try tries tried work works put call
		find finds found tell tells told people someone something anything everything nothing everyone
		result results part kind number two three four five six seven eight nine ten hundred thousand`) {
		m[w] = true
	}
	return m
}()

// determiners come before nouns, which make better hashtags than adjectives and verbs.
var determiners = map[string]bool{
	"the": true, "a": true, "an": true, "your": true, "my": true, "our": true, "their": true,
	"this": true, "that": true, "these": true, "those": true, "his": true, "her": true, "its": true,
}

// token is a word of the script as hashtags need it.
type token struct {
	word     string // as written, apostrophes removed
	lower    string
	sentence int
	stop     bool
}

// words tokenizes a script: runs of letters, digits and marks; apostrophes inside a word are
// dropped ("don't" → "dont") and a possessive 's removed.
func words(ss []string) []token {
	var out []token
	for si, s := range ss {
		var b strings.Builder
		flush := func() {
			w := b.String()
			b.Reset()
			if w == "" {
				return
			}
			lw := strings.ToLower(w)
			if strings.HasSuffix(lw, "'s") || strings.HasSuffix(lw, "’s") {
				w = strings.TrimRight(w[:len(w)-1], "'’")
				lw = strings.ToLower(w)
			}
			clean := strings.NewReplacer("'", "", "’", "").Replace(w)
			lc := strings.ToLower(clean)
			out = append(out, token{word: clean, lower: lc, sentence: si,
				stop: stopWords[lc] || utf8.RuneCountInString(lc) < 3 || !strings.ContainsFunc(lc, unicode.IsLetter)})
		}
		for _, r := range s {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
				b.WriteRune(r)
			case (r == '\'' || r == '’') && b.Len() > 0:
				b.WriteRune(r)
			default:
				flush()
			}
		}
		flush()
	}
	return out
}

// keyword is a candidate hashtag: one word, or two that recur together.
type keyword struct {
	parts []string // as written, or in lower case unless a name
	named bool     // a name: written capitalised inside a sentence, or camel-cased ("iPhone")
	score int
	first int
}

// keywords returns the script's salient words and recurring pairs, best first: frequent words
// score highest, names (capitalised inside a sentence) and longer words a little more, and a
// pair of words seen together twice or more beats either alone. Plural and singular count as
// one word.
func keywords(ss []string) []keyword {
	toks := words(ss)
	type stat struct {
		kw      *keyword
		count   int
		named   bool
		noun    bool // seen after a determiner ("the grind", "your wrong grind"): likely a thing
		display string
	}
	singles := map[string]*stat{}
	var order []string
	for i, t := range toks {
		if t.stop {
			continue
		}
		key := t.lower
		st := singles[key]
		if st == nil {
			st = &stat{kw: &keyword{first: i}, display: t.lower}
			singles[key] = st
			order = append(order, key)
		}
		st.count++
		for back := 1; back <= 2 && i-back >= 0 && toks[i-back].sentence == t.sentence; back++ {
			if determiners[toks[i-back].lower] {
				st.noun = true
			}
		}
		sentenceStart := i == 0 || toks[i-1].sentence != t.sentence
		rs := []rune(t.word)
		if (!sentenceStart && unicode.IsUpper(rs[0])) || hasUpper(rs[1:]) {
			st.named = true
			st.display = t.word
		}
	}
	// Fold plurals into their singular ("beans" into "bean") when both are used.
	for _, key := range order {
		st := singles[key]
		if st == nil || !strings.HasSuffix(key, "s") {
			continue
		}
		if base := singles[strings.TrimSuffix(key, "s")]; base != nil && base != st {
			base.count += st.count
			base.named = base.named || st.named
			delete(singles, key)
		}
	}
	var out []keyword
	for _, key := range order {
		st := singles[key]
		if st == nil {
			continue
		}
		score := st.count * 3
		if st.named {
			score += 2
		}
		if st.noun {
			score++
		}
		score += min(utf8.RuneCountInString(key), 12) / 4
		st.kw.parts = []string{st.display}
		st.kw.named = st.named
		st.kw.score = score
		out = append(out, *st.kw)
	}
	// Pairs of adjacent salient words in the same sentence, kept when they recur.
	pairs := map[string]*keyword{}
	pairCount := map[string]int{}
	var pairOrder []string
	for i := 1; i < len(toks); i++ {
		a, b := toks[i-1], toks[i]
		if a.stop || b.stop || a.sentence != b.sentence {
			continue
		}
		key := a.lower + " " + b.lower
		if pairs[key] == nil {
			pairs[key] = &keyword{parts: []string{a.word, b.word}, first: i - 1}
			pairOrder = append(pairOrder, key)
		}
		pairCount[key]++
	}
	for _, key := range pairOrder {
		if n := pairCount[key]; n >= 2 {
			kw := *pairs[key]
			kw.score = n*4 + 2
			kw.named = true // written as CamelCase
			out = append(out, kw)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].first < out[j].first
	})
	return out
}

// maxHashtagRunes keeps tags readable; longer ones are skipped.
const maxHashtagRunes = 30

// hashtag writes a keyword as a tag: one word in lower case unless it is a name ("#Rome",
// "#iPhone", "#NASA"); several words, or every word in the professional tone, in CamelCase
// ("#ColdBrew"), which screen readers can read.
func hashtag(kw keyword, camel bool) string {
	var b strings.Builder
	b.WriteByte('#')
	for _, p := range kw.parts {
		rs := []rune(p)
		switch {
		case hasUpper(rs[1:]):
			b.WriteString(p) // iPhone, NASA: as written
		case len(kw.parts) > 1 || camel:
			b.WriteRune(unicode.ToUpper(rs[0]))
			b.WriteString(strings.ToLower(string(rs[1:])))
		case kw.named:
			b.WriteString(p)
		default:
			b.WriteString(strings.ToLower(p))
		}
	}
	return b.String()
}

func hasUpper(rs []rune) bool {
	for _, r := range rs {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// ValidHashtag reports whether tag is a well-formed hashtag: '#' then letters, digits, marks
// and underscores, at least one letter, at most 30 characters after the '#'.
func ValidHashtag(tag string) bool {
	body, ok := strings.CutPrefix(tag, "#")
	if !ok || body == "" || utf8.RuneCountInString(body) > maxHashtagRunes {
		return false
	}
	letter := false
	for _, r := range body {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r):
		default:
			return false
		}
	}
	return letter
}

// normalizeHashtag turns what a model wrote ("cold brew", "#ColdBrew!", "Coffee") into a
// well-formed tag, or "" when nothing usable is left.
func normalizeHashtag(s string) string {
	var b strings.Builder
	b.WriteByte('#')
	s = strings.TrimSpace(s)
	// Several words become CamelCase, the first one included.
	upperNext := strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '-' })
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r):
			if upperNext {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			upperNext = false
		case unicode.IsSpace(r) || r == '-':
			upperNext = b.Len() > 1
		}
	}
	if t := b.String(); ValidHashtag(t) {
		return t
	}
	return ""
}

// shorten returns s when it fits lims; otherwise s cut to fit with an ellipsis, at a word
// boundary when one is near, else between grapheme clusters (a script of emoji without
// spaces); "" when not even the ellipsis fits.
func shorten(s string, lims []platform.TextLimit) string {
	if fits(s, lims) {
		return s
	}
	room := make([]platform.TextLimit, 0, len(lims))
	for _, l := range lims {
		if l.Max <= 0 {
			room = append(room, l)
			continue
		}
		m := l.Max - l.Count(ellipsis)
		if m <= 0 {
			return ""
		}
		room = append(room, platform.TextLimit{Max: m, Unit: l.Unit})
	}
	cut := truncate(s, room)
	if rest := s[len(cut):]; rest != "" && !startsWithSpace(rest) {
		// Back off to the last space, unless that throws away most of what fits.
		if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > len(cut)/3 {
			cut = cut[:i]
		}
	}
	cut = strings.TrimRightFunc(cut, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:-–—([{\"'“‘", r)
	})
	if cut == "" {
		return ""
	}
	return cut + ellipsis
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// trimAtSentences returns the longest run of whole sentences from the start of text that fits
// lims, keeping a closing line of hashtags when there is room for it; a text whose first
// sentence alone is too long is shortened with an ellipsis.
func trimAtSentences(text string, lims []platform.TextLimit) string {
	if fits(text, lims) {
		return text
	}
	body, tags := splitTrailingTags(text)
	var cuts []int // byte offsets just after each sentence end or line end
	rs := body
	for i, r := range rs {
		switch r {
		case '.', '!', '?', '…', '。', '！', '？':
			next := i + utf8.RuneLen(r)
			if next == len(rs) || startsWithSpace(rs[next:]) || r == '。' || r == '！' || r == '？' {
				cuts = append(cuts, next)
			}
		case '\n':
			cuts = append(cuts, i)
		}
	}
	for _, withTags := range []bool{true, false} {
		if withTags && tags == "" {
			continue
		}
		for i := len(cuts) - 1; i >= 0; i-- {
			cand := strings.TrimRightFunc(body[:cuts[i]], unicode.IsSpace)
			if cand == "" {
				continue
			}
			if withTags {
				cand += "\n\n" + tags
			}
			if fits(cand, lims) {
				return cand
			}
		}
	}
	return shorten(strings.TrimSpace(body), lims)
}

// splitTrailingTags separates a last line made only of hashtags from the text before it.
func splitTrailingTags(text string) (body, tags string) {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	i := strings.LastIndex(text, "\n")
	last := text[i+1:]
	fs := strings.Fields(last)
	if i < 0 || len(fs) == 0 {
		return text, ""
	}
	for _, f := range fs {
		if !ValidHashtag(f) {
			return text, ""
		}
	}
	return strings.TrimRightFunc(text[:i], unicode.IsSpace), last
}

// variant picks one of n phrasings from the script itself, so that the same script always
// gets the same copy and different scripts do not all read alike.
func variant(seed string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(seed))
	return int(h.Sum32() % uint32(n))
}

// endsSentence reports whether s ends with sentence punctuation.
func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, "\"'”’)]»"))
	return strings.ContainsRune(".!?…。！？", r)
}

// asSentence gives a line without closing punctuation a period, so that lines run together
// into a paragraph still read as sentences; lines ending in an emoji are left alone.
func asSentence(s string) string {
	if endsSentence(s) {
		return s
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return s + "."
	}
	return s
}
