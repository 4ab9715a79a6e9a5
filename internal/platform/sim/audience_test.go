package sim

import (
	"testing"
	"time"
)

func TestAudienceGrowsDeterministically(t *testing.T) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var prev Audience
	for _, after := range []time.Duration{0, time.Minute, 7 * time.Minute, time.Hour, 48 * time.Hour} {
		a := AudienceOf("item-1", start, start.Add(after))
		if a != AudienceOf("item-1", start, start.Add(after)) {
			t.Fatalf("after %s: two reads differ", after)
		}
		for name, pair := range map[string][2]int64{
			"views": {prev.Views, a.Views}, "impressions": {prev.Impressions, a.Impressions}, "reach": {prev.Reach, a.Reach},
			"likes": {prev.Likes, a.Likes}, "shares": {prev.Shares, a.Shares}, "saves": {prev.Saves, a.Saves},
			"watch": {prev.WatchSeconds, a.WatchSeconds}, "comments": {prev.Comments, a.Comments},
		} {
			if pair[1] < pair[0] {
				t.Errorf("after %s: %s fell from %d to %d", after, name, pair[0], pair[1])
			}
		}
		prev = a
	}
	if prev.Views < 48*60*20 || prev.Likes == 0 || prev.Comments != MaxAudienceComments {
		t.Errorf("after two days: %+v", prev)
	}
	if AudienceOf("item-2", start, start.Add(time.Hour)) == AudienceOf("item-1", start, start.Add(time.Hour)) {
		t.Error("two items have the same figures")
	}
	if a := AudienceOf("item-1", start, start.Add(-time.Minute)); a != (Audience{}) {
		t.Errorf("before publishing: %+v", a)
	}
}

func TestAudienceComments(t *testing.T) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	first := AudienceComments("item-1", start, start)
	if len(first) != 1 || first[0].N != 1 || !first[0].At.Equal(start) || first[0].Text == "" || first[0].Author == "" {
		t.Fatalf("at publishing: %+v", first)
	}
	later := AudienceComments("item-1", start, start.Add(time.Hour))
	if len(later) < 7 || later[0] != first[0] {
		t.Fatalf("an hour later: %d comments, first %+v", len(later), later[0])
	}
	for i := 1; i < len(later); i++ {
		if !later[i].At.After(later[i-1].At) || later[i].N != i+1 {
			t.Errorf("comment %d out of order: %+v", i, later[i])
		}
	}
	if n := len(AudienceComments("item-1", start, start.Add(-time.Second))); n != 0 {
		t.Errorf("before publishing: %d comments", n)
	}
}
