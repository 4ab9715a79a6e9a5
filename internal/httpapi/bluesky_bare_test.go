package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// TestBlueskySandboxBarePDS: sandbox_behavior.bare_pds reaches the Bluesky simulator, which
// is then a self-hosted PDS with neither AppView nor video service: a 6 MiB video goes to its
// uploadBlob and is refused, as over the reference PDS's 5 MiB blob limit, with the limit
// named; the same video goes through an ordinary sandbox channel's video service.
func TestBlueskySandboxBarePDS(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		bare, _ := e.sandboxChannel(e.a, "bluesky", map[string]any{"bare_pds": true, "processing_ms": 0})
		plain, _ := e.sandboxChannel(e.a, "bluesky", map[string]any{"processing_ms": 0})
		big := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, Size: 6 << 20})
		ms := newMediaServer(t, map[string][]byte{"/big.mp4": big})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": ms.URL + "/big.mp4", "channel_ids": []string{bare, plain}, "caption": "A bare PDS #reelay"}})
		if r.Code != http.StatusAccepted {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		post := e.waitPost(e.a, r.JSON["post_id"].(string), 60*time.Second, func(p map[string]any) bool {
			for _, d := range p["publish_results"].([]any) {
				if s := d.(map[string]any)["upload_status"]; s != "published" && s != "failed" {
					return false
				}
			}
			return true
		})
		got := map[string]string{}
		for _, x := range post["publish_results"].([]any) {
			d := x.(map[string]any)
			got[d["channel_id"].(string)] = fmt.Sprintf("%v %v %v", d["upload_status"], d["error_category"], d["error"])
		}
		if s := got[plain]; !strings.HasPrefix(s, "published") {
			t.Errorf("ordinary channel: %s", s)
		}
		if s := got[bare]; !strings.HasPrefix(s, "failed media_rejected") || !strings.Contains(s, "PDS_BLOB_UPLOAD_LIMIT") {
			t.Errorf("bare PDS channel: %s", s)
		}
	})
}
