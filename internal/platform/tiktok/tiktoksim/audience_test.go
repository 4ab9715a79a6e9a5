package tiktoksim

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// TestTikTokVideoQuery queries a published post with the fields asked, leaves out what the
// caller may not read, and refuses malformed queries.
func TestTikTokVideoQuery(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{ModerationDelay: -1}, nil)
	publishID := e.upload("tok", "direct", newTTVideo(1_000_000, 5*time.Second, 1080, 1920), direct)
	e.clock.Advance(3 * time.Second) // the default processing time
	post, _ := e.sim.Post(publishID)
	if post.PostID == "" || post.Status != PublishComplete {
		t.Fatalf("post %+v", post)
	}
	published := e.clock.Now().Add(-time.Second) // processing ended 2 s after the upload
	e.clock.Advance(time.Hour)
	const path = "/v2/video/query/?fields=id,view_count,like_count,comment_count,share_count,duration"
	ask := func(token string, ids ...string) ttAnswer {
		return e.api(path, token, map[string]any{"filters": map[string]any{"video_ids": ids}})
	}

	a := ask("tok", "7000000000000000001", post.PostID)
	videos, _ := a.data["videos"].([]any)
	if a.status != 200 || a.code != "ok" || len(videos) != 1 {
		t.Fatalf("query: %d %s %v", a.status, a.code, a.data)
	}
	v := videos[0].(map[string]any)
	aud := sim.AudienceOf(post.PostID, published, e.clock.Now())
	want := map[string]any{"id": post.PostID, "view_count": float64(aud.Views), "like_count": float64(aud.Likes),
		"comment_count": float64(aud.Comments), "share_count": float64(aud.Shares), "duration": float64(5)}
	if len(v) != len(want) {
		t.Errorf("video %v has other fields than %v", v, want)
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %v, want %v", k, v[k], w)
		}
	}
	if a := ask("other", post.PostID); len(a.data["videos"].([]any)) != 0 {
		t.Errorf("another creator reads the post: %v", a.data)
	}

	tooMany := make([]string, 21)
	for i := range tooMany {
		tooMany[i] = strconv.Itoa(7_000_000 + i)
	}
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		code       string
	}{
		{"no fields", "/v2/video/query/", map[string]any{"filters": map[string]any{"video_ids": []string{post.PostID}}}, 400, "invalid_params"},
		{"unknown field", "/v2/video/query/?fields=id,fps", map[string]any{"filters": map[string]any{"video_ids": []string{post.PostID}}}, 400, "invalid_params"},
		{"no filters", path, map[string]any{}, 400, "invalid_params"},
		{"no ids", path, map[string]any{"filters": map[string]any{"video_ids": []string{}}}, 400, "invalid_params"},
		{"21 ids", path, map[string]any{"filters": map[string]any{"video_ids": tooMany}}, 400, "invalid_params"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if a := e.api(c.path, "tok", c.body); a.status != c.status || a.code != c.code {
				t.Errorf("%d %s %s, want %d %s", a.status, a.code, a.msg, c.status, c.code)
			}
		})
	}
}

// TestTikTokVideoQueryScope: the query needs video.list.
func TestTikTokVideoQueryScope(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{Scopes: map[string][]string{"open_1": {"video.publish"}}}, nil)
	a := e.api("/v2/video/query/?fields=id", "tok", map[string]any{"filters": map[string]any{"video_ids": []string{"1"}}})
	if a.status != http.StatusUnauthorized || a.code != "scope_not_authorized" {
		t.Errorf("%d %s, want 401 scope_not_authorized", a.status, a.code)
	}
}
