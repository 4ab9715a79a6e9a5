package sim

import (
	"fmt"
	"hash/fnv"
	"time"
)

// The simulated audience of a published item. Every simulator that reports analytics or
// comments takes them from here, so the figures of one item are the same on every read at the
// same moment, never fall between two reads, and differ between items: a test can compute
// what a simulator must answer, and a sync that stores a lower figure than it read is caught.

// Audience is how an item has done by some moment.
type Audience struct {
	Views        int64
	Impressions  int64
	Reach        int64
	Likes        int64
	Shares       int64
	Saves        int64
	WatchSeconds int64
	// Comments is the number of audience comments (AudienceComments); replies the account
	// posted are the simulator's to add.
	Comments int64
}

// audienceSeed is the item's own draw: the same id always behaves the same.
func audienceSeed(itemID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(itemID))
	return h.Sum64()
}

// AudienceOf returns the figures of the item published at publishedAt, as of now. Views grow
// at 20–119 a minute (by item), impressions are 1.5–2.5 times views, reach 60–90 % of views,
// likes, shares and saves fixed shares of views, and watch time 3–12 s a view; all are whole
// functions of the elapsed time, so they only grow.
func AudienceOf(itemID string, publishedAt, now time.Time) Audience {
	elapsed := now.Sub(publishedAt)
	if elapsed < 0 {
		elapsed = 0
	}
	seed := audienceSeed(itemID)
	draw := func(shift uint, n uint64) int64 { return int64((seed >> shift) % n) }
	minutes := elapsed.Minutes()
	views := int64(minutes * float64(20+draw(0, 100)))
	return Audience{
		Views:        views,
		Impressions:  views * (15 + draw(8, 11)) / 10,
		Reach:        views * (60 + draw(16, 31)) / 100,
		Likes:        views * (4 + draw(24, 7)) / 100,
		Shares:       views * (1 + draw(32, 3)) / 100,
		Saves:        views * (1 + draw(40, 2)) / 100,
		WatchSeconds: views * (3 + draw(48, 10)),
		Comments:     int64(len(AudienceComments(itemID, publishedAt, now))),
	}
}

// AudienceComment is a comment from the audience on an item.
type AudienceComment struct {
	// N numbers the item's comments from 1 in order of arrival; simulators build the
	// comment's platform id from it, so the same comment keeps its id on every read.
	N      int
	Author string
	Text   string
	At     time.Time
}

// MaxAudienceComments bounds the comments on one item.
const MaxAudienceComments = 12

var (
	AudienceAuthors = []string{"ada_films", "bo.travels", "chen_cooks", "dee-runs", "eli.makes", "fatima_draws", "gus.plays", "hana_reads"}
	audienceTexts   = []string{
		"Love this! 🔥",
		"How long did this take to make?",
		"Where was this filmed?",
		"Saving this for later",
		"The ending got me 😂",
		"More of these please",
		"What camera do you use?",
		"This deserves more views",
	}
)

// AudienceComments returns the audience comments on the item that have arrived by now: the
// first as soon as it is published, then one every 2–9 minutes (by item), up to
// MaxAudienceComments, oldest first.
func AudienceComments(itemID string, publishedAt, now time.Time) []AudienceComment {
	if now.Before(publishedAt) {
		return nil
	}
	seed := audienceSeed(itemID)
	every := time.Duration(2+seed%8) * time.Minute
	n := min(int(now.Sub(publishedAt)/every)+1, MaxAudienceComments)
	out := make([]AudienceComment, n)
	for i := range out {
		pick := (seed >> (i % 8 * 8)) + uint64(i)
		out[i] = AudienceComment{
			N:      i + 1,
			Author: AudienceAuthors[pick%uint64(len(AudienceAuthors))],
			Text:   fmt.Sprintf("%s (#%d)", audienceTexts[(pick/8)%uint64(len(audienceTexts))], i+1),
			At:     publishedAt.Add(time.Duration(i) * every),
		}
	}
	return out
}
