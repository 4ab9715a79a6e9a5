package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// uploadRate is how fast the simulators take an upload before the crash: a 40 MB video takes
// about five seconds on each platform.
const uploadRate = 8 << 20

// crashCase is one run of "publish, SIGKILL the server while the platforms receive the video,
// restart it, and check that each platform got the video exactly once".
type crashCase struct {
	// schedule, when positive, schedules the post this far ahead instead of publishing now.
	schedule time.Duration
	// killAfter is how long after every platform's first upload bytes the server is killed.
	killAfter time.Duration
	// size is the video's size in bytes.
	size int64
}

func runCrash(t *testing.T, cc crashCase) {
	needBinary(t)
	h := newSimHost(t, uploadRate)
	srv, c := startServer(t, map[string]string{"REELAY_SANDBOX_URL": h.URL})
	project := c.projectID()
	channels := c.sandboxChannels(project, platforms, 0)

	// 20 s: a 40 MiB file of 10 s would run at 34 Mbit/s, over Instagram's 25, and wait for a
	// conversion instead of uploading.
	video := mediatest.MP4(t, mediatest.Options{Duration: 20 * time.Second, Width: 1080, Height: 1920, Size: cc.size})
	sum, size := fileSHA256(t, video)
	caption := fmt.Sprintf("crash test %s #e2e", filepath.Base(t.Name()))
	fields := map[string]string{
		"project_id": project, "title": "Crash test", "caption": caption,
		"tiktok": `{"mode":"direct"}`,
	}
	var at time.Time
	if cc.schedule > 0 {
		at = time.Now().Add(cc.schedule).Truncate(time.Second).Add(time.Second)
		fields["scheduled_for"] = at.UTC().Format(time.RFC3339)
	}
	published := time.Now()
	id := c.publishForm(fields, video)
	t.Logf("post %s: %d bytes, sha256 %s, submitted in %s", id, size, sum, time.Since(published).Round(time.Millisecond))
	if cc.schedule > 0 {
		_, post, err := c.do("GET", "/api/v1/posts/"+id, nil, "", nil)
		if err != nil || post["status"] != "scheduled" {
			t.Fatalf("post %s is not scheduled: %v %v", id, err, post)
		}
	}

	// Every platform receives the video at once; the server dies while they do.
	started := time.Now()
	for _, p := range platforms {
		select {
		case <-h.uploadStarted(p):
		case <-time.After(cc.schedule + 60*time.Second):
			t.Fatalf("%s received no upload bytes within %s of the publish", p, time.Since(started).Round(time.Second))
		}
		if first := h.firstUpload(p); cc.schedule > 0 && first.Before(at) {
			t.Errorf("%s received the video at %s, before the scheduled %s", p, first.Format(time.RFC3339Nano), at.Format(time.RFC3339))
		}
	}
	time.Sleep(cc.killAfter)
	srv.proc.kill()
	h.note("---- reelay serve #1 killed with SIGKILL ----")
	for _, p := range platforms {
		s := h.snapshot(p)
		t.Logf("at the kill, %s had %d complete uploads and %d published items", p, len(s.Uploads), len(s.Published))
		if len(s.Uploads) != 0 {
			t.Errorf("%s had the whole video before the kill: the crash did not hit its upload, so this run proves nothing about it", p)
		}
	}
	// The rest of the uploads need not be slow.
	h.rate.Store(0)

	srv.restart()
	if strings.Contains(srv.proc.out.String(), "First start") {
		t.Errorf("the restarted server made a new first-start account: its database did not survive the crash")
	}
	post := c.waitSettled(id, 90*time.Second)
	if post["status"] != "published" {
		t.Errorf("post status %v after the restart, want published", post["status"])
	}
	checkReceivedOnce(t, h, post, channels, sum, size)
	if t.Failed() {
		t.Logf("post after the restart: %s", jsonText(post))
	}
}

// checkReceivedOnce checks that every platform's destination of post is published, and that
// its simulator received the whole video (sum, size) exactly once from the channel's account
// and published it exactly once.
func checkReceivedOnce(t *testing.T, h *simHost, post map[string]any, channels map[string]channel, sum string, size int64) {
	t.Helper()
	results := map[string]map[string]any{}
	for _, r := range post["publish_results"].([]any) {
		d := r.(map[string]any)
		results[d["platform"].(string)] = d
	}
	// One subtest per platform, so that a failure names the platform at fault.
	for _, p := range platforms {
		t.Run(p, func(t *testing.T) {
			d := results[p]
			if d == nil {
				t.Fatalf("no %s destination in %s", p, jsonText(post))
			}
			if d["upload_status"] != "published" || d["id"] == nil {
				t.Errorf("destination: upload_status %v, id %v, error_category %v, error %v, message %v",
					d["upload_status"], d["id"], d["error_category"], d["error"], d["message"])
			}
			s := h.snapshot(p)
			account := channels[p].Account
			var uploads, items int
			for _, u := range s.Uploads {
				if u.Account != account || u.SHA256 != sum || u.Bytes != size {
					t.Errorf("unexpected upload %+v (want account %s, %d bytes, sha256 %s)", u, account, size, sum)
					continue
				}
				uploads++
			}
			for _, x := range s.Published {
				if x.Account != account || x.SHA256 != sum {
					t.Errorf("unexpected published item %+v", x)
					continue
				}
				items++
			}
			if uploads != 1 || items != 1 {
				t.Errorf("the simulator received the whole video %d times and published it %d times, want exactly once each", uploads, items)
			}
		})
	}
}

// TestCrashDuringUpload kills the server (SIGKILL) while YouTube and TikTok receive chunks of a
// 40 MB video and Instagram downloads it from the server's media link, restarts it on the same
// SQLite database, and checks that every platform got the video exactly once and published it
// exactly once.
func TestCrashDuringUpload(t *testing.T) {
	t.Parallel()
	runCrash(t, crashCase{killAfter: 1500 * time.Millisecond, size: 40 << 20})
}

// TestCrashDuringScheduledFire schedules a post a few seconds ahead, kills the server as soon
// as the platforms start receiving the video at the scheduled time, restarts it, and checks
// the same.
func TestCrashDuringScheduledFire(t *testing.T) {
	t.Parallel()
	runCrash(t, crashCase{schedule: 3 * time.Second, killAfter: 0, size: 24 << 20})
}
