package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
)

// Test videos, made by ffmpeg: four seconds (Instagram and Facebook take three at least) of a
// test pattern and a tone, small enough to encode in a second or two.
var (
	lavfiPicture = func(size string, fps int) []string {
		return []string{"-f", "lavfi", "-i", "testsrc2=s=" + size + ":r=" + strconv.Itoa(fps) + ":d=4"}
	}
	lavfiSound = []string{"-f", "lavfi", "-i", "sine=f=440:r=48000:d=4", "-ac", "2"}
	h264       = []string{"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k"}
	faststart  = []string{"-movflags", "+faststart"}
)

// makeVideo makes a test video with ffmpeg from parts of arguments.
func makeVideo(t *testing.T, name string, parts ...[]string) []byte {
	t.Helper()
	return rendertest.MakeBytes(t, name, slices.Concat(parts...)...)
}

// conversionEnv is an app env with sandbox channels on the platforms of the cases below.
func conversionEnv(t *testing.T, d store.Dialect, tune ...func(*config.Config)) (*env, map[string]string) {
	e := newAppEnv(t, d, tune...)
	ids := map[string]string{}
	for _, p := range []string{"youtube", "instagram", "tiktok", "facebook", "telegram", "discord"} {
		ids[p], _ = e.sandboxChannel(e.a, p, map[string]any{"processing_ms": 0})
	}
	return e, ids
}

// publishFile publishes video (uploaded) to the tenant's channels on platforms with extra
// fields, and answers the response.
func (e *env) publishFile(tn tenant, video []byte, platforms []string, extra map[string]string) *resp {
	e.t.Helper()
	list, _ := json.Marshal(platforms)
	fields := map[string]string{"project_id": tn.ProjectID, "title": "Clip", "caption": "A clip", "platforms": string(list),
		"tiktok": `{"mode":"direct"}`, "allow_duplicate": "true"}
	for k, v := range extra {
		fields[k] = v
	}
	body, ct := multipartBody(e.t, fields, map[string][]byte{"video": video})
	return e.do(req{Method: "POST", Path: "/api/v1/publish", Key: tn.Key, Body: body, Header: map[string]string{"Content-Type": ct}})
}

// results reads a post's destinations by platform.
func results(p map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _ := p["publish_results"].([]any)
	if list == nil {
		list, _ = p["platforms"].([]any)
	}
	for _, d := range list {
		d := d.(map[string]any)
		out[d["platform"].(string)] = d
	}
	return out
}

// uploadedSHA is the SHA-256 of the one file the platform's simulator received for the tenant.
func (e *env) uploadedSHA(tn tenant, platform string) string {
	e.t.Helper()
	up, _ := e.introspect(tn, platform)
	if len(up) != 1 {
		e.t.Fatalf("%s received %d uploads, want 1: %v", platform, len(up), up)
	}
	return up[0]["sha256"].(string)
}

// renditionKeys reads the rendition each destination of a post was planned with.
func (e *env) renditionKeys(tn tenant, postID string) map[string]string {
	e.t.Helper()
	p, err := e.st.GetPost(context.Background(), tn.AccountID, postID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range p.Destinations {
		out[d.Platform] = d.RenditionKey
	}
	return out
}

// TestConversionCases publishes the files platforms refuse as they are, each through the
// simulators (which refuse the unconverted file), and checks that every destination gets a
// file it accepts, made once and shared, or is refused up front saying why.
func TestConversionCases(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	e, _ := conversionEnv(t, store.SQLite)
	ctx := context.Background()
	// published waits for the post r answered, which must publish, and answers it.
	published := func(t *testing.T, a tenant, r *resp) (string, map[string]any) {
		t.Helper()
		if r.Code != http.StatusOK {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		id := r.JSON["post_id"].(string)
		p := e.waitPost(a, id, 2*time.Minute, func(p map[string]any) bool { return p["status"] != "processing" })
		if p["status"] != "published" {
			t.Fatalf("post %s: %s", id, mustJSON(p))
		}
		return id, p
	}
	conversion := func(p map[string]any, platform string) map[string]any {
		c, _ := results(p)[platform]["conversion"].(map[string]any)
		return c
	}

	t.Run("a 120 fps MP4 to Instagram and TikTok", func(t *testing.T) {
		a := e.newTenant("fps")
		for _, p := range []string{"instagram", "tiktok"} {
			e.sandboxChannel(a, p, map[string]any{"processing_ms": 0})
		}
		src := makeVideo(t, "120fps.mp4", lavfiPicture("540x960", 120), lavfiSound, h264, faststart)
		id, p := published(t, a, e.publishFile(a, src, []string{"instagram", "tiktok"}, nil))
		for _, pl := range []string{"instagram", "tiktok"} {
			c := conversion(p, pl)
			if c["action"] != "reencode" || !strings.Contains(strings.Join(anyStrings(c["changes"]), ";"), "60 fps") {
				t.Errorf("%s: conversion %v", pl, c)
			}
		}
		keys := e.renditionKeys(a, id)
		if keys["instagram"] == "" || keys["instagram"] != keys["tiktok"] {
			t.Errorf("renditions %v: want one shared by both", keys)
		}
		if ig, tt := e.uploadedSHA(a, "instagram"), e.uploadedSHA(a, "tiktok"); ig != tt || ig == sha(src) {
			t.Errorf("Instagram got %s, TikTok %s, the source is %s", ig, tt, sha(src))
		}
	})

	t.Run("an MP4 with moov at the end to Instagram", func(t *testing.T) {
		a := e.newTenant("moov")
		e.sandboxChannel(a, "instagram", map[string]any{"processing_ms": 0})
		src := makeVideo(t, "moovlast.mp4", lavfiPicture("540x960", 30), lavfiSound, h264)
		_, p := published(t, a, e.publishFile(a, src, []string{"instagram"}, nil))
		if c := conversion(p, "instagram"); c["action"] != "remux" {
			t.Errorf("conversion %v, want a remux", c)
		}
	})

	t.Run("a VP9 WebM to Instagram, Facebook and Telegram: one rendition", func(t *testing.T) {
		a := e.newTenant("webm")
		for _, p := range []string{"instagram", "facebook", "telegram"} {
			e.sandboxChannel(a, p, map[string]any{"processing_ms": 0})
		}
		src := makeVideo(t, "clip.webm", lavfiPicture("540x960", 30), lavfiSound,
			[]string{"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k", "-c:a", "libopus"})
		id, _ := published(t, a, e.publishFile(a, src, []string{"instagram", "facebook", "telegram"}, nil))
		keys := e.renditionKeys(a, id)
		if keys["instagram"] == "" || keys["instagram"] != keys["facebook"] || keys["facebook"] != keys["telegram"] {
			t.Errorf("renditions %v: want one shared by the three", keys)
		}
		shas := []string{e.uploadedSHA(a, "instagram"), e.uploadedSHA(a, "facebook"), e.uploadedSHA(a, "telegram")}
		if shas[0] != shas[1] || shas[1] != shas[2] {
			t.Errorf("the three received different files: %v", shas)
		}
		r, err := e.st.GetRendition(ctx, keys["instagram"])
		if err != nil || r.Status != store.RenditionReady {
			t.Fatalf("rendition %+v (%v)", r, err)
		}
		stored, err := os.ReadFile(filepath.Join(strings.TrimPrefix(e.cfg.BlobURL, "file://"), r.Output.BlobKey))
		if err != nil || sha(stored) != shas[0] {
			t.Errorf("the stored rendition (%v) is not what the platforms received", err)
		}
	})

	t.Run("VP9 in an MP4 to Instagram, which takes H.264 or HEVC", func(t *testing.T) {
		a := e.newTenant("codec")
		e.sandboxChannel(a, "instagram", map[string]any{"processing_ms": 0})
		src := makeVideo(t, "vp9.mp4", lavfiPicture("540x960", 30), lavfiSound,
			[]string{"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k", "-c:a", "aac"}, faststart)
		_, p := published(t, a, e.publishFile(a, src, []string{"instagram"}, nil))
		c := conversion(p, "instagram")
		if c["action"] != "reencode" || !strings.Contains(strings.Join(anyStrings(c["reasons"]), ";"), "is VP9 video") {
			t.Errorf("conversion %v", c)
		}
	})

	t.Run("HEVC to LinkedIn, which takes H.264 or VP8", func(t *testing.T) {
		a := e.newTenant("hevc")
		e.sandboxChannel(a, "linkedin", map[string]any{"processing_ms": 0})
		src := makeVideo(t, "hevc.mp4", lavfiPicture("540x960", 30), lavfiSound,
			[]string{"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p", "-tag:v", "hvc1", "-c:a", "aac"}, faststart)
		_, p := published(t, a, e.publishFile(a, src, []string{"linkedin"}, nil))
		c := conversion(p, "linkedin")
		if c["action"] != "reencode" || !strings.Contains(strings.Join(anyStrings(c["reasons"]), ";"), "HEVC") {
			t.Errorf("conversion %v", c)
		}
		if got := e.uploadedSHA(a, "linkedin"); got == sha(src) {
			t.Error("LinkedIn received the HEVC file itself")
		}
	})

	t.Run("a 30 MB MP4 to Discord", func(t *testing.T) {
		a := e.newTenant("discord")
		e.sandboxChannel(a, "discord", nil)
		// Constant 60 Mbit/s with filler: 4 s make 30 MB whatever the picture.
		src := makeVideo(t, "big.mp4", lavfiPicture("540x960", 30), lavfiSound, h264, faststart,
			[]string{"-b:v", "60M", "-minrate", "60M", "-maxrate", "60M", "-bufsize", "2M", "-x264-params", "nal-hrd=cbr:filler=1"})
		if len(src) < 25*platform.MB {
			t.Fatalf("the source is only %d bytes", len(src))
		}
		_, p := published(t, a, e.publishFile(a, src, []string{"discord"}, nil))
		up, _ := e.introspect(a, "discord")
		if len(up) != 1 || up[0]["bytes"].(float64) > 10*platform.MiB {
			t.Errorf("Discord received %v, want one file of at most 10 MiB", up)
		}
		if c := conversion(p, "discord"); !strings.Contains(strings.Join(anyStrings(c["changes"]), ";"), "to fit Discord's") {
			t.Errorf("conversion %v", c)
		}
	})

	t.Run("a 16:9 video to Facebook", func(t *testing.T) {
		a := e.newTenant("wide")
		e.sandboxChannel(a, "facebook", map[string]any{"processing_ms": 0})
		src := makeVideo(t, "wide.mp4", lavfiPicture("960x540", 30), lavfiSound, h264, faststart)
		r := e.publishFile(a, src, []string{"facebook"}, nil)
		if r.Code != http.StatusBadRequest || !strings.Contains(r.field("video"), "Facebook") || !strings.Contains(r.field("video"), `"fit"`) {
			t.Fatalf("the default fit: %d %s", r.Code, r.Body)
		}
		if up, _ := e.introspect(a, "facebook"); len(up) != 0 {
			t.Fatalf("a refused publish uploaded %v", up)
		}
		_, p := published(t, a, e.publishFile(a, src, []string{"facebook"}, map[string]string{"facebook": `{"fit":"pad"}`}))
		if c := conversion(p, "facebook"); !strings.Contains(strings.Join(anyStrings(c["changes"]), ";"), "black bars") {
			t.Errorf("conversion %v", c)
		}
	})

	t.Run("a 9:16 H.264 MP4 that fits everything", func(t *testing.T) {
		a := e.newTenant("fits")
		all := []string{"youtube", "instagram", "tiktok", "facebook", "telegram", "discord"}
		for _, p := range all {
			e.sandboxChannel(a, p, map[string]any{"processing_ms": 0})
		}
		src := makeVideo(t, "fits.mp4", lavfiPicture("540x960", 30), lavfiSound, h264, faststart)
		id, p := published(t, a, e.publishFile(a, src, all, nil))
		for _, pl := range all {
			if c := conversion(p, pl); c["action"] != "none" {
				t.Errorf("%s: conversion %v", pl, c)
			}
			if got := e.uploadedSHA(a, pl); got != sha(src) {
				t.Errorf("%s received %s, not the file itself", pl, got)
			}
		}
		for pl, k := range e.renditionKeys(a, id) {
			if k != "" {
				t.Errorf("%s has a rendition", pl)
			}
		}
	})

	t.Run("transcode off refuses instead", func(t *testing.T) {
		a := e.newTenant("off")
		e.sandboxChannel(a, "instagram", map[string]any{"processing_ms": 0})
		src := makeVideo(t, "moovlast.mp4", lavfiPicture("540x960", 30), lavfiSound, h264)
		r := e.publishFile(a, src, []string{"instagram"}, map[string]string{"transcode": "off"})
		if r.Code != http.StatusBadRequest || !strings.Contains(r.field("video"), "moov") {
			t.Fatalf("%d %s", r.Code, r.Body)
		}
	})

	t.Run("a dry run shows the plans", func(t *testing.T) {
		a := e.newTenant("dry")
		e.sandboxChannel(a, "instagram", nil)
		e.sandboxChannel(a, "youtube", nil)
		src := makeVideo(t, "120fps.mp4", lavfiPicture("540x960", 120), lavfiSound, h264, faststart)
		list, _ := json.Marshal([]string{"instagram", "youtube"})
		body, ct := multipartBody(t, map[string]string{"project_id": a.ProjectID, "title": "Clip", "platforms": string(list)}, map[string][]byte{"video": src})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: a.Key, Body: body, Header: map[string]string{"Content-Type": ct}})
		if r.Code != http.StatusOK {
			t.Fatalf("%d %s", r.Code, r.Body)
		}
		got := results(r.JSON)
		ig, _ := got["instagram"]["conversion"].(map[string]any)
		yt, _ := got["youtube"]["conversion"].(map[string]any)
		if v, _ := r.JSON["video"].(map[string]any); v["video_profile"] != "Constrained Baseline" || v["frame_rate"] != float64(120) || v["bitrate"] == nil {
			t.Errorf("video: %v", v)
		}
		if ig["action"] != "reencode" || !strings.Contains(strings.Join(anyStrings(ig["reasons"]), ";"), "120 fps") || yt["action"] != "none" {
			t.Errorf("plans: instagram %v, youtube %v", ig, yt)
		}
	})
}

// TestConversionWithoutFFmpeg: a server that cannot run ffmpeg refuses the publishes that need a
// conversion, saying what to install, and takes those that need none.
func TestConversionWithoutFFmpeg(t *testing.T) {
	rendertest.RequireFFmpeg(t) // to make the files
	e, _ := conversionEnv(t, store.SQLite, func(c *config.Config) { c.FFmpeg = "/nonexistent/ffmpeg" })
	moovLast := makeVideo(t, "moovlast.mp4", lavfiPicture("540x960", 30), lavfiSound, h264)
	r := e.publishFile(e.a, moovLast, []string{"instagram"}, nil)
	if r.Code != http.StatusBadRequest || !strings.Contains(r.field("video"), "Instagram") || !strings.Contains(r.field("video"), "install ffmpeg") {
		t.Errorf("a publish that needs ffmpeg: %d %s", r.Code, r.Body)
	}
	fits := makeVideo(t, "fits.mp4", lavfiPicture("540x960", 30), lavfiSound, h264, faststart)
	if r := e.publishFile(e.a, fits, []string{"instagram"}, nil); r.Code != http.StatusOK {
		t.Errorf("a publish that needs no conversion: %d %s", r.Code, r.Body)
	}
}

// TestConversionFails: a conversion ffmpeg cannot make fails the destinations waiting for it,
// saying why, and nothing reaches the platform.
func TestConversionFails(t *testing.T) {
	rendertest.RequireFFmpeg(t) // to make the file
	// An ffmpeg that runs, and cannot decode anything.
	fake := filepath.Join(t.TempDir(), "ffmpeg")
	script := "#!/bin/sh\ncase \"$*\" in *-version*) echo 'ffmpeg version 7 --enable-libx264'; exit 0;; esac\n" +
		"echo 'Invalid data found when processing input' >&2; exit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e, _ := conversionEnv(t, store.SQLite, func(c *config.Config) { c.FFmpeg = fake })
	moovLast := makeVideo(t, "moovlast.mp4", lavfiPicture("540x960", 30), lavfiSound, h264)
	r := e.publishFile(e.a, moovLast, []string{"instagram"}, nil)
	if r.Code != http.StatusOK && r.Code != http.StatusBadGateway {
		t.Fatalf("publish: %d %s", r.Code, r.Body)
	}
	p := e.waitPost(e.a, r.JSON["post_id"].(string), time.Minute, func(p map[string]any) bool { return p["status"] == "failed" })
	d := results(p)["instagram"]
	if d["error_category"] != "media_rejected" || !strings.Contains(fmt.Sprint(d["error"]), "could not convert the video for Instagram") {
		t.Errorf("destination %v", d)
	}
	if up, _ := e.introspect(e.a, "instagram"); len(up) != 0 {
		t.Errorf("Instagram received %v", up)
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		if s, ok := s.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
