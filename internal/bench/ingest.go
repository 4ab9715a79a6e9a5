package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/reelay/reelay/internal/procstat"
)

// IngestConfig describes `reelay bench ingest`.
type IngestConfig struct {
	// Client reaches the server under test.
	Client *Client
	// Size is the video's size in bytes (about: the MP4 is padded to it).
	Size int64
	// TempDir holds the generated video ("" = the system's).
	TempDir string
	// References is how many plain loopback transfers of the file make the reference (4: the
	// upload to reelay and one delivery to each of three platforms).
	References int
	// ServerPID, when not 0, is the server's process, whose memory is read from
	// /proc/<pid>/status (Linux).
	ServerPID int
	// PlatformsPID, when not 0, is the process of the platform simulators, apart from the
	// server's; Simulators reads what they received (the server's own sandbox when nil).
	PlatformsPID int
	Simulators   *Client
	// Timeout bounds the wait for the destinations.
	Timeout time.Duration
	// Measure, when set, is called as the measured part starts (the publish) and returns the
	// function called as it ends (a CPU profile).
	Measure func() (stop func())
}

// IngestResult is what `reelay bench ingest` measured.
type IngestResult struct {
	Scenario   string `json:"scenario"`
	VideoBytes int64  `json:"video_bytes"`
	// VideoSHA256 is the hex SHA-256 of the video, which every simulator must have recorded.
	VideoSHA256 string `json:"video_sha256"`
	PostID      string `json:"post_id"`
	Status      string `json:"status"`
	// UploadSeconds is the multipart POST /publish, from the first byte sent to the answer
	// (the post stored and queued).
	UploadSeconds float64 `json:"upload_seconds"`
	// WallSeconds runs from the request's start to the last destination's published_at (the
	// server's clock, on this machine); ObservedSeconds to when the client saw it settled.
	WallSeconds     float64 `json:"wall_seconds"`
	ObservedSeconds float64 `json:"observed_seconds"`
	// ReferenceSeconds is the sum of References plain transfers of the same file over
	// loopback HTTP to a server that discards it.
	ReferenceSeconds   float64   `json:"reference_seconds"`
	ReferenceTransfers []float64 `json:"reference_transfers_seconds"`
	Ratio              float64   `json:"ratio"`
	// Destinations: when each was published, counted from the end of the upload.
	Destinations []IngestDestination `json:"destinations"`
	// Server memory from /proc/<pid>/status, in MB (10^6 bytes): VmHWM (peak resident set) at the end,
	// VmRSS before the upload. Absent when the server is not a child process.
	ServerPeakRSSMB   *float64 `json:"server_peak_rss_mb,omitempty"`
	ServerRSSBeforeMB *float64 `json:"server_rss_before_mb,omitempty"`
	// ServerCPUSeconds is the CPU time (user plus system, all threads) the server process used
	// from the start of the upload until the client saw the post published, from
	// /proc/<pid>/stat: compared with the wall time, it tells how much of the two cores the
	// server kept busy. Absent when the server is not a child process.
	ServerCPUSeconds *float64 `json:"server_cpu_seconds,omitempty"`
	// PlatformsCPUSeconds is the CPU time the platform simulators' process used over the same
	// span, when they run apart from the server.
	PlatformsCPUSeconds *float64 `json:"platforms_cpu_seconds,omitempty"`
	Targets             Targets  `json:"targets"`
	// Storage is where the server kept the video: "local disk", or the scheme of the
	// bench's --blob-url ("s3"); empty for a server the bench did not start.
	Storage string `json:"storage,omitempty"`
	// LocalDisk, with a --blob-url, is the same publish to a server of its own storing on
	// local disk, run just before in the same invocation: the figures to compare with.
	LocalDisk *IngestResult `json:"local_disk,omitempty"`
	MachineReport
	SimulatorsReport
}

// IngestDestination is one destination of the ingest post.
type IngestDestination struct {
	Platform string `json:"platform"`
	Status   string `json:"status"`
	// AfterUploadSeconds is published_at minus the end of the upload.
	AfterUploadSeconds *float64 `json:"published_after_upload_seconds"`
	// Received is what the platform's simulator recorded for the channel's account, read from
	// its _introspect after the run: complete uploads, and published items, of the video
	// (every byte, the same SHA-256).
	Received IngestReceived `json:"received"`
}

// IngestReceived is what one simulator recorded of the ingest video for the bench channel.
type IngestReceived struct {
	Uploads   int `json:"complete_uploads"`
	Published int `json:"published"`
	// Others counts the uploads of the account that are not the video (short or altered).
	Others int `json:"other_uploads"`
}

// Targets holds a scenario's targets and whether the run met them.
type Targets map[string]Target

// Target is one target.
type Target struct {
	Want string `json:"want"`
	Met  bool   `json:"met"`
}

// Missed lists the targets the run did not meet.
func (t Targets) Missed() []string {
	var out []string
	for k, v := range t {
		if !v.Met {
			out = append(out, k+" "+v.Want)
		}
	}
	return out
}

// Ingest uploads one large MP4 by multipart to POST /publish for a sandbox channel each of
// YouTube, Instagram and TikTok, and measures the time until all three are published against
// plain loopback transfers of the same file.
func Ingest(ctx context.Context, cfg IngestConfig) (IngestResult, error) {
	res := IngestResult{Scenario: "ingest"}
	if cfg.References <= 0 {
		cfg.References = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	c := cfg.Client
	path, size, err := WriteVideoFile(cfg.TempDir, cfg.Size)
	if err != nil {
		return res, fmt.Errorf("generate the video: %w", err)
	}
	defer os.Remove(path)
	res.VideoBytes = size
	if res.VideoSHA256, err = fileSHA256(path); err != nil {
		return res, err
	}

	for range cfg.References {
		d, err := loopbackTransfer(ctx, path, size)
		if err != nil {
			return res, fmt.Errorf("reference transfer: %w", err)
		}
		res.ReferenceTransfers = append(res.ReferenceTransfers, round3(d.Seconds()))
		res.ReferenceSeconds += d.Seconds()
	}
	res.ReferenceSeconds = round3(res.ReferenceSeconds)

	fx, err := NewFixture(ctx, c, "ingest", sandboxPlatforms, 1, 3)
	if err != nil {
		return res, err
	}
	if cfg.ServerPID != 0 {
		if m, err := procstat.ReadMemory(cfg.ServerPID); err == nil {
			res.ServerRSSBeforeMB = &m.RSSMB
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	form := fx.Form(0, nil, nil)
	form.Video, form.Size = f, size

	serverCPU := startCPU(cfg.ServerPID)
	platformsCPU := startCPU(cfg.PlatformsPID)
	stop := measure(cfg.Measure)
	defer stop()
	start := time.Now()
	id, err := c.Publish(ctx, form)
	uploaded := time.Now()
	if err != nil {
		return res, fmt.Errorf("publish: %w", err)
	}
	res.PostID = id
	res.UploadSeconds = round3(uploaded.Sub(start).Seconds())
	post, seen, err := waitPost(ctx, c, id, 10*time.Millisecond, cfg.Timeout)
	if err != nil {
		return res, err
	}
	res.ServerCPUSeconds, res.PlatformsCPUSeconds = serverCPU(), platformsCPU()
	stop()
	res.Status = post.Status
	res.ObservedSeconds = round3(seen.Sub(start).Seconds())
	for _, d := range post.PublishResults {
		dest := IngestDestination{Platform: d.Platform, Status: d.UploadStatus}
		if d.PublishedAt != nil {
			s := round3(d.PublishedAt.Sub(uploaded).Seconds())
			dest.AfterUploadSeconds = &s
		}
		res.Destinations = append(res.Destinations, dest)
	}
	if cfg.ServerPID != 0 {
		if m, err := procstat.ReadMemory(cfg.ServerPID); err == nil {
			res.ServerPeakRSSMB = &m.HWMMB
		}
	}
	if last := post.LastPublished(); last != nil {
		res.WallSeconds = round3(last.Sub(start).Seconds())
		if res.ReferenceSeconds > 0 {
			res.Ratio = round3(res.WallSeconds / res.ReferenceSeconds)
		}
	}
	res.Targets = Targets{"ratio": {Want: "<= 1.5", Met: res.Ratio > 0 && res.Ratio <= 1.5}}
	if res.ServerPeakRSSMB != nil {
		res.Targets["server_peak_rss_mb"] = Target{Want: "<= 100", Met: *res.ServerPeakRSSMB <= 100}
	}
	if post.Status != "published" {
		return res, errors.New(post.problem())
	}
	sims := cfg.Simulators
	if sims == nil {
		sims = c
	}
	if err := fx.checkReceived(ctx, c, sims, res.Destinations, size, res.VideoSHA256); err != nil {
		return res, err
	}
	return res, nil
}

// checkReceived reads each simulator's _introspect (from sims) and fills in what it recorded of
// the video for the fixture's channel (read from the server, c): a run counts only if every
// platform received the whole file once and published it.
func (f *Fixture) checkReceived(ctx context.Context, c, sims *Client, dests []IngestDestination, size int64, sum string) error {
	g := f.groups[0]
	accounts, err := c.channelAccounts(ctx, g.project)
	if err != nil {
		return fmt.Errorf("read the bench channels: %w", err)
	}
	for i := range dests {
		d := &dests[i]
		k := slices.Index(f.Platforms, d.Platform)
		if k < 0 {
			return fmt.Errorf("destination on %s, which the bench did not ask for", d.Platform)
		}
		account := accounts[g.channels[k]]
		rec, err := sims.Received(ctx, d.Platform)
		if err != nil {
			return fmt.Errorf("read what the %s simulator received: %w", d.Platform, err)
		}
		for _, u := range rec.Uploads {
			switch {
			case u.Account != account:
			case u.Bytes == size && u.SHA256 == sum:
				d.Received.Uploads++
			default:
				d.Received.Others++
			}
		}
		for _, p := range rec.Published {
			if p.Account == account && p.SHA256 == sum {
				d.Received.Published++
			}
		}
		if d.Received.Uploads != 1 || d.Received.Others != 0 || d.Received.Published != 1 {
			return fmt.Errorf("the %s simulator recorded %d complete uploads of the %d-byte video (sha256 %s), %d other uploads, "+
				"and %d published items of it for the bench channel; want one upload and one published item",
				d.Platform, d.Received.Uploads, size, sum, d.Received.Others, d.Received.Published)
		}
	}
	return nil
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// loopbackTransfer sends the file at path over loopback HTTP to a server that discards it,
// and returns how long the request took, from its start to the answer.
func loopbackTransfer(ctx context.Context, path string, size int64) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil || n != r.ContentLength {
			http.Error(w, "short body", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+ln.Addr().String()+"/upload", f)
	if err != nil {
		return 0, err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "video/mp4")
	tr := &http.Transport{Proxy: nil, DisableCompression: true}
	defer tr.CloseIdleConnections()
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusNoContent {
		return 0, fmt.Errorf("loopback server answered %d", resp.StatusCode)
	}
	return took, nil
}
