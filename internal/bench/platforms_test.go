package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// platformsServer runs the whole process as `reelay serve` assembles it (workers, simulators)
// behind a real listener on a fresh SQLite database, and returns a client of a new account.
func platformsServer(t *testing.T) *Client {
	t.Helper()
	st := storetest.New(t, store.SQLite)
	srv := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) {
		// As `reelay serve` runs by default: the bench uploads its video, it links nothing.
		c.AllowPrivateURLs = false
		c.RateLimitRPS, c.RateLimitBurst = 1e9, 1<<30
	}))
	c := NewClient(srv.URL, apptest.NewTenant(t, st, "bench", "bench").Key, 2)
	t.Cleanup(c.Close)
	return c
}

// One post to each of the twelve platforms publishes, each with the per-platform objects it
// needs (a Pinterest board of the channel's account, a Reddit subreddit, TikTok direct), and
// the result has one row per platform in the order asked. Timings are not checked.
func TestPlatformsEveryPlatform(t *testing.T) {
	c := platformsServer(t)
	measured := false
	res, err := Platforms(context.Background(), PlatformsConfig{Client: c, Platforms: platform.All, Posts: 1,
		Timeout: time.Minute, Measure: func() func() { measured = true; return func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	if !measured {
		t.Error("Measure was not called")
	}
	if len(res.Platforms) != len(platform.All) || res.ChannelsPerPlatform != 1 || res.VideoBytes < 75_000 {
		t.Fatalf("%d platforms, %d channels each, a %d-byte video", len(res.Platforms), res.ChannelsPerPlatform, res.VideoBytes)
	}
	for i, p := range res.Platforms {
		if p.Platform != platform.All[i] || p.Posts != 1 || p.Published != 1 || p.Failures != 0 ||
			p.Latency.N != 1 || p.Observed.N != 1 || p.Accept.N != 1 || p.Latency.Max <= 0 {
			t.Errorf("row %d: %+v", i, p)
		}
	}
	if s := res.Summary(); !strings.Contains(s, "pinterest") || strings.Count(s, "\n") < len(platform.All) {
		t.Errorf("summary:\n%s", s)
	}
}

// A platform's posts move to a fresh channel every PostsPerChannel posts: seven YouTube posts
// to one sandbox channel would run out of its daily quota (about six uploads).
func TestPlatformsSpreadsPostsOverChannels(t *testing.T) {
	c := platformsServer(t)
	res, err := Platforms(context.Background(), PlatformsConfig{Client: c, Platforms: []string{platform.YouTube},
		Posts: 2*PostsPerChannel + 1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ChannelsPerPlatform != 3 || res.Platforms[0].Published != 2*PostsPerChannel+1 {
		t.Errorf("%d channels, %+v", res.ChannelsPerPlatform, res.Platforms[0])
	}
}

func TestParseAnyPlatforms(t *testing.T) {
	got, err := ParseAnyPlatforms(" Reddit,telegram,,reddit ")
	if err != nil || strings.Join(got, ",") != "reddit,telegram" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", " , ", "youtube,myspace"} {
		if _, err := ParseAnyPlatforms(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
