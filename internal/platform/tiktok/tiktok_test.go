package tiktok

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	mb  = 1000 * 1000
	mib = 1 << 20
)

// accounts is one creator of an audited app, which may post with any of the creator's
// privacy levels (TestUnauditedApp has the new app's rules).
func accounts() sim.StaticAccounts {
	return sim.StaticAccounts{"tok": {ID: "open_1", Username: "reelaydemo", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited}}}
}

func TestPlanChunks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size, preferred int64
		chunk           int64
		count           int
	}{
		{size: 1, chunk: 1, count: 1},
		{size: 4*mib + 3, chunk: 4*mib + 3, count: 1}, // under 5 MB: whole
		{size: 5 * mb, chunk: 5 * mb, count: 1},
		{size: 10 * mb, chunk: 10 * mb, count: 1},
		{size: 10 * mib, chunk: 10 * mib, count: 1},
		{size: 20*mb - 1, chunk: 20*mb - 1, count: 1},
		{size: 20 * mb, chunk: 10 * mb, count: 2},
		{size: 50_000_123, chunk: 10 * mb, count: 5}, // TikTok's worked example
		{size: 73 * mb, chunk: 10 * mb, count: 7},
		{size: 73 * mib, chunk: 10 * mb, count: 7},
		{size: 64 * mb, preferred: 64 * mb, chunk: 64 * mb, count: 1},
		{size: 64*mb + 1, preferred: 64 * mb, chunk: 32 * mb, count: 2}, // over 64 MB: never one chunk
		{size: 127 * mb, preferred: 64 * mb, chunk: 63_500_000, count: 2},
		{size: 4000 * mb, chunk: 10 * mb, count: 400},
		{size: 1 * mb, preferred: 1, chunk: 1 * mb, count: 1},
		{size: 30 * mb, preferred: 1, chunk: 5 * mib, count: 5}, // preferred raised to 5 MiB
		{size: 300 * mb, preferred: 100 * mb, chunk: 64 * mb, count: 4},
	} {
		p, err := PlanChunks(c.size, c.preferred)
		if err != nil {
			t.Errorf("PlanChunks(%d, %d): %v", c.size, c.preferred, err)
			continue
		}
		if p.ChunkSize != c.chunk || p.ChunkCount != c.count {
			t.Errorf("PlanChunks(%d, %d) = %d×%d, want %d×%d", c.size, c.preferred, p.ChunkCount, p.ChunkSize, c.count, c.chunk)
		}
		// The documented rules, in both readings of MB.
		if int64(p.ChunkCount) != p.VideoSize/p.ChunkSize {
			t.Errorf("%d: count %d is not floor(size/chunk)", c.size, p.ChunkCount)
		}
		if p.ChunkCount > 1 && (p.ChunkSize < 5*mib || p.ChunkSize > 64*mb || p.last() >= 128*mb) {
			t.Errorf("%d: chunk %d or last %d out of range", c.size, p.ChunkSize, p.last())
		}
		if p.ChunkCount == 1 && (p.ChunkSize != p.VideoSize || p.VideoSize > 64*mb) {
			t.Errorf("%d: single chunk of %d", c.size, p.ChunkSize)
		}
		var sum int64
		for i := range p.ChunkCount {
			first, n := p.Range(i)
			if first != sum {
				t.Errorf("%d: chunk %d starts at %d, want %d", c.size, i, first, sum)
			}
			sum += n
		}
		if sum != c.size {
			t.Errorf("%d: chunks cover %d bytes", c.size, sum)
		}
	}
	if _, err := PlanChunks(0, 0); err == nil {
		t.Error("PlanChunks(0) succeeded")
	}
}

func TestParseProgress(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]int64{
		"bytes 0-9999999/50000123": {9999999, 10000000},
		"bytes */50000123":         {0, 0},
		"bytes 0-x/3":              {-1, -1},
		"nonsense":                 {-1, -1},
	} {
		if a, b := parseProgress(in); a != want[0] || b != want[1] {
			t.Errorf("parseProgress(%q) = %d, %d, want %v", in, a, b, want)
		}
	}
}

// TestDirectPublish publishes directly at several sizes and checks the chunks that reached the
// simulator, the one complete upload and its hash, and the published post.
func TestDirectPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		size   int64
		ranges []string
	}{
		{"under 5 MB", 3 * mb, []string{"bytes 0-2999999/3000000"}},
		{"exactly 10 MB", 10 * mb, []string{"bytes 0-9999999/10000000"}},
		{"73 MB", 73 * mb, []string{
			"bytes 0-9999999/73000000", "bytes 10000000-19999999/73000000", "bytes 20000000-29999999/73000000",
			"bytes 30000000-39999999/73000000", "bytes 40000000-49999999/73000000", "bytes 50000000-59999999/73000000",
			"bytes 60000000-72999999/73000000",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if testing.Short() && c.size > 20*mb {
				t.Skip("large upload")
			}
			e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
			v := providertest.NewVideo(c.size, 12*time.Second, 1080, 1920)
			d := e.dest("tok", v.Media(),
				`{"mode":"direct","title":"Hello #tiktok 🎬","privacy_level":"PUBLIC_TO_EVERYONE","is_aigc":true,"allow_duet":false}`)

			// The first step stores publish_id and upload_url before any byte is sent.
			out, err := e.step(d)
			if err != nil {
				t.Fatal(err)
			}
			st := stateOf(t, out.State)
			if out.Status != provider.StatusUploading || st.PublishID == "" || !strings.HasPrefix(st.UploadURL, e.BaseURL+"/video/") ||
				st.NextChunk != 0 || st.TotalChunks != len(c.ranges) {
				t.Fatalf("after init: %s %+v", out.Status, st)
			}
			if n := len(e.Requests(http.MethodPut, "/video/")); n != 0 {
				t.Fatalf("%d chunks sent by the init step", n)
			}

			out, err = e.run(d, 40)
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != provider.StatusPublished {
				t.Fatalf("status %s", out.Status)
			}
			post, _ := e.sim.Post(st.PublishID)
			wantURL := "https://www.tiktok.com/@reelaydemo/video/" + post.PostID
			if post.PostID == "" || out.URL != wantURL || out.ExternalID != post.PostID {
				t.Errorf("outcome %+v, want URL %s", out, wantURL)
			}
			var got []string
			for _, r := range e.Requests(http.MethodPut, "/video/") {
				got = append(got, r.Header.Get("Content-Range"))
			}
			if strings.Join(got, ",") != strings.Join(c.ranges, ",") {
				t.Errorf("chunks sent:\n%v\nwant\n%v", got, c.ranges)
			}
			rec := e.sim.Recorder().Snapshot(nil)
			if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != c.size || rec.Uploads[0].Account != "open_1" {
				t.Errorf("uploads %+v, want one of %s", rec.Uploads, v.SHA256())
			}
			if len(rec.Published) != 1 || rec.Published[0].URL != wantURL || rec.Published[0].Text != "Hello #tiktok 🎬" {
				t.Errorf("published %+v", rec.Published)
			}
			if post.PrivacyLevel != PrivacyPublic || !post.IsAIGC || !post.DisableDuet || post.DisableComment || post.DisableStitch {
				t.Errorf("post settings %+v", post)
			}
		})
	}
}

func TestInboxMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
	v := providertest.NewVideo(2*mb, 8*time.Second, 720, 1280)
	d := e.dest("tok", v.Media(), `{}`) // inbox is the default mode (docs/CONTRACT.md)
	out, err := e.run(d, 20)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != provider.StatusSentToInbox || !out.Done() || out.URL != "" ||
		!strings.Contains(out.Message, "not published until the creator") || !strings.Contains(out.Message, "TikTok app") {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(e.Requests(http.MethodPost, "/v2/post/publish/inbox/video/init/")); n != 1 {
		t.Errorf("%d inbox inits", n)
	}
	if n := len(e.Requests(http.MethodPost, "/v2/post/publish/video/init/")); n != 0 {
		t.Errorf("%d direct inits", n)
	}
	rec := e.sim.Recorder().Snapshot(nil)
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 0 {
		t.Errorf("record %+v", rec)
	}
}

// TestRefusedBeforeUpload covers what the provider refuses before anything is uploaded.
func TestRefusedBeforeUpload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		creator  *tiktoksim.Creator
		options  string
		dur      time.Duration
		category string
		message  string
		inits    int
	}{
		{
			name:     "privacy level not offered to an unaudited creator",
			creator:  &tiktoksim.Creator{PrivacyLevelOptions: []string{"SELF_ONLY"}},
			options:  `{"mode":"direct","privacy_level":"PUBLIC_TO_EVERYONE"}`,
			category: provider.CategoryInvalidOptions,
			message:  "it allows SELF_ONLY",
		},
		{
			name:     "title over 2200 UTF-16 units",
			options:  `{"mode":"direct","title":"` + strings.Repeat("😀", 1101) + `"}`,
			category: provider.CategoryInvalidOptions,
			message:  "2202 UTF-16 units",
		},
		{
			name:     "longer than the creator may post",
			creator:  &tiktoksim.Creator{MaxVideoPostDurationSec: 60},
			options:  `{"mode":"direct"}`,
			dur:      90 * time.Second,
			category: provider.CategoryMediaRejected,
			message:  "at most 1m0s",
		},
		{
			name:     "longer than any upload",
			options:  `{"mode":"inbox"}`,
			dur:      11 * time.Minute,
			category: provider.CategoryMediaRejected,
			message:  "at most 10m0s",
		},
		{
			name:     "unknown mode",
			options:  `{"mode":"draft"}`,
			category: provider.CategoryInvalidOptions,
			message:  "not inbox or direct",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
			if c.creator != nil {
				e.sim.SetCreator("open_1", *c.creator)
			}
			dur := c.dur
			if dur == 0 {
				dur = 10 * time.Second
			}
			v := providertest.NewVideo(mb, dur, 1080, 1920)
			_, err := e.step(e.dest("tok", v.Media(), c.options))
			providertest.WantError(t, err, c.category, false, c.message)
			if n := len(e.Requests(http.MethodPost, "/init/")); n != c.inits {
				t.Errorf("%d inits", n)
			}
			if n := len(e.Requests(http.MethodPut, "/video/")); n != 0 {
				t.Errorf("%d chunks sent", n)
			}
		})
	}
}

func TestTitleAtLimitAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
	title := strings.Repeat("😀", 1100) // 2200 UTF-16 units
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	out, err := e.run(e.dest("tok", v.Media(), `{"mode":"direct","title":"`+title+`"}`), 20)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("%+v %v", out, err)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Published) != 1 || rec.Published[0].Text != title {
		t.Errorf("published %+v", rec.Published)
	}
}

// TestCreatorSettingsWin: interactions the creator turned off stay off, and the outcome says so.
func TestCreatorSettingsWin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: time.Hour}, Config{})
	e.sim.SetCreator("open_1", tiktoksim.Creator{CommentDisabled: true, StitchDisabled: true,
		PrivacyLevelOptions: []string{"FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"}})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	d := e.dest("tok", v.Media(), `{"mode":"direct","privacy_level":"SELF_ONLY"}`)
	out, err := e.run(d, 20)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("%+v %v", out, err)
	}
	st := stateOf(t, out.State)
	post, _ := e.sim.Post(st.PublishID)
	if !post.DisableComment || !post.DisableStitch || post.DisableDuet {
		t.Errorf("post %+v", post)
	}
	// A private post never gets a public id: published, with no link, and said so.
	if out.URL != "" || out.ExternalID != st.PublishID || !strings.Contains(out.Message, "no public link") ||
		!strings.Contains(out.Message, "Comments are off") {
		t.Errorf("outcome %+v", out)
	}
}

func TestModerationPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: time.Hour}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	out, err := e.run(e.dest("tok", v.Media(), `{"mode":"direct"}`), 20)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("%+v %v", out, err)
	}
	if out.URL != "" || !strings.Contains(out.Message, "moderation") {
		t.Errorf("outcome %+v", out)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
	}{
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true},
		{sim.FailAuth, provider.CategoryAuthExpired, false},
		{sim.FailRateLimit, provider.CategoryRateLimited, true},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			acc := sim.StaticAccounts{"tok": {ID: "open_1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: c.fail}}}
			e := newEnv(t, acc, tiktoksim.Options{}, Config{})
			v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
			_, err := e.step(e.dest("tok", v.Media(), `{"mode":"direct"}`))
			pe := providertest.WantError(t, err, c.category, c.transient, "")
			if c.fail == sim.FailRateLimit && pe.RetryAfter != time.Second {
				t.Errorf("RetryAfter %s", pe.RetryAfter)
			}
		})
	}
}

func TestUnknownToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	_, err := e.step(e.dest("expired", v.Media(), `{}`))
	if pe := providertest.WantError(t, err, provider.CategoryAuthExpired, false, "access_token_invalid"); pe.Status != http.StatusUnauthorized {
		t.Fatalf("error %v", pe)
	}
}

// TestFlaky: every third call fails with a 5xx, chunks included; steps retried after the
// transient errors still publish, and once.
func TestFlaky(t *testing.T) {
	t.Parallel()
	acc := sim.StaticAccounts{"tok": {ID: "open_1", Username: "u", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailFlaky, FailRate: 0.5}}}
	var n atomic.Int64
	rnd := func() float64 {
		if n.Add(1)%3 == 1 {
			return 0.1 // below FailRate: this call fails
		}
		return 0.9
	}
	e := newEnvRand(t, acc, tiktoksim.Options{ModerationDelay: -1}, Config{Repeat: provider.Repeat{Tries: 1}}, rnd)
	v := providertest.NewVideo(25*mb, 5*time.Second, 1080, 1920)
	d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
	var out provider.Outcome
	var err error
	transient := 0
	for range 60 {
		out, err = e.step(d)
		if err != nil {
			if pe := providertest.AsError(t, err); !pe.Transient {
				t.Fatalf("permanent error %v", pe)
			}
			transient++
			continue
		}
		if out.Done() {
			break
		}
		e.Clock.Advance(out.After)
	}
	if out.Status != provider.StatusPublished || transient == 0 {
		t.Fatalf("outcome %+v after %d transient errors (last %v)", out, transient, err)
	}
	rec := e.sim.Recorder().Snapshot(nil)
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 {
		t.Errorf("record %+v", rec)
	}
	if n := len(e.Requests(http.MethodPost, "/video/init/")); n != 1 {
		t.Errorf("%d inits", n)
	}
}

func TestReject(t *testing.T) {
	t.Parallel()
	acc := sim.StaticAccounts{"tok": {ID: "open_1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailReject, ProcessingMS: 500}}}
	e := newEnv(t, acc, tiktoksim.Options{}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	_, err := e.run(e.dest("tok", v.Media(), `{"mode":"direct"}`), 20)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "file_format_check_failed")
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Uploads) != 1 || len(rec.Published) != 0 {
		t.Errorf("record %+v", rec)
	}
}

// TestVideoCheckedByTikTok: a video the provider cannot judge (no duration known) is refused
// by TikTok after the upload.
func TestVideoCheckedByTikTok(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
	v := providertest.NewVideo(mb, 2*time.Second, 1080, 1920)
	m := v.Media()
	m.Duration, m.Width, m.Height = 0, 0, 0 // not probed
	_, err := e.run(e.dest("tok", m, `{"mode":"direct"}`), 20)
	if pe := providertest.AsError(t, err); pe.Category != provider.CategoryMediaRejected || !strings.Contains(pe.Message, "duration_check_failed") {
		t.Fatalf("error %v", pe)
	}
}

// failingMedia fails reading after failAfter bytes of the chunk that starts at failAt, once.
type failingMedia struct {
	v         *providertest.Video
	failAt    int64
	failAfter int64
	done      bool
}

func (f *failingMedia) open(ctx context.Context, off int64) (io.ReadCloser, error) {
	rc, _ := f.v.Media().Open(ctx, off)
	if off != f.failAt || f.done {
		return rc, nil
	}
	f.done = true
	return io.NopCloser(io.MultiReader(io.LimitReader(rc, f.failAfter), errReader{})), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk read failed") }

// TestCrashResume stops the upload at several points and resumes from an older stored State,
// as a restarted worker would: the upload completes, and exactly one complete upload with the
// right hash reaches TikTok.
func TestCrashResume(t *testing.T) {
	t.Parallel()
	const size = 35 * mb // 3 chunks: 10, 10, 15 MB
	for _, c := range []struct {
		name string
		// resumeFrom is the step (0 = init) whose stored State the crashed worker left behind;
		// crashAfter is how many steps actually ran before the crash.
		resumeFrom, crashAfter int
		midChunk               bool
	}{
		{name: "state of chunk 2 lost", resumeFrom: 1, crashAfter: 2},
		{name: "state of chunks 1 and 2 lost", resumeFrom: 0, crashAfter: 2},
		{name: "201 answered but not stored", resumeFrom: 2, crashAfter: 3},
		{name: "connection lost mid-chunk", resumeFrom: 1, crashAfter: 2, midChunk: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{Repeat: provider.Repeat{Tries: 1}})
			v := providertest.NewVideo(size, 30*time.Second, 1080, 1920)
			fm := &failingMedia{v: v, failAt: 10 * mb, failAfter: 3 * mb, done: !c.midChunk}
			m := v.Media()
			m.Open = fm.open
			d := e.dest("tok", m, `{"mode":"direct"}`)
			var states [][]byte
			for i := 0; i <= c.crashAfter; i++ {
				out, err := e.step(d)
				if c.midChunk && i == c.crashAfter {
					if err == nil {
						t.Fatalf("step %d: no error from a broken chunk", i)
					}
					break
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				states = append(states, out.State)
			}
			// The worker restarts from an older State.
			d.State = states[c.resumeFrom]
			out, err := e.run(d, 30)
			if err != nil || out.Status != provider.StatusPublished {
				t.Fatalf("after resume: %+v %v", out, err)
			}
			rec := e.sim.Recorder().Snapshot(nil)
			if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != size {
				t.Errorf("uploads %+v, want one with %s", rec.Uploads, v.SHA256())
			}
			if len(rec.Published) != 1 {
				t.Errorf("published %+v", rec.Published)
			}
			if n := len(e.Requests(http.MethodPost, "/video/init/")); n != 1 {
				t.Errorf("%d inits", n)
			}
			if !c.midChunk && c.resumeFrom < c.crashAfter {
				if n := len(e.Requests(http.MethodPut, "/video/")); n < 4 {
					t.Errorf("only %d PUTs: the lost chunk was not sent again", n)
				}
			}
		})
	}
}

// TestUploadURLExpired: an upload that outlives its URL starts over with a new init, and
// TikTok still receives one complete upload.
func TestUploadURLExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	v := providertest.NewVideo(25*mb, 5*time.Second, 1080, 1920)
	d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
	for range 2 { // init, chunk 1
		if _, err := e.step(d); err != nil {
			t.Fatal(err)
		}
	}
	first := stateOf(t, d.State).PublishID
	e.Clock.Advance(2 * time.Hour)
	out, err := e.run(d, 30)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("%+v %v", out, err)
	}
	st := stateOf(t, out.State)
	if st.PublishID == first || st.Restarts != 1 {
		t.Errorf("state %+v", st)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() {
		t.Errorf("uploads %+v", rec.Uploads)
	}
}

// TestURLExpiredAfterCompleteUpload: the upload completed but its 201 was lost and the URL has
// expired since; the status fetch says TikTok has every byte, so nothing is sent again.
func TestURLExpiredAfterCompleteUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	v := providertest.NewVideo(3*mb, 5*time.Second, 1080, 1920)
	d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
	out, err := e.step(d) // init
	if err != nil {
		t.Fatal(err)
	}
	afterInit := out.State
	if out, err = e.step(d); err != nil || out.Status != provider.StatusProcessing {
		t.Fatalf("%+v %v", out, err)
	}
	d.State = afterInit
	e.Clock.Advance(3 * time.Hour)
	out, err = e.run(d, 10)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("%+v %v", out, err)
	}
	if n := len(e.Requests(http.MethodPut, "/video/")); n != 1 {
		t.Errorf("%d PUTs", n)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Uploads) != 1 {
		t.Errorf("uploads %+v", rec.Uploads)
	}
}

func TestDailyCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{PostsPerDay: 2}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	for i := range 3 {
		_, err := e.step(e.dest("tok", v.Media(), `{"mode":"direct"}`))
		if i < 2 {
			if err != nil {
				t.Fatalf("post %d: %v", i, err)
			}
			continue
		}
		providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "spam_risk_too_many_posts")
	}
}

func TestInitRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	for i := range 7 {
		_, err := e.step(e.dest("tok", v.Media(), `{"mode":"direct"}`))
		if i < 6 {
			if err != nil {
				t.Fatalf("init %d: %v", i, err)
			}
			e.Clock.Advance(time.Second)
			continue
		}
		pe := providertest.AsError(t, err)
		if pe.Category != provider.CategoryRateLimited || !pe.Transient || pe.Status != http.StatusTooManyRequests ||
			pe.RetryAfter != 54*time.Second { // the first of the six left the window 54 s later
			t.Fatalf("error %v (retry after %s)", pe, pe.RetryAfter)
		}
	}
	e.Clock.Advance(54 * time.Second)
	if _, err := e.step(e.dest("tok", v.Media(), `{"mode":"direct"}`)); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// TestDoneStateIsStable: a Step on a finished destination answers the same outcome.
func TestDoneStateIsStable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{ModerationDelay: -1}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
	out, err := e.run(d, 20)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.step(d)
	if err != nil || again.Status != out.Status || again.URL != out.URL || again.ExternalID != out.ExternalID {
		t.Fatalf("%+v %v, want %+v", again, err, out)
	}
	if got := fmt.Sprint(len(e.sim.Recorder().Snapshot(nil).Uploads)); got != "1" {
		t.Errorf("uploads %s", got)
	}
}

// TestOptions: creator_info fills the static options key by key, and a rejected token is
// auth_expired like a rejected publish.
func TestOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.StaticAccounts{
		"tok":     {ID: "open_1", Username: "reelaydemo", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited}},
		"private": {ID: "open_2", Username: "quiet"},
	}, tiktoksim.Options{Creators: map[string]tiktoksim.Creator{
		"open_2": {Nickname: "Quiet One", CommentDisabled: true, DuetDisabled: true,
			PrivacyLevelOptions: []string{"SELF_ONLY"}, MaxVideoPostDurationSec: 180},
	}}, Config{})
	option := func(t *testing.T, opts map[string]any, key string) map[string]any {
		t.Helper()
		o, ok := opts[key].(map[string]any)
		if !ok {
			t.Fatalf("no option %q in %+v", key, opts)
		}
		return o
	}

	opts, err := e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if acc := option(t, opts, "account"); acc["username"] != "reelaydemo" || acc["name"] != "reelaydemo" ||
		acc["avatar_url"] != e.BaseURL+"/avatar/open_1.jpeg" {
		t.Errorf("account %+v", acc)
	}
	if p := option(t, opts, "privacy_level"); fmt.Sprint(p["choices"]) != "[PUBLIC_TO_EVERYONE MUTUAL_FOLLOW_FRIENDS SELF_ONLY]" ||
		p["default"] != PrivacyPublic || p["required"] != nil {
		t.Errorf("privacy_level %+v", p)
	}
	if m := option(t, opts, "mode"); fmt.Sprint(m["choices"]) != "[inbox direct]" || m["default"] != ModeInbox {
		t.Errorf("mode %+v", m)
	}
	for _, k := range []string{"allow_comment", "allow_duet", "allow_stitch"} {
		if o := option(t, opts, k); o["default"] != true || o["choices"] != nil {
			t.Errorf("%s %+v", k, o)
		}
	}
	if d := option(t, opts, "max_video_post_duration_sec"); d["default"] != 600 {
		t.Errorf("max_video_post_duration_sec %+v", d)
	}
	if option(t, opts, "is_aigc")["default"] != false {
		t.Errorf("is_aigc %+v", opts["is_aigc"])
	}

	// An empty baseURL is the configured one.
	p := New(Config{BaseURL: e.BaseURL + "/", HTTPClient: e.prov.cfg.HTTPClient, Now: e.Clock.Now})
	opts, err = p.Options(context.Background(), "", map[string]string{"access_token": "private"})
	if err != nil {
		t.Fatal(err)
	}
	if acc := option(t, opts, "account"); acc["username"] != "quiet" || acc["name"] != "Quiet One" {
		t.Errorf("account %+v", acc)
	}
	if p := option(t, opts, "privacy_level"); fmt.Sprint(p["choices"]) != "[SELF_ONLY]" || p["default"] != nil || p["required"] != true {
		t.Errorf("privacy_level %+v", p)
	}
	for k, off := range map[string]bool{"allow_comment": true, "allow_duet": true, "allow_stitch": false} {
		o := option(t, opts, k)
		if off && (o["default"] != false || fmt.Sprint(o["choices"]) != "[false]") || !off && o["default"] != true {
			t.Errorf("%s %+v", k, o)
		}
	}
	if d := option(t, opts, "max_video_post_duration_sec"); d["default"] != 180 {
		t.Errorf("max_video_post_duration_sec %+v", d)
	}
	if n := len(e.Requests(http.MethodPost, pathCreatorInfo)); n != 2 {
		t.Errorf("%d creator_info calls, want 2", n)
	}

	for _, creds := range []map[string]string{{"access_token": "expired"}, {}} {
		_, err = e.prov.Options(context.Background(), e.BaseURL, creds)
		if pe := providertest.AsError(t, err); pe.Category != provider.CategoryAuthExpired || pe.Transient {
			t.Errorf("credentials %v: error %v", creds, pe)
		}
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	accts := sim.StaticAccounts{
		"tok":     {ID: "open_1", Username: "reelaydemo", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited}},
		"basic":   {ID: "open_2", Username: "basicuser"},
		"inbox":   {ID: "open_3", Username: "inboxonly"},
		"noinfo":  {ID: "open_4", Username: "noinfo"},
		"revoked": {ID: "open_5", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailAuth}},
		"down":    {ID: "open_6", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailUnavailable}},
		"busy":    {ID: "open_7", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailRateLimit}},
	}
	e := newEnv(t, accts, tiktoksim.Options{
		Creators: map[string]tiktoksim.Creator{"open_1": {Nickname: "Reelay Demo"}},
		Scopes: map[string][]string{
			"open_2": {"user.info.basic", "video.publish", "video.upload"}, // no user.info.profile
			"open_3": {"user.info.basic", "video.upload"},                  // neither profile nor creator_info
			"open_4": {"video.publish", "video.upload"},                    // no user.info.basic
		},
	}, Config{})
	identify := func(token string) (provider.Identity, error) {
		return e.prov.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": token})
	}

	id, err := identify("tok")
	want := provider.Identity{ExternalID: "open_1", Name: "Reelay Demo", Username: "reelaydemo", AvatarURL: e.BaseURL + "/avatar/open_1.jpeg"}
	if err != nil || id != want {
		t.Fatalf("identity %+v, %v; want %+v", id, err, want)
	}
	if n := len(e.Requests(http.MethodGet, "/v2/user/info/")); n != 1 {
		t.Errorf("%d user info calls", n)
	}
	// Without user.info.profile TikTok refuses username: the basic fields, and the username
	// from creator_info.
	if id, err := identify("basic"); err != nil || id.ExternalID != "open_2" || id.Username != "basicuser" || id.Name != "basicuser" {
		t.Errorf("user.info.basic only: %+v, %v", id, err)
	}
	// Without video.publish either: no username, the rest is there.
	if id, err := identify("inbox"); err != nil || id.ExternalID != "open_3" || id.Username != "" || id.Name != "inboxonly" || id.AvatarURL == "" {
		t.Errorf("user.info.basic and video.upload: %+v, %v", id, err)
	}
	// The identity is the creator that Step publishes as.
	v := providertest.NewVideo(2*mb, 8*time.Second, 720, 1280)
	d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
	d.Account = id.ExternalID
	if out, err := e.run(d, 30); err != nil || !out.Done() {
		t.Fatalf("publish as the identified creator: %+v, %v", out, err)
	}
	if posts := e.sim.Posts(id.ExternalID); len(posts) != 1 || posts[0].Status != tiktoksim.PublishComplete {
		t.Fatalf("posts of %s: %+v", id.ExternalID, posts)
	}

	for _, c := range []struct {
		token, category string
		transient       bool
		contains        string
	}{
		{"nobody", provider.CategoryAuthExpired, false, "access_token_invalid"},
		{"revoked", provider.CategoryAuthExpired, false, "access_token_invalid"},
		{"noinfo", provider.CategoryAuthExpired, false, "scope_not_authorized"},
		{"", provider.CategoryAuthExpired, false, "no access token"},
		{"down", provider.CategoryUpstreamUnavailable, true, "internal_error"},
		{"busy", provider.CategoryRateLimited, true, "rate_limit_exceeded"},
	} {
		_, err := identify(c.token)
		pe := providertest.AsError(t, err)
		if pe.Category != c.category || pe.Transient != c.transient || !strings.Contains(pe.Message, c.contains) {
			t.Errorf("%q: %+v", c.token, pe)
		}
	}
}

// A token with video.upload alone (no video.publish) cannot read creator_info: an inbox upload
// goes ahead without it.
func TestInboxWithUploadScopeOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, accounts(), tiktoksim.Options{Scopes: map[string][]string{"open_1": {"video.upload"}}}, Config{})
	v := providertest.NewVideo(2*mb, 8*time.Second, 720, 1280)
	out, err := e.run(e.dest("tok", v.Media(), `{}`), 20)
	if err != nil || out.Status != provider.StatusSentToInbox || !strings.Contains(out.Message, "video.upload scope only") {
		t.Fatalf("inbox: %+v, %v", out, err)
	}
	// A direct post needs video.publish.
	_, err = e.run(e.dest("tok", v.Media(), `{"mode":"direct"}`), 20)
	if pe := providertest.AsError(t, err); pe.Category != provider.CategoryAuthExpired || !strings.Contains(pe.Message, "scope_not_authorized") {
		t.Fatalf("direct: %+v", pe)
	}
}

// TestStatusFetchSchedule: the first status fetch follows the last chunk at once, and a video
// that takes minutes to process is polled within the status fetch's 30 requests per minute
// and token, however long it takes.
func TestStatusFetchSchedule(t *testing.T) {
	t.Parallel()
	for _, processing := range []time.Duration{0, 3 * time.Second, 5 * time.Minute} {
		t.Run(processing.String(), func(t *testing.T) {
			t.Parallel()
			acc := sim.StaticAccounts{"tok": {ID: "open_1", Username: "u", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, ProcessingMS: int(processing.Milliseconds())}}}
			e := newEnv(t, acc, tiktoksim.Options{ModerationDelay: -1}, Config{})
			v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
			d := e.dest("tok", v.Media(), `{"mode":"direct"}`)
			start := e.Clock.Now()
			var uploaded time.Time // when the last chunk was accepted
			var fetches []time.Duration
			for range 200 {
				before := len(e.Requests(http.MethodPost, pathStatus))
				now := e.Clock.Now()
				out, err := e.step(d)
				if err != nil {
					t.Fatalf("step at %s: %v", now.Sub(start), err)
				}
				if len(e.Requests(http.MethodPost, pathStatus)) > before {
					fetches = append(fetches, now.Sub(start))
				}
				if uploaded.IsZero() && out.Status == provider.StatusProcessing {
					uploaded = now
				}
				if out.Done() {
					if out.Status != provider.StatusPublished {
						t.Fatalf("outcome %+v", out)
					}
					break
				}
				e.Clock.Advance(out.After)
			}
			if len(fetches) == 0 || fetches[0] != uploaded.Sub(start) {
				t.Fatalf("status fetches at %v; the last chunk went at %s", fetches, uploaded.Sub(start))
			}
			if last := fetches[len(fetches)-1]; last-fetches[0] < processing {
				t.Errorf("published after %s of processing; want at least %s", last-fetches[0], processing)
			}
			for i := range fetches {
				n := 0
				for _, f := range fetches[i:] {
					if f-fetches[i] < time.Minute {
						n++
					}
				}
				if n > 30 {
					t.Fatalf("%d status fetches in the minute from %s (all: %v)", n, fetches[i], fetches)
				}
			}
			if processing == 5*time.Minute {
				t.Logf("%d status fetches for 5 minutes of processing: %v", len(fetches), fetches)
			}
		})
	}
}

// TestUnauditedApp: TikTok refuses a direct post from an app it has not audited unless it is
// SELF_ONLY; the error is invalid_options and says why and how to fix it. SELF_ONLY and inbox
// uploads go through, and the channel's options say what the app may use.
func TestUnauditedApp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.StaticAccounts{"tok": {ID: "open_1", Username: "fresh"}}, tiktoksim.Options{ModerationDelay: -1}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)

	for _, privacy := range []string{"", PrivacyPublic, PrivacyFriends} {
		options := `{"mode":"direct"}`
		asked := PrivacyPublic // reelay's default
		if privacy != "" {
			options = `{"mode":"direct","privacy_level":"` + privacy + `"}`
			asked = privacy
		}
		_, err := e.step(e.dest("tok", v.Media(), options))
		pe := providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "privacy_level "+asked)
		for _, want := range []string{"has not passed TikTok's audit", "only as SELF_ONLY", "submit the app for TikTok's audit",
			"tiktok.privacy_level SELF_ONLY", "unaudited_client_can_only_post_to_private_accounts"} {
			if !strings.Contains(pe.Message, want) {
				t.Errorf("%s: message %q lacks %q", asked, pe.Message, want)
			}
		}
	}
	if n := len(e.Requests(http.MethodPut, "/video/")); n != 0 {
		t.Errorf("%d chunks sent after refusals", n)
	}

	out, err := e.run(e.dest("tok", v.Media(), `{"mode":"direct","privacy_level":"SELF_ONLY"}`), 20)
	if err != nil || out.Status != provider.StatusPublished || !strings.Contains(out.Message, "privacy SELF_ONLY") {
		t.Fatalf("SELF_ONLY: %+v, %v", out, err)
	}
	if out, err := e.run(e.dest("tok", v.Media(), `{}`), 20); err != nil || out.Status != provider.StatusSentToInbox {
		t.Fatalf("inbox: %+v, %v", out, err)
	}

	opts, err := e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if note, _ := opts["privacy_level"].(map[string]any)["note"].(string); !strings.Contains(note, "until TikTok has audited the app") ||
		!strings.Contains(note, "only as SELF_ONLY") {
		t.Errorf("privacy_level note %q", note)
	}
}

// TestUnauditedAppPosters: a creator beyond the posting users TikTok allows an unaudited app
// in a day is refused before any byte is sent, saying what to do; a creator who already
// posted that day posts on.
func TestUnauditedAppPosters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.StaticAccounts{"first": {ID: "open_1"}, "second": {ID: "open_2"}},
		tiktoksim.Options{ModerationDelay: -1, UnauditedPostersPerDay: 1}, Config{})
	v := providertest.NewVideo(mb, 5*time.Second, 1080, 1920)
	selfOnly := `{"mode":"direct","privacy_level":"SELF_ONLY"}`
	if out, err := e.run(e.dest("first", v.Media(), selfOnly), 20); err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("the first creator: %+v, %v", out, err)
	}
	chunks := len(e.Requests(http.MethodPut, "/video/"))
	_, err := e.step(e.dest("second", v.Media(), selfOnly))
	pe := providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "has not passed TikTok's audit")
	for _, want := range []string{"at most 5 accounts", "tiktok.mode inbox", "reached_active_user_cap"} {
		if !strings.Contains(pe.Message, want) {
			t.Errorf("message %q lacks %q", pe.Message, want)
		}
	}
	if n := len(e.Requests(http.MethodPut, "/video/")); n != chunks {
		t.Errorf("%d chunks sent for the refused post", n-chunks)
	}
	if out, err := e.run(e.dest("second", v.Media(), `{}`), 20); err != nil || out.Status != provider.StatusSentToInbox {
		t.Fatalf("the second creator's inbox upload: %+v, %v", out, err)
	}
	if out, err := e.run(e.dest("first", v.Media(), selfOnly), 20); err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("the first creator again: %+v, %v", out, err)
	}
}
