package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
)

func TestParseAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time // zero: refused
	}{
		{"+2h", now.Add(2 * time.Hour)},
		{"+30m", now.Add(30 * time.Minute)},
		{"+1d", now.Add(24 * time.Hour)},
		{"+1d12h", now.Add(36 * time.Hour)},
		{" +90s ", now.Add(90 * time.Second)},
		{"2026-12-01T09:00:00+01:00", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{"2026-11-25T10:00:01Z", now.Add(time.Second)},
		{"2026-11-25T10:00:00Z", time.Time{}}, // now is not the future
		{"2026-11-25T09:00:00Z", time.Time{}},
		{"2026-12-01T09:00:00", time.Time{}}, // no offset
		{"2026-12-01", time.Time{}},
		{"+0s", time.Time{}},
		{"+-1h", time.Time{}},
		{"+1w", time.Time{}},
		{"+d", time.Time{}},
		{"2h", time.Time{}},
		{"tomorrow", time.Time{}},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		got, err := parseAt(tt.in, now)
		switch {
		case tt.want.IsZero():
			var usage *usageError
			if err == nil || !errors.As(err, &usage) {
				t.Errorf("parseAt(%q) = %v, %v; want a usage error", tt.in, got, err)
			}
		case err != nil || !got.Equal(tt.want):
			t.Errorf("parseAt(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestUploadProgressLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := newUploadProgress(&out, false)
	p.done() // nothing sent: nothing printed
	if out.Len() != 0 {
		t.Fatalf("printed before any upload: %q", out.String())
	}
	const total = 104_857_600
	for sent := int64(0); sent <= total; sent += 32 * 1024 {
		p.update(sent, total)
	}
	p.update(total, total)
	p.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 9 tenths and the end:\n%s", len(lines), out.String())
	}
	for i, l := range lines[:9] {
		want := fmt.Sprintf("upload %d%% ", (i+1)*10)
		if !strings.HasPrefix(l, want) || !strings.HasSuffix(l, "/104.9 MB") {
			t.Errorf("line %d = %q, want %q…/104.9 MB", i, l, want)
		}
	}
	if !strings.HasPrefix(lines[9], "uploaded 104.9 MB in ") {
		t.Errorf("last line %q", lines[9])
	}

	// A retried upload starts again from 0, and says so.
	out.Reset()
	p = newUploadProgress(&out, false)
	p.update(600, 1000)
	p.update(100, 1000)
	p.update(200, 1000)
	if got := out.String(); got != "upload 60% 600 B/1.0 kB\nupload interrupted; sending it again\nupload 10% 100 B/1.0 kB\nupload 20% 200 B/1.0 kB\n" {
		t.Errorf("retry: %q", got)
	}
}

func TestStatusView(t *testing.T) {
	t.Parallel()
	post := &client.Post{ID: "p1", Status: client.PostProcessing, PublishResults: []client.DestinationResult{
		{DestinationID: "d1", Platform: client.YouTube, ChannelTitle: "Mine", UploadStatus: client.UploadUploading},
		{DestinationID: "d2", Platform: client.TikTok, ChannelTitle: "Also mine", UploadStatus: client.UploadQueued},
	}}
	next := &client.Post{ID: "p1", Status: client.PostPartiallyPublished, PublishResults: []client.DestinationResult{
		{DestinationID: "d1", Platform: client.YouTube, ChannelTitle: "Mine", UploadStatus: client.UploadPublished, URL: "https://youtu.be/x"},
		{DestinationID: "d2", Platform: client.TikTok, ChannelTitle: "Also mine", UploadStatus: client.UploadFailed, Error: "too short", ErrorCategory: "media_rejected"},
	}}

	t.Run("plain lines, one per change", func(t *testing.T) {
		var out bytes.Buffer
		v := newStatusView(&out, false)
		v.show(post)
		v.show(post)
		v.show(next)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 4 || !strings.Contains(lines[2], "published") || !strings.HasSuffix(lines[2], "https://youtu.be/x") ||
			!strings.HasSuffix(lines[3], "too short [media_rejected]") || strings.Contains(out.String(), "\x1b") {
			t.Errorf("lines:\n%s", out.String())
		}
	})
	t.Run("a terminal redraws in place", func(t *testing.T) {
		var out bytes.Buffer
		v := newStatusView(&out, true)
		v.show(post)
		first := out.Len()
		v.show(next)
		redraw := out.String()[first:]
		if strings.Contains(out.String()[:first], "\x1b[") || !strings.HasPrefix(redraw, strings.Repeat("\x1b[1A\x1b[2K", 3)+"post p1  partially_published\n") {
			t.Errorf("redraw: %q", redraw)
		}
		v.width = 20
		out.Reset()
		v.show(next)
		for _, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(out.String(), strings.Repeat("\x1b[1A\x1b[2K", 3)), "\n"), "\n") {
			if n := len([]rune(l)); n > 19 {
				t.Errorf("line of %d characters on a terminal of 20: %q", n, l)
			}
		}
	})
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("boom"), exitError},
		{usagef("bad"), exitUsage},
		{fmt.Errorf("wrapped: %w", usagef("bad")), exitUsage},
		{&client.Error{StatusCode: 401, Code: client.CodeUnauthorized}, exitUnauthorized},
		{&client.Error{StatusCode: 404, Code: client.CodeNotFound}, exitError},
		{&client.RequestError{Method: "GET", URL: "http://x/api/v1/posts", Err: errors.New("connection refused")}, exitUnreachable},
		{&codedError{code: exitNotPublished, msg: "x"}, exitNotPublished},
		{errors.New(`unknown command "x" for "reelay"`), exitUsage},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.code {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}
