package render

import (
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

func face(t *testing.T, size float64) font.Face {
	t.Helper()
	fnt, err := goBold()
	if err != nil {
		t.Fatal(err)
	}
	f, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFitText(t *testing.T) {
	fnt, err := goBold()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit ", 200) // 11,000 characters
	const maxW, maxH = 820, 1344                                                            // a 9:16 frame's text box
	const minSize, maxSize = 45.0, 108.0
	for _, tc := range []struct {
		name      string
		text      string
		truncated bool
		size      float64 // expected size, or 0 for one strictly between the limits
	}{
		{"short text at the largest size", "Hello, world", false, maxSize},
		{"medium text shrinks", strings.Repeat("sourdough starter ", 12), false, 0},
		{"long text is cut", words, true, minSize},
		{"unbroken CJK run wraps between characters", strings.Repeat("漢字かな", 40), false, 0},
		{"endless unbroken run is cut", strings.Repeat("x", 10000), true, minSize},
		{"Unicode the font lacks", strings.Repeat("🎬👩‍👩‍👧 한국어 עברית ", 300), true, minSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := fitText(fnt, tc.text, maxW, maxH, minSize, maxSize)
			if err != nil {
				t.Fatal(err)
			}
			if tc.size != 0 && l.size != tc.size || tc.size == 0 && (l.size <= minSize || l.size >= maxSize) {
				t.Errorf("size %v, want %v in [%v, %v]", l.size, tc.size, minSize, maxSize)
			}
			if l.truncated != tc.truncated {
				t.Errorf("truncated %v, want %v", l.truncated, tc.truncated)
			}
			if len(l.lines) == 0 || len(l.lines)*l.lineHeight > maxH {
				t.Errorf("%d lines of %d px do not fit %d px", len(l.lines), l.lineHeight, maxH)
			}
			f := face(t, l.size)
			for i, line := range l.lines {
				if w := font.MeasureString(f, line); w > fixed.I(maxW) {
					t.Errorf("line %d is %d px wide, more than %d: %q", i, w.Ceil(), maxW, line)
				}
				if line == "" {
					t.Errorf("line %d is empty", i)
				}
			}
			last := l.lines[len(l.lines)-1]
			if strings.HasSuffix(last, ellipsis) != tc.truncated {
				t.Errorf("last line %q, ellipsis expected: %v", last, tc.truncated)
			}
		})
	}
}

// TestFitTextCutsAtWordBoundary: the text shown before the ellipsis is the prompt's
// beginning, ending where a word ends.
func TestFitTextCutsAtWordBoundary(t *testing.T) {
	fnt, err := goBold()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 10000; i++ {
		b.WriteString([]string{"a ", "quick ", "extraordinarily ", "fox ", "jumps "}[i%5])
	}
	text := b.String()
	for _, maxW := range []int{513, 820, 1459} {
		l, err := fitText(fnt, text, maxW, 1000, 40, 100)
		if err != nil {
			t.Fatal(err)
		}
		shown := strings.TrimSuffix(strings.Join(l.lines, " "), ellipsis)
		if !l.truncated || !strings.HasPrefix(text, shown) || text[len(shown)] != ' ' || strings.HasSuffix(shown, " ") {
			t.Errorf("width %d: shown %q…, not a prefix of the text ending at a word", maxW, shown[max(0, len(shown)-40):])
		}
	}
}

func TestParagraphs(t *testing.T) {
	got := paragraphs("  Line one\r\nline\ttwo\n\n\n\u200dthree\u0007 👍\ufe0f\u200f  \n   ")
	want := [][]string{{"Line", "one"}, {"line", "two"}, {"three", "👍"}}
	if len(got) != len(want) {
		t.Fatalf("paragraphs %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("paragraph %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestTextCard(t *testing.T) {
	for _, aspect := range []string{"9:16", "16:9"} {
		w, h, _ := Dimensions(aspect)
		for _, prompt := range []string{"Hi", longUnicodePrompt(), strings.Repeat("word ", 2000), "\xff\xfe invalid UTF-8 \xc3"} {
			img, err := textCard(prompt, w, h)
			if err != nil {
				t.Fatalf("%s: %v", aspect, err)
			}
			b := img.Bounds()
			// Within the frame's margins, and below the height cap plus padding.
			if b.Dx() > w-2*int(float64(w)*marginFrac) || b.Dy() > int(float64(h)*maxHeightFrac)+2*int(float64(w)*paddingFrac) {
				t.Errorf("%s: card %v too large for %d×%d", aspect, b, w, h)
			}
			// The centre of a one-line card is covered by opaque white glyphs or the panel.
			if a := img.RGBAAt(b.Dx()/2, b.Dy()/2).A; a == 0 {
				t.Errorf("%s: card is transparent in the middle", aspect)
			}
		}
	}
	if _, err := textCard(" \u200b\n ", 1080, 1920); err == nil {
		t.Error("blank prompt: no error")
	}
}
