package metagraph

import (
	"encoding/json"
	"maps"
	"testing"
)

func TestCountAndBreakdown(t *testing.T) {
	for _, c := range []struct {
		raw   string
		count int64
		ok    bool
	}{
		{"42", 42, true},
		{"1.5e3", 1500, true},
		{`"12"`, 12, true}, // a quoted number reads as one
		{`"many"`, 0, false},
		{"null", 0, false},
		{"", 0, false},
		{`{"A":1}`, 0, false},
	} {
		if n, ok := Count(json.RawMessage(c.raw)); n != c.count || ok != c.ok {
			t.Errorf("Count(%s) = %d, %v; want %d, %v", c.raw, n, ok, c.count, c.ok)
		}
	}
	for _, c := range []struct {
		raw  string
		want map[string]int64
		ok   bool
	}{
		{`{"REACTION_LIKE":4,"REACTION_LOVE":1}`, map[string]int64{"REACTION_LIKE": 4, "REACTION_LOVE": 1}, true},
		{`{}`, map[string]int64{}, true},
		{`12`, nil, false},
		{`null`, nil, false},
		{``, nil, false},
	} {
		got, ok := Breakdown(json.RawMessage(c.raw))
		if ok != c.ok || !maps.Equal(got, c.want) {
			t.Errorf("Breakdown(%s) = %v, %v; want %v, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}
