package render

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Typography is drawn in Go rather than with ffmpeg's drawtext: drawtext depends on the
// fonts installed on the host and on an escaping syntax a 10,000-character prompt would
// have to survive. The embedded Go Bold font renders the same everywhere.

const ellipsis = "…"

// Proportions of the text card, as fractions of the frame. The margins keep text clear of
// the buttons and captions platforms draw over the edges of a vertical video.
const (
	marginFrac    = 0.08 // of the width, each side, outside the panel
	paddingFrac   = 0.04 // of the width, inside the panel around the text
	maxHeightFrac = 0.70 // of the height, for the text block
	lineSpacing   = 1.22 // line height as a multiple of the font size
	sizeStep      = 0.92 // each try shrinks the font by this factor
)

var goBold = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(gobold.TTF) })

// fontSizes returns the range of font sizes, in pixels, for a frame. The minimum keeps text
// legible on a phone: a 9:16 frame fills a phone's width, so 1/24 of the width is about the
// size of body text; a 16:9 frame is shown smaller, so its larger width gives larger text.
// The maximum keeps a two-word prompt from shouting across the frame.
func fontSizes(frameW, frameH int) (minSize, maxSize float64) {
	minSize = float64(frameW) / 24
	maxSize = math.Max(minSize, math.Min(float64(frameW)/10, float64(frameH)/8))
	return minSize, maxSize
}

// textLayout is a prompt fitted to a text box.
type textLayout struct {
	size       float64 // font size in pixels
	lineHeight int
	lines      []string
	truncated  bool // the text did not fit even at the smallest size and ends with an ellipsis
}

// fitText word-wraps text into a box of maxW×maxH pixels, trying sizes from maxSize down to
// minSize, and takes the first (largest) that fits. When even minSize does not fit, the
// text is cut at a word boundary and ends with an ellipsis: a long prompt shown in part is
// better than all of it too small to read.
func fitText(fnt *opentype.Font, text string, maxW, maxH int, minSize, maxSize float64) (textLayout, error) {
	paras := paragraphs(text)
	for size := maxSize; ; size *= sizeStep {
		last := size <= minSize
		if last {
			size = minSize
		}
		face, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
		if err != nil {
			return textLayout{}, fmt.Errorf("loading font: %w", err)
		}
		lh := int(math.Ceil(size * lineSpacing))
		maxLines := max(1, maxH/lh)
		// One line more than fits tells a text that fits from one that does not.
		lines, complete := wrap(face, paras, fixed.I(maxW), maxLines+1)
		if complete && len(lines) <= maxLines {
			return textLayout{size: size, lineHeight: lh, lines: lines}, nil
		}
		if last {
			return textLayout{size: size, lineHeight: lh, lines: cut(face, lines[:maxLines], fixed.I(maxW)), truncated: true}, nil
		}
	}
}

// paragraphs splits text into paragraphs of words. Line breaks in the prompt start a new
// paragraph; blank lines and runs of spaces collapse. Control and format characters
// (zero-width joiners, variation selectors, bidi marks) are dropped, since the font has no
// glyph for them and would draw each as a box.
func paragraphs(text string) [][]string {
	text = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Variation_Selector, r):
			return -1
		}
		return r
	}, text)
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		if words := strings.Fields(line); len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// wrap fills lines greedily, at most maxLines of them; complete reports whether every word
// was placed. A word wider than a line (a URL, or a run of CJK, which has no spaces) is
// broken between characters.
func wrap(face font.Face, paras [][]string, maxW fixed.Int26_6, maxLines int) (lines []string, complete bool) {
	for _, words := range paras {
		line := ""
		for _, w := range words {
			if line != "" {
				if font.MeasureString(face, line+" "+w) <= maxW {
					line += " " + w
					continue
				}
				if lines = append(lines, line); len(lines) == maxLines {
					return lines, false
				}
				line = ""
			}
			for {
				n := fitPrefix(face, w, maxW)
				if n == len(w) {
					break
				}
				if lines = append(lines, w[:n]); len(lines) == maxLines {
					return lines, false
				}
				w = w[n:]
			}
			line = w
		}
		if lines = append(lines, line); len(lines) == maxLines {
			return lines, false
		}
	}
	return lines, true
}

// fitPrefix returns the byte length of the longest prefix of s (at least one character)
// that fits in maxW; len(s) when all of it does.
func fitPrefix(face font.Face, s string, maxW fixed.Int26_6) int {
	n := 0
	for i, r := range s {
		end := i + utf8.RuneLen(r)
		if n > 0 && font.MeasureString(face, s[:end]) > maxW {
			break
		}
		n = end
	}
	return n
}

// cut ends the last of lines with an ellipsis, dropping words from its end until the
// ellipsis fits (characters, when the line is a single broken word).
func cut(face font.Face, lines []string, maxW fixed.Int26_6) []string {
	out := append([]string(nil), lines...)
	last := out[len(out)-1]
	for last != "" && font.MeasureString(face, last+ellipsis) > maxW {
		if i := strings.LastIndexByte(last, ' '); i > 0 {
			last = last[:i]
		} else {
			_, n := utf8.DecodeLastRuneInString(last)
			last = last[:len(last)-n]
		}
	}
	out[len(out)-1] = last + ellipsis
	return out
}

// textCard draws prompt as white, centred lines over a translucent dark panel with rounded
// corners, sized to the text, for a frame of frameW×frameH. White on a dark panel with a
// soft shadow stays readable over any background colour.
func textCard(prompt string, frameW, frameH int) (*image.RGBA, error) {
	fnt, err := goBold()
	if err != nil {
		return nil, fmt.Errorf("parsing the Go Bold font: %w", err)
	}
	pad := int(float64(frameW) * paddingFrac)
	maxW := frameW - 2*int(float64(frameW)*marginFrac) - 2*pad
	minSize, maxSize := fontSizes(frameW, frameH)
	l, err := fitText(fnt, prompt, maxW, int(float64(frameH)*maxHeightFrac), minSize, maxSize)
	if err != nil {
		return nil, err
	}
	if len(l.lines) == 0 {
		return nil, errors.New("the prompt has no text to show")
	}
	face, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: l.size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("loading font: %w", err)
	}
	textW := 0
	for _, line := range l.lines {
		textW = max(textW, font.MeasureString(face, line).Ceil())
	}
	w, h := textW+2*pad, len(l.lines)*l.lineHeight+2*pad
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	roundedPanel(img, pad, color.RGBA{A: 0x66})

	m := face.Metrics()
	// Centre the glyphs' ascent+descent in each line's box.
	baseline := pad + (l.lineHeight-(m.Ascent+m.Descent).Ceil())/2 + m.Ascent.Ceil()
	shadow := max(2, int(l.size/18))
	for i, line := range l.lines {
		x := (w - font.MeasureString(face, line).Ceil()) / 2
		y := baseline + i*l.lineHeight
		for _, pass := range []struct {
			src    image.Image
			offset int
		}{{image.NewUniform(color.NRGBA{A: 0x99}), shadow}, {image.White, 0}} {
			d := font.Drawer{Dst: img, Src: pass.src, Face: face, Dot: fixed.P(x+pass.offset, y+pass.offset)}
			d.DrawString(line)
		}
	}
	return img, nil
}

// roundedPanel fills img with c, leaving corners of radius r rounded and anti-aliased.
func roundedPanel(img *image.RGBA, r int, c color.RGBA) {
	b := img.Bounds()
	draw.Draw(img, b, image.NewUniform(c), image.Point{}, draw.Src)
	fr := float64(r)
	for y := 0; y < r; y++ {
		for x := 0; x < r; x++ {
			// Coverage from the distance of the pixel centre to the corner circle's centre.
			d := math.Hypot(fr-float64(x)-0.5, fr-float64(y)-0.5)
			cov := math.Max(0, math.Min(1, fr-d+0.5))
			px := color.RGBA{R: uint8(float64(c.R) * cov), G: uint8(float64(c.G) * cov), B: uint8(float64(c.B) * cov), A: uint8(float64(c.A) * cov)}
			for _, p := range [4]image.Point{{x, y}, {b.Dx() - 1 - x, y}, {x, b.Dy() - 1 - y}, {b.Dx() - 1 - x, b.Dy() - 1 - y}} {
				img.SetRGBA(p.X, p.Y, px)
			}
		}
	}
}

// writeCard encodes the card as PNG. Speed matters more than size: the file lives for one
// ffmpeg run.
func writeCard(w io.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}
