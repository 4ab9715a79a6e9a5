package platform

import "testing"

func TestTruncate(t *testing.T) {
	const (
		family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // 1 grapheme, 11 UTF-16 units, 25 bytes
		flagFR = "\U0001F1EB\U0001F1F7"                                       // 1 grapheme, 4 units, 8 bytes
		eAcute = "e\u0301"                                                    // 1 grapheme, 2 characters
	)
	tests := []struct {
		name  string
		limit TextLimit
		s     string
		want  string
	}{
		{"fits", TextLimit{Max: 5, Unit: UnitCharacters}, "hello", "hello"},
		{"no limit", TextLimit{Max: 0, Unit: UnitBytes}, "hello", "hello"},
		{"ascii chars", TextLimit{Max: 3, Unit: UnitCharacters}, "hello", "hel"},
		{"graphemes keep family whole", TextLimit{Max: 2, Unit: UnitGraphemes}, "a" + family + "b", "a" + family},
		{"utf16 never splits family", TextLimit{Max: 11, Unit: UnitUTF16}, "a" + family, "a"},
		{"utf16 family fits", TextLimit{Max: 12, Unit: UnitUTF16}, "a" + family + "b", "a" + family},
		{"bytes never split flag", TextLimit{Max: 9, Unit: UnitBytes}, "ab" + flagFR, "ab"},
		{"characters never split accent", TextLimit{Max: 2, Unit: UnitCharacters}, "a" + eAcute, "a"},
		{"first cluster too big", TextLimit{Max: 3, Unit: UnitBytes}, family, ""},
		{"flags pairwise", TextLimit{Max: 1, Unit: UnitGraphemes}, flagFR + flagFR, flagFR},
		{"bytes cap under graphemes", TextLimit{Max: 3, Unit: UnitGraphemes, MaxBytes: 50}, family + family + family, family + family},
		{"graphemes under bytes cap", TextLimit{Max: 2, Unit: UnitGraphemes, MaxBytes: 50}, "abc", "ab"},
		{"bytes cap alone", TextLimit{MaxBytes: 9}, "ab" + flagFR + "c", "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.limit.Truncate(tt.s)
			if got != tt.want {
				t.Errorf("Truncate(%q) = %q, want %q", tt.s, got, tt.want)
			}
			if !tt.limit.Check(got) {
				t.Errorf("Truncate(%q) = %q does not fit %+v", tt.s, got, tt.limit)
			}
		})
	}
}
