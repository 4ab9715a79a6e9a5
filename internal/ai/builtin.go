package ai

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// BuiltinName is the model an answer of the built-in engine names.
const BuiltinName = "reelay-builtin"

// Builtin is the deterministic engine: no model and no network, the same answer for the same
// request. It writes copy from the script's own sentences: the strongest one becomes the
// hook, the others the body (whole sentences, as many as the platform takes), the script's
// salient words the hashtags.
type Builtin struct{}

// Name names the engine in answers.
func (Builtin) Name() string { return BuiltinName }

// hookCap bounds the sentence a hook is made from: an opening line is read in a glance.
var hookCap = []platform.TextLimit{{Max: 140, Unit: platform.UnitCharacters}}

// script is a prompt taken apart once for every platform.
type script struct {
	prompt    string
	sentences []string
	hook      int // index of the strongest sentence
	keywords  []keyword
}

func parseScript(prompt string) (script, error) {
	ss := sentences(prompt)
	if len(ss) == 0 {
		return script{}, apierr.Field("prompt", "is required")
	}
	return script{prompt: prompt, sentences: ss, hook: strongest(ss), keywords: keywords(ss)}, nil
}

// body returns the sentences other than the hook, in the script's order.
func (s script) body() []string {
	out := make([]string, 0, len(s.sentences)-1)
	for i, x := range s.sentences {
		if i != s.hook {
			out = append(out, x)
		}
	}
	return out
}

// Adapt writes copy for each requested platform.
func (b Builtin) Adapt(ctx context.Context, req AdaptRequest) (Adapted, error) {
	sc, err := parseScript(req.Prompt)
	if err != nil {
		return nil, err
	}
	tone := req.Tone
	if tone == "" {
		tone = DefaultTone
	}
	out := Adapted{}
	for _, name := range req.Platforms {
		c, err := adaptFor(name, sc, tone, req.IncludeJEV)
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, nil
}

func adaptFor(name string, sc script, tone string, jev bool) (Copy, error) {
	tg, ok := targets[name]
	lim, known := LimitsOf(name)
	if !ok || !known {
		return Copy{}, apierr.Field("platforms", "unknown platform "+name)
	}
	clean := func(s string) string { return s }
	if name == platform.YouTube {
		// YouTube refuses < and > in titles and descriptions; the look-alike angle quotes keep "<3" readable.
		clean = strings.NewReplacer("<", "‹", ">", "›").Replace
	}
	seed := sc.prompt + "\x00" + tone
	hookSentence := clean(shorten(sc.sentences[sc.hook], hookCap))
	hook := decorateHook(tone, hookSentence, seed, tg.plain)
	body := sc.body()
	for i := range body {
		body[i] = clean(body[i])
	}
	cta := ""
	if !tg.plain {
		cta = callToAction(tone, tg, seed)
	}
	tags := hashtagsFor(name, tone, sc.keywords, tg.tags)

	compose := func(k int, withCTA bool, nTags int, hook string) string {
		parts := []string{hook}
		if k > 0 {
			parts = append(parts, formatBody(tone, body[:k]))
		}
		if withCTA && cta != "" {
			parts = append(parts, cta)
		}
		if nTags > 0 {
			parts = append(parts, strings.Join(tags[:nTags], " "))
		}
		return strings.Join(parts, "\n\n")
	}
	// What must be there first: the hook; then, room allowing, the call to action and the
	// hashtags, given up in that order.
	withCTA, nTags := cta != "", len(tags)
	for !fits(compose(0, withCTA, nTags, hook), lim.Text) {
		switch {
		case withCTA:
			withCTA = false
		case nTags > 0:
			nTags--
		default:
			hook = shorten(hook, lim.Text)
		}
	}
	// Then the body, whole sentences in order, up to the limit (or the platform's usual
	// length); the first sentence that does not fit ends it, since skipping to a shorter
	// later one would change what the script says.
	k := 0
	soft := platform.TextLimit{Max: tg.soft, Unit: lim.Text[0].Unit}
	for k < len(body) {
		cand := compose(k+1, withCTA, nTags, hook)
		if !fits(cand, lim.Text) || (k > 0 && !soft.Check(cand)) {
			break
		}
		k++
	}
	c := Copy{Text: compose(k, withCTA, nTags, hook), Hook: hook, Hashtags: append([]string{}, tags[:nTags]...)}
	if tg.title != "" {
		c.Title = titleFrom(name, hookSentence, lim.Title)
	}
	if jev {
		c.JEV = jevLines(hook, body[:k], ctaIf(withCTA, cta))
	}
	return c, nil
}

func ctaIf(ok bool, cta string) string {
	if ok {
		return cta
	}
	return ""
}

// decorateHook phrases the hook sentence in the tone. Plain platforms take it as written.
func decorateHook(tone, s, seed string, plain bool) string {
	if plain {
		return s
	}
	question := strings.ContainsAny(s, "?？")
	pick := func(options ...string) string { return fmt.Sprintf(options[variant(seed, len(options))], s) }
	switch tone {
	case ToneViral:
		return pick("🔥 %s", "🚨 %s", "👀 %s")
	case ToneEngaging:
		if question {
			return s + " 👇"
		}
		return pick("%s Agree? 👇", "%s Have you tried this? 👇", "👋 %s")
	case ToneEducational:
		if question {
			return s + " Here's the answer."
		}
		if low := strings.ToLower(s); strings.HasPrefix(low, "did you know") || strings.HasPrefix(low, "here") {
			return "📚 " + s
		}
		return pick("Did you know? %s", "Quick lesson: %s", "📚 %s")
	case ToneHumorous:
		if question {
			return s + " 🤔😂"
		}
		return pick("%s 😂", "Plot twist: %s 😅", "%s (yes, really) 🙃")
	default: // professional: the point, stated plainly
		return s
	}
}

// callToAction closes the copy: what the tone asks the viewer to do, in the platform's words.
func callToAction(tone string, tg target, seed string) string {
	follow := tg.follow
	if follow == "" {
		follow = "Follow"
	}
	options := map[string][]string{
		ToneViral:        {follow + " for more 🔥", "Share this with someone who needs it 🔁"},
		ToneEngaging:     {"What do you think? Tell me in the comments 👇", "Would you try this? Let me know 👇"},
		ToneEducational:  {"Save this so you remember it 📌", follow + " to learn something new every week 📚"},
		ToneHumorous:     {"Tag a friend who needs to see this 😂", follow + " for more (it only gets better) 😅"},
		ToneProfessional: {"What has your experience been? I'd welcome your perspective.", follow + " for more insights."},
	}[tone]
	if len(options) == 0 {
		return ""
	}
	return options[variant(seed+"cta", len(options))]
}

// formatBody lays the body out as the tone reads: punchy lines for viral, a numbered list of
// points for educational, a paragraph otherwise.
func formatBody(tone string, ss []string) string {
	switch tone {
	case ToneViral:
		return strings.Join(ss, "\n")
	case ToneEducational:
		var b strings.Builder
		for i, s := range ss {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%d. %s", i+1, s)
		}
		return b.String()
	default:
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = asSentence(s)
		}
		return strings.Join(out, " ")
	}
}

// hashtagsFor picks n tags from the script's keywords, plus the tag a platform's own
// conventions call for (#Shorts on YouTube, #fyp on TikTok when going for reach).
func hashtagsFor(name, tone string, kws []keyword, n int) []string {
	if n == 0 {
		return nil
	}
	var tags []string
	seen := map[string]bool{}
	add := func(t string) {
		if k := strings.ToLower(t); ValidHashtag(t) && !seen[k] {
			seen[k] = true
			tags = append(tags, t)
		}
	}
	// A word already in a chosen pair adds nothing (#ColdBrew, then not #cold).
	inPair := map[string]bool{}
	for _, kw := range kws {
		if len(tags) == n {
			break
		}
		if len(kw.parts) == 1 && inPair[strings.ToLower(kw.parts[0])] {
			continue
		}
		before := len(tags)
		add(hashtag(kw, tone == ToneProfessional))
		if len(tags) > before && len(kw.parts) > 1 {
			for _, p := range kw.parts {
				inPair[strings.ToLower(p)] = true
			}
		}
	}
	switch {
	case name == platform.YouTube:
		add("#Shorts")
	case name == platform.TikTok && tone == ToneViral:
		add("#fyp")
	}
	return tags
}

// titleFrom makes a title of the hook sentence: without its closing period, within the
// platform's title limit; YouTube's gets #Shorts when there is room, as Shorts creators do.
func titleFrom(name, s string, lims []platform.TextLimit) string {
	t := strings.TrimSpace(strings.TrimRight(s, ".。"))
	if t == "" {
		t = s
	}
	if name == platform.YouTube && !strings.Contains(strings.ToLower(t), "#shorts") {
		if withTag := t + " #Shorts"; fits(withTag, lims) {
			return withTag
		}
	}
	return shorten(t, lims)
}

// jevLines are the on-screen lines of a jump-cut edit: the hook, one line per point, the call
// to action; each the first clause of its sentence when that fits a subtitle line.
func jevLines(hook string, body []string, cta string) []string {
	lims := []platform.TextLimit{JEVLineLimit}
	line := func(s string) string {
		if fits(s, lims) {
			return s
		}
		if i := strings.IndexAny(s, ",;:—–"); i > 0 {
			if clause := strings.TrimSpace(s[:i]); utf8.RuneCountInString(clause) >= 12 && fits(clause, lims) {
				return clause
			}
		}
		return shorten(s, lims)
	}
	out := []string{line(hook)}
	for i, s := range body {
		if i == 5 {
			break // a short video has room for a handful of beats
		}
		if l := line(s); strings.ContainsFunc(l, unicode.IsLetter) || strings.ContainsFunc(l, unicode.IsDigit) {
			out = append(out, l)
		}
	}
	if cta != "" {
		out = append(out, line(cta))
	}
	return out
}
