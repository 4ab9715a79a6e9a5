package reddit

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/publish"
)

const token = "tok-reddit"

func accounts(b sim.Behavior) sim.StaticAccounts {
	return sim.StaticAccounts{token: {ID: "t2_abc123", Username: "reelay_tester", Behavior: b}}
}

// env is a Reddit simulator on a test server and a provider pointed at it.
type env struct {
	*providertest.Env
	sim  *sim.Reddit
	prov *Provider
}

func newEnv(t *testing.T, b sim.Behavior, opts sim.RedditOptions, cfg Config) *env {
	t.Helper()
	return newEnvRand(t, b, opts, cfg, nil)
}

func newEnvRand(t *testing.T, b sim.Behavior, opts sim.RedditOptions, cfg Config, rnd func() float64) *env {
	t.Helper()
	e := &env{}
	e.Env = providertest.NewEnv(t, "reddit", accounts(b), func(c sim.Config) http.Handler {
		e.sim = sim.NewRedditSim(c, opts)
		return e.sim
	}, providertest.Options{Rand: rnd})
	cfg.HTTPClient = e.Client
	cfg.Now = e.Clock.Now
	if cfg.ResultWait == 0 {
		cfg.ResultWait = 150 * time.Millisecond
	}
	e.prov = New(cfg)
	t.Cleanup(e.prov.Close)
	return e
}

func (e *env) dest(v *providertest.Video, options string) *publish.Destination {
	return e.Destination("t2_abc123", map[string]string{"access_token": token}, v, options)
}

func stateOf(t *testing.T, raw json.RawMessage) State {
	t.Helper()
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

// TestPublish publishes a video with each option and checks what reached the simulator: the
// video byte for byte (one upload), the post's fields, the outcome's id and URL.
func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options       string
		sub, title          string
		nsfw, spoiler       bool
		flairID, flairText  string
		thumbnail, ownImage bool
	}{
		{name: "defaults", options: `{"subreddit":"reelay_sandbox"}`, sub: "reelay_sandbox", title: "A title", ownImage: true},
		{name: "every option", options: `{"subreddit":"r/Reelay_Flair","title":"Look at this 🎬","nsfw":true,"spoiler":true,"flair_id":"7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b02","flair_text":"My meme"}`,
			sub: "reelay_flair", title: "Look at this 🎬", nsfw: true, spoiler: true, flairID: "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b02", flairText: "My meme", ownImage: true},
		{name: "thumbnail as poster", options: `{"subreddit":"reelay_shorts","title":"With a poster"}`, sub: "reelay_shorts", title: "With a poster", thumbnail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: 4000}, sim.RedditOptions{}, Config{})
			v := providertest.ShortVideo()
			d := e.dest(v, c.options)
			var thumb []byte
			if c.thumbnail {
				var b bytes.Buffer
				if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 72, 128)), nil); err != nil {
					t.Fatal(err)
				}
				thumb = b.Bytes()
				d.Thumbnail = &publish.Media{Size: int64(len(thumb)), ContentType: "image/jpeg",
					Open: func(context.Context, int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(thumb)), nil }}
			}
			outs, err := e.Run(e.prov, d, 30)
			if err != nil {
				t.Fatal(err)
			}
			out := outs[len(outs)-1]
			rec := e.Introspect()
			if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != v.Size() || rec.Uploads[0].Account != "t2_abc123" {
				t.Fatalf("uploads %+v, want the video %s once", rec.Uploads, v.SHA256())
			}
			if len(rec.Published) != 1 || rec.Published[0].ID != out.ExternalID || rec.Published[0].URL != out.URL ||
				rec.Published[0].Text != c.title || rec.Published[0].SHA256 != v.SHA256() {
				t.Fatalf("published %+v, outcome %+v", rec.Published, out)
			}
			if out.Status != publish.StatusPublished || !strings.HasPrefix(out.ExternalID, "t3_") ||
				!strings.HasPrefix(out.URL, "https://www.reddit.com/r/"+c.sub+"/comments/"+strings.TrimPrefix(out.ExternalID, "t3_")+"/") {
				t.Fatalf("outcome %+v", out)
			}
			if (out.Message != "") != c.ownImage {
				t.Errorf("message %q, own poster %v", out.Message, c.ownImage)
			}
			posts := e.sim.Posts("t2_abc123")
			if len(posts) != 1 {
				t.Fatalf("posts %+v", posts)
			}
			p := posts[0]
			if p.Subreddit != c.sub || p.Title != c.title || p.NSFW != c.nsfw || p.Spoiler != c.spoiler ||
				p.FlairID != c.flairID || (c.flairText != "" && p.FlairText != c.flairText) || !p.SendReplies || p.ID != out.ExternalID ||
				!p.Listened {
				t.Errorf("post %+v", p)
			}
			// The video went to the video bucket under the asset id, the poster to the media bucket.
			if !strings.HasPrefix(p.VideoURL, e.BaseURL+"/s3/reddit-uploaded-video/"+p.AssetID) ||
				!strings.HasPrefix(p.PosterURL, e.BaseURL+"/s3/reddit-uploaded-media/rte_images/") {
				t.Errorf("video %s poster %s", p.VideoURL, p.PosterURL)
			}
			// Every API call carried the User-Agent and the bearer token, and the websocket was
			// open when the post was submitted (Listened); the result came by websocket, not by a look
			// at the account's submissions.
			for _, r := range e.Requests("", "") {
				if !strings.Contains(r.Path, "/s3/") && (r.Header.Get("User-Agent") != DefaultUserAgent ||
					!strings.HasPrefix(r.Path, "/sandbox/reddit/ws/") && r.Header.Get("Authorization") != "bearer "+token) {
					t.Errorf("%s %s headers %v", r.Method, r.Path, r.Header)
				}
			}
			if n := len(e.Requests(http.MethodPost, "/api/submit")); n != 1 {
				t.Errorf("%d submits", n)
			}
			if n := len(e.Requests(http.MethodGet, "/submitted")); n != 0 {
				t.Errorf("%d looks at the submissions", n)
			}
			if c.thumbnail {
				if n := len(e.Requests(http.MethodPost, "/s3/reddit-uploaded-media")); n != 1 {
					t.Errorf("%d poster uploads", n)
				}
			}
		})
	}
}

