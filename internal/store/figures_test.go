package store_test

import (
	"testing"

	"github.com/reelay/reelay/internal/store"
)

func TestFiguresAdd(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name string
		a, b store.Figures
		want store.Figures
	}{
		{"both missing stays missing", store.Figures{}, store.Figures{}, store.Figures{}},
		{"one side missing", store.Figures{Views: n(3)}, store.Figures{Likes: n(2)}, store.Figures{Views: n(3), Likes: n(2)}},
		{"both given", store.Figures{Views: n(3), Saves: n(0)}, store.Figures{Views: n(4), Saves: n(5)}, store.Figures{Views: n(7), Saves: n(5)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.a
			got.Add(c.b)
			if !got.Equal(c.want) {
				t.Errorf("sum %+v, want %+v", got, c.want)
			}
		})
	}
}
