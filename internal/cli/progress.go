package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/reelay/reelay/client"
)

// uploadProgress shows an upload on stderr: a progress bar on a terminal; elsewhere (a log, a
// pipe, CI) a plain line at every tenth of the way, such as "upload 30% 31.5 MB/104.9 MB",
// and "uploaded …" at the end.
type uploadProgress struct {
	w   io.Writer
	tty bool

	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	start    time.Time
	sent     int64
	total    int64
	lastStep int64 // the last tenth printed (non-terminal)
	restarts int
}

func newUploadProgress(w io.Writer, tty bool) *uploadProgress {
	return &uploadProgress{w: w, tty: tty}
}

// update is the client's Progress callback: bytes of the files sent so far, of total (-1 when
// unknown). It is called from the upload's goroutine, once per chunk read.
func (p *uploadProgress) update(sent, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	if sent < p.sent {
		// The client sends the upload again after a failure it may retry.
		p.restarts++
		p.lastStep = 0
		if p.bar != nil {
			p.bar.Reset()
		} else {
			fmt.Fprintln(p.w, "upload interrupted; sending it again")
		}
	}
	p.sent, p.total = sent, total
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription("upload"), progressbar.OptionShowBytes(true),
				progressbar.OptionShowTotalBytes(true), progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(80*time.Millisecond), progressbar.OptionSetPredictTime(true))
		}
		_ = p.bar.Set64(sent)
		return
	}
	if total > 0 {
		step := sent * 10 / total
		if step > p.lastStep && sent < total {
			p.lastStep = step
			fmt.Fprintf(p.w, "upload %d%% %s/%s\n", sent*100/total, humanBytes(sent), humanBytes(total))
		}
		return
	}
	// Size unknown: a line every 10 MB.
	const every = 10_000_000
	if step := sent / every; step > p.lastStep {
		p.lastStep = step
		fmt.Fprintf(p.w, "upload %s\n", humanBytes(sent))
	}
}

// done closes the display after the request: "uploaded 104.9 MB in 1.2s (87.4 MB/s)". Nothing
// is printed when nothing was sent.
func (p *uploadProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		return
	}
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
	}
	took := time.Since(p.start)
	rate := ""
	if secs := took.Seconds(); secs > 0 {
		rate = fmt.Sprintf(" (%s/s)", humanBytes(int64(float64(p.sent)/secs)))
	}
	fmt.Fprintf(p.w, "uploaded %s in %s%s\n", humanBytes(p.sent), took.Round(time.Millisecond), rate)
}

// statusView shows the destinations of a post while they progress: on a terminal the table
// is redrawn in place; elsewhere a line is printed for each destination whose state changed.
type statusView struct {
	w   io.Writer
	tty bool

	printed map[string]string // destination → its last line printed (non-terminal)
	drawn   int               // lines drawn last time (terminal)
	// width cuts lines on a terminal, so that none wraps and the redraw's count of lines
	// holds; 0: unknown, not cut.
	width int
}

func newStatusView(w io.Writer, tty bool) *statusView {
	v := &statusView{w: w, tty: tty, printed: map[string]string{}}
	if tty {
		v.width = terminalWidth(w)
	}
	return v
}

// fit cuts a line to the terminal's width.
func (v *statusView) fit(line string) string {
	if r := []rune(line); v.width > 1 && len(r) > v.width-1 {
		return string(r[:v.width-2]) + "…"
	}
	return line
}

// destinationLine is one destination's state on one line: platform, channel, status, and its
// URL, its error or the platform's note.
func destinationLine(d client.DestinationResult) string {
	detail := d.URL
	switch {
	case d.Error != "":
		detail = d.Error
		if d.ErrorCategory != "" {
			detail += " [" + d.ErrorCategory + "]"
		}
	case d.Message != "" && d.URL == "":
		detail = d.Message
	case d.Message != "":
		detail += " (" + d.Message + ")"
	}
	return strings.TrimRight(fmt.Sprintf("%-9s  %-24s  %-13s  %s", d.Platform, oneLine(dash(d.ChannelTitle), 24),
		d.UploadStatus, oneLine(detail, 160)), " ")
}

func destinationKey(d client.DestinationResult) string {
	if d.DestinationID != "" {
		return d.DestinationID
	}
	return string(d.Platform) + "/" + d.ChannelID
}

// show displays post as it stands.
func (v *statusView) show(post *client.Post) {
	if !v.tty {
		for _, d := range post.PublishResults {
			line := destinationLine(d)
			if v.printed[destinationKey(d)] != line {
				v.printed[destinationKey(d)] = line
				fmt.Fprintln(v.w, line)
			}
		}
		return
	}
	var b strings.Builder
	for range v.drawn {
		b.WriteString("\x1b[1A\x1b[2K") // up a line, erase it
	}
	b.WriteString(v.fit(fmt.Sprintf("post %s  %s", post.ID, post.Status)) + "\n")
	for _, d := range post.PublishResults {
		b.WriteString(v.fit("  "+destinationLine(d)) + "\n")
	}
	v.drawn = 1 + len(post.PublishResults)
	io.WriteString(v.w, b.String())
}

// watchPost follows a post until every destination has settled, showing each change, and
// answers the settled post. first, when not nil, is the post as already read. timeout bounds
// the wait (0: no bound); when it runs out, or the command is interrupted, the post goes on
// on the server, and the error says how to follow it rather than publish it again.
func watchPost(ctx context.Context, c *client.Client, id string, first *client.Post, view *statusView, timeout time.Duration) (*client.Post, error) {
	parent := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	post := first
	interval := 500 * time.Millisecond
	for {
		if post == nil {
			p, err := c.GetPost(ctx, id)
			if err != nil {
				return nil, stoppedWatching(parent, ctx, id, timeout, err)
			}
			post = p
		}
		view.show(post)
		if post.Settled() {
			return post, nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return post, stoppedWatching(parent, ctx, id, timeout, ctx.Err())
		case <-t.C:
		}
		interval = min(interval*3/2, 2*time.Second)
		post = nil
	}
}

// stoppedWatching explains an ended watch: a timeout or an interruption leaves the post to
// the server (exit codes 1 and 130); any other error is the error.
func stoppedWatching(parent, ctx context.Context, id string, timeout time.Duration, err error) error {
	follow := fmt.Sprintf("the post goes on on the server: follow it with `reelay posts get %s --watch`, and do not publish it again", id)
	switch {
	case parent.Err() != nil:
		return &codedError{code: exitInterrupted, msg: "interrupted; " + follow}
	case ctx.Err() != nil:
		return &codedError{code: exitError, msg: fmt.Sprintf("post %s has not settled after %s; %s", id, timeout, follow)}
	}
	return err
}

// outcome is the command's result for a settled post: nil when every destination succeeded,
// exit code 5 when some failed.
func outcome(post *client.Post) error {
	if post.Status != client.PostFailed && post.Status != client.PostPartiallyPublished {
		return nil
	}
	failed := 0
	for _, d := range post.PublishResults {
		if d.UploadStatus == client.UploadFailed {
			failed++
		}
	}
	return &codedError{code: exitNotPublished, msg: fmt.Sprintf("post %s is %s: %d of %d destinations failed",
		post.ID, post.Status, failed, len(post.PublishResults))}
}
