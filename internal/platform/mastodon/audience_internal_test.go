package mastodon

import (
	"testing"

	"github.com/reelay/reelay/internal/provider"
)

func TestPlainText(t *testing.T) {
	for _, c := range []struct{ html, want string }{
		{`<p>Love this! 🔥 (#1)</p>`, "Love this! 🔥 (#1)"},
		{`<p>one<br />two<br>three</p><p>para &amp; &lt;b&gt; &#39;q&#39;</p>`, "one\ntwo\nthree\n\npara & <b> 'q'"},
		{`<p><span class="h-card" translate="no"><a href="https://a.example/@bo" class="u-url mention">@<span>bo</span></a></span> see ` +
			`<a href="https://example.com/a/very/long/path/to/a/page" target="_blank" rel="nofollow noopener" translate="no">` +
			`<span class="invisible">https://</span><span class="ellipsis">example.com/a/very/long/path/t</span>` +
			`<span class="invisible">o/a/page</span></a></p>`, "@bo see https://example.com/a/very/long/path/to/a/page"},
		{`<p>a</p><ul><li>x</li><li>y</li></ul><blockquote><p>q</p></blockquote>`, "a\n\nx\ny\n\nq"},
		{`plain`, "plain"},
		{`<p>cut <a href="x"`, "cut"},
	} {
		if got := plainText(c.html); got != c.want {
			t.Errorf("plainText(%q) = %q, want %q", c.html, got, c.want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		version string
		want    bool
	}{
		{"4.3.0", true}, {"4.4.0-beta.1+glitch", true}, {"5.0.0", true}, {"4.2.12", false}, {"3.5.3", false},
		{"2.7.2 (compatible; Pleroma 2.6.1)", false}, {"0.17.3 git-abc", false}, {"", false}, {"4", false},
	} {
		if got := atLeast(c.version, 4, 3); got != c.want {
			t.Errorf("atLeast(%q, 4, 3) = %v", c.version, got)
		}
	}
}

func TestWithMention(t *testing.T) {
	remote := provider.Comment{Author: "ada_films@audience.example"}
	for _, c := range []struct {
		to   provider.Comment
		text string
		want string
	}{
		{remote, "Thanks!", "@ada_films@audience.example Thanks!"},
		{remote, "Thanks @ADA_films@audience.example.", "Thanks @ADA_films@audience.example."},
		{remote, "Thanks @ada_films", "@ada_films@audience.example Thanks @ada_films"},
		{remote, "see me@ada_films@audience.example", "@ada_films@audience.example see me@ada_films@audience.example"},
		{provider.Comment{Author: "bob"}, "hi @bob!", "hi @bob!"},
		{provider.Comment{Author: "bob"}, "hi @bobby", "@bob hi @bobby"},
		{provider.Comment{Author: "reelay", Own: true}, "more", "more"},
		{provider.Comment{}, "hi", "hi"},
	} {
		if got := withMention(c.to, c.text); got != c.want {
			t.Errorf("withMention(%q, %q) = %q, want %q", c.to.Author, c.text, got, c.want)
		}
	}
}

func TestOlderThan(t *testing.T) {
	for _, c := range []struct {
		version, min string
		older        bool
	}{
		{"3.1.3", "3.2.0", true},
		{"3.2.0", "3.2.0", false},
		{"3.10.0", "3.2.0", false},
		{"4.4.0-beta.1+glitch", "4.4.0", false},
		{"2.9", "3.2.0", true},
		{"unknown", "3.2.0", false},
	} {
		if got := olderThan(c.version, c.min); got != c.older {
			t.Errorf("olderThan(%q, %q) = %v", c.version, c.min, got)
		}
	}
}
