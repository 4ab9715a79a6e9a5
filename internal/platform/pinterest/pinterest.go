// Package pinterest publishes video Pins through Pinterest API v5: register a media upload
// (POST /v5/media), upload the file to the URL it names as an S3 browser POST (every
// upload_parameters field, then the file), poll GET /v5/media/{media_id} until Pinterest has
// processed it, and create the Pin on the chosen board (POST /v5/pins with a video_id media
// source and a cover).
//
// Each Step does one thing and returns the State to store before the next: the registration
// (State holds media_id before a byte is sent), the upload, one status poll, the Pin. The
// upload parameters carry temporary AWS credentials, so they are kept in the provider's memory
// and never in State; a Step that resumes without them (another process, a restart) or after
// an upload whose outcome it does not know asks GET /v5/media/{media_id} first: processing or
// succeeded means Pinterest has the file and it is not sent again; registered means it has not,
// and the upload is sent again (or, without the parameters, registered anew: a media that never
// received its file cannot become a Pin, so nothing is published twice).
//
// Pinterest has no idempotency key for POST /v5/pins and its Pin object does not name the
// media it was made from. Before every create the provider therefore lists the board's newest
// Pins (GET /v5/boards/{board_id}/pins) and takes a video Pin with the same title, description
// and link created since the create phase began as the one an earlier, interrupted Step made.
package pinterest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is Pinterest's API host; paths start with the version (/v5).
const DefaultBaseURL = "https://api.pinterest.com"

// Pinterest's own limits of a video Pin (PinCreate schema; video specifications).
const (
	maxTitle       = 100
	maxDescription = 800
	maxLink        = 2048
	minDuration    = 4 * time.Second
	maxDuration    = 15 * time.Minute
)

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the API base (DefaultBaseURL; https://api-sandbox.pinterest.com for an app with
	// Trial access); a destination's BaseURL wins over it.
	BaseURL string
	// APIVersion is the first segment of every call's path (Description.API.Version, v5;
	// REELAY_PINTEREST_API_VERSION).
	APIVersion string
	// HTTPClient makes every request (a client without an overall timeout: the upload is
	// large; contexts bound each API call).
	HTTPClient *http.Client
	// APITimeout bounds each JSON API call (30 s).
	APITimeout time.Duration
	// PollInitial and PollMax bound the wait between media status polls (1 s doubling every
	// second poll, at most 30 s).
	PollInitial, PollMax time.Duration
	// ProcessingTimeout is how long after the upload Pinterest may process the video before
	// the destination fails (1 h).
	ProcessingTimeout time.Duration
	// LostUploadAfter is how long a media may still read registered after its upload was
	// accepted before the upload is taken as lost and the video registered again (5 min).
	LostUploadAfter time.Duration
	// CoverFrame is the key frame used as cover when the destination has no thumbnail URL
	// (1 s, whole seconds, within the video).
	CoverFrame time.Duration
	// MaxRegistrations bounds how often one destination registers a media (3).
	MaxRegistrations int
	// DedupPages is how many pages of 100 board Pins are searched for a Pin an interrupted
	// create made (3); DedupSkew is how much earlier than the create phase such a Pin's
	// created_at may be (10 min: clocks differ).
	DedupPages int
	DedupSkew  time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider is Pinterest's provider.Provider.
type Provider struct {
	cfg Config

	mu      sync.Mutex
	tickets map[string]*ticket // by media_id
}

// The contract the Provider keeps (internal/provider), checked by the compiler: app.New
// finds these abilities by asking.
var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.Identifier    = (*Provider)(nil)
	_ provider.OptionsReader = (*Provider)(nil)
	_ provider.MetricsSource = (*Provider)(nil)
)

// New returns a Pinterest provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultBaseURL)
	cfg.APIVersion = cmp.Or(cfg.APIVersion, Description.API.Version)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, 30*time.Second)
	cfg.ProcessingTimeout = provider.Positive(cfg.ProcessingTimeout, time.Hour)
	cfg.LostUploadAfter = provider.Positive(cfg.LostUploadAfter, 5*time.Minute)
	cfg.CoverFrame = provider.Positive(cfg.CoverFrame, time.Second)
	cfg.MaxRegistrations = provider.Positive(cfg.MaxRegistrations, 3)
	cfg.DedupPages = provider.Positive(cfg.DedupPages, 3)
	cfg.DedupSkew = provider.Positive(cfg.DedupSkew, 10*time.Minute)
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg, tickets: map[string]*ticket{}}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Pinterest }

// Phases of State.
const (
	phaseRegister   = ""
	phaseUploading  = "uploading"
	phaseProcessing = "processing"
	phaseCreating   = "creating"
	phaseDone       = "done"
)

// State is what the publisher stores between Steps. It holds no credential: the upload
// parameters stay in memory (see ticket).
type State struct {
	Phase string `json:"phase,omitempty"`
	// MediaID is the registered media upload; Registrations counts registrations so far.
	MediaID       string `json:"media_id,omitempty"`
	Registrations int    `json:"registrations,omitempty"`
	// UploadedAt is when the upload was accepted (or found done); Polls counts status polls.
	UploadedAt time.Time `json:"uploaded_at,omitzero"`
	Polls      int       `json:"polls,omitempty"`
	// CreateSince is when the create phase began: a Pin created since then with the same
	// texts on the board is this destination's.
	CreateSince time.Time `json:"create_since,omitzero"`
	// The outcome, once done.
	PinID string `json:"pin_id,omitempty"`
	URL   string `json:"url,omitempty"`
	Found bool   `json:"found,omitempty"` // the Pin was found on the board, not created by the last Step
}

func parseOptions(d *provider.Destination) (Options, error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return o, provider.Permanent(provider.CategoryInvalidOptions, 0, "pinterest options: %v", err)
	}
	if o.Title == "" {
		o.Title = d.Title
	}
	if o.Description == "" {
		o.Description = d.Caption
	}
	o.BoardID = strings.TrimSpace(o.BoardID)
	bad := func(format string, args ...any) error {
		return provider.Permanent(provider.CategoryInvalidOptions, 0, format, args...)
	}
	switch {
	case o.BoardID == "":
		return o, bad("pinterest.board_id is required: Pinterest pins to a board (the channel's options list them)")
	case strings.Trim(o.BoardID, "0123456789") != "":
		return o, bad("pinterest.board_id %q is not a Pinterest board id (a number; the channel's options list the boards)", o.BoardID)
	case utf8.RuneCountInString(o.Title) > maxTitle:
		return o, bad("the Pinterest title is %d characters long; Pinterest accepts at most %d", utf8.RuneCountInString(o.Title), maxTitle)
	case utf8.RuneCountInString(o.Description) > maxDescription:
		return o, bad("the Pinterest description is %d characters long; Pinterest accepts at most %d", utf8.RuneCountInString(o.Description), maxDescription)
	case utf8.RuneCountInString(o.Link) > maxLink:
		return o, bad("the Pinterest link is %d characters long; Pinterest accepts at most %d", utf8.RuneCountInString(o.Link), maxLink)
	}
	if o.Link != "" {
		if u, err := url.Parse(o.Link); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return o, bad("pinterest.link %q is not an http or https URL", o.Link)
		}
	}
	return o, nil
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Pinterest", &st); err != nil {
		return provider.Outcome{}, err
	}
	if st.Phase == phaseDone {
		return st.outcome(), nil
	}
	base, token, err := p.target(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	opts, err := parseOptions(d)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseRegister:
		return p.register(ctx, d, base, token, st, opts)
	case phaseUploading:
		return p.upload(ctx, d, base, token, st)
	case phaseProcessing:
		return p.poll(ctx, base, token, st)
	case phaseCreating:
		return p.create(ctx, d, base, token, st, opts)
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Pinterest state has unknown phase %q", st.Phase)
}

// target resolves the API base and the access token of a channel.
func (p *Provider) target(baseURL string, credentials map[string]string) (base, token string, err error) {
	token = strings.TrimSpace(credentials["access_token"])
	if token == "" {
		return "", "", provider.Permanent(provider.CategoryAuthExpired, 0, "the Pinterest channel has no access token")
	}
	base = strings.TrimRight(baseURL, "/")
	if base == "" {
		base = p.cfg.BaseURL
	}
	return base, token, nil
}

// videoType checks the video against Pinterest's specifications and returns the Content-Type
// of the file part.
func videoType(v provider.Media) (string, error) {
	if v.Size <= 0 || v.Open == nil {
		return "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if caps := Description.Capabilities; caps.MaxVideoBytes > 0 && v.Size > caps.MaxVideoBytes {
		return "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video is %d bytes; Pinterest accepts at most %d", v.Size, caps.MaxVideoBytes)
	}
	if v.Duration > 0 && (v.Duration < minDuration || v.Duration > maxDuration) {
		return "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video lasts %s; Pinterest takes videos of %s to %s", v.Duration, minDuration, maxDuration)
	}
	ct := "video/mp4"
	if v.ContentType != "" {
		mt, _, err := mime.ParseMediaType(v.ContentType)
		if err != nil || (mt != "video/mp4" && mt != "video/quicktime") {
			return "", provider.Permanent(provider.CategoryMediaRejected, 0, "Pinterest takes MP4 or MOV video, not %s", v.ContentType)
		}
		ct = mt
	}
	return ct, nil
}

// register checks the board and registers a media upload. Nothing is uploaded in this step:
// media_id is stored first.
func (p *Provider) register(ctx context.Context, d *provider.Destination, base, token string, st State, o Options) (provider.Outcome, error) {
	if _, err := videoType(d.Video); err != nil {
		return provider.Outcome{}, err
	}
	if st.Registrations == 0 {
		// An unknown board fails the destination before gigabytes are uploaded for nothing.
		var b board
		// A GET: asking again changes nothing.
		err := p.cfg.Repeat.Do(ctx, readAs(provider.CategoryInvalidOptions), func() error {
			return p.call(ctx, http.MethodGet, base, token, pathBoards+"/"+url.PathEscape(o.BoardID), nil, nil, &b)
		})
		if err != nil {
			return provider.Outcome{}, p.pinError(err, o)
		}
	}
	if st.Registrations >= p.cfg.MaxRegistrations {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"Pinterest did not receive the video after %d media registrations", st.Registrations)
	}
	var mu mediaUpload
	// A media registered twice is harmless: a Pin is made of the media_id it names
	// (developers.pinterest.com/docs/api/v5/pins-create, media_source video_id), and the other
	// one never gets its file.
	err := p.cfg.Repeat.Do(ctx, readAs(provider.CategoryInternal), func() error {
		return p.call(ctx, http.MethodPost, base, token, pathMedia, nil, map[string]string{"media_type": "video"}, &mu)
	})
	if err != nil {
		return provider.Outcome{}, classify(err, provider.CategoryInternal)
	}
	if u, err := url.Parse(mu.UploadURL); mu.MediaID == "" || strings.Trim(mu.MediaID, "0123456789") != "" ||
		err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(mu.UploadParameters) == 0 {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusCreated,
			"Pinterest registered the media without a usable media_id, upload_url and upload_parameters")
	}
	p.putTicket(mu.MediaID, &ticket{url: mu.UploadURL, fields: mu.UploadParameters, issued: p.cfg.Now()})
	st = State{Phase: phaseUploading, MediaID: mu.MediaID, Registrations: st.Registrations + 1}
	return st.next(provider.StatusUploading, 0), nil
}

// upload sends the video to the registered media's upload URL, after asking Pinterest
// whether it already has it when that is not known.
func (p *Provider) upload(ctx context.Context, d *provider.Destination, base, token string, st State) (provider.Outcome, error) {
	ct, err := videoType(d.Video)
	if err != nil {
		return provider.Outcome{}, err
	}
	t, have := p.peekTicket(st.MediaID)
	if !have || t.attempted {
		md, err := p.media(ctx, base, token, st.MediaID)
		if err != nil {
			if ae := (*apiError)(nil); errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
				p.dropTicket(st.MediaID)
				return p.reregister(st), nil
			}
			return provider.Outcome{}, classify(err, provider.CategoryInternal)
		}
		switch md.Status {
		case mediaProcessing, mediaSucceeded:
			// Pinterest has the file: an earlier upload got through.
			p.dropTicket(st.MediaID)
			return p.uploaded(st), nil
		case mediaFailed:
			p.dropTicket(st.MediaID)
			return provider.Outcome{}, rejected(st.MediaID)
		}
		if !have {
			// Registered, and the upload parameters are gone with the process that had them.
			return p.reregister(st), nil
		}
	}
	t, have = p.takeTicket(st.MediaID)
	if !have {
		return p.reregister(st), nil
	}
	// A file POST that failed may have been stored. Before it is made again Pinterest tells:
	// processing or succeeded means it has the file (registered, that it has not). Sent again,
	// the file goes to the same key of the same bucket, which holds one object.
	var res s3Result
	have = false
	err = p.cfg.Repeat.DoChecked(ctx, nil, func() error {
		var err error
		if res, err = p.postFile(ctx, d, t, ct); err != nil {
			return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "uploading the video to Pinterest: %v", err)
		}
		if res.status >= 500 {
			return provider.Transient(provider.CategoryUpstreamUnavailable, res.status, 0, "uploading the video to Pinterest: %s", res)
		}
		return nil
	}, func() (bool, error) {
		md, err := p.media(ctx, base, token, st.MediaID)
		if err != nil {
			return false, classify(err, provider.CategoryInternal)
		}
		have = md.Status == mediaProcessing || md.Status == mediaSucceeded
		return have, nil
	})
	if err == nil && have {
		p.dropTicket(st.MediaID)
		return p.uploaded(st), nil
	}
	switch {
	case err != nil:
		return provider.Outcome{}, err
	case res.ok():
		p.dropTicket(st.MediaID)
		return p.uploaded(st), nil
	case res.code == "EntityTooLarge" || res.code == "EntityTooSmall":
		p.dropTicket(st.MediaID)
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, res.status, "Pinterest's upload refused the video: %s", res)
	case res.status == http.StatusForbidden:
		// The upload parameters expired or no longer hold: ask for new ones (the next Step
		// finds no ticket, checks the media and registers again).
		p.dropTicket(st.MediaID)
		return st.next(provider.StatusUploading, 0), nil
	}
	p.dropTicket(st.MediaID)
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, res.status, "Pinterest's upload refused the request: %s", res)
}

// reregister starts over with a new media registration. It is only used when Pinterest does
// not have the file under the old media_id, which therefore can never become a Pin.
func (p *Provider) reregister(st State) provider.Outcome {
	ns := State{Registrations: st.Registrations}
	return ns.next(provider.StatusUploading, 0)
}

func (p *Provider) uploaded(st State) provider.Outcome {
	st.Phase = phaseProcessing
	st.UploadedAt = p.cfg.Now()
	st.Polls = 0
	return st.next(provider.StatusProcessing, p.pollDelay(0))
}

func rejected(mediaID string) error {
	return provider.Permanent(provider.CategoryMediaRejected, 0,
		"Pinterest could not process the video (media %s: status failed). Pinterest takes MP4 or MOV video (H.264 or H.265) of %s to %s and at most 2 GB",
		mediaID, minDuration, maxDuration)
}

func (p *Provider) media(ctx context.Context, base, token, id string) (mediaDetails, error) {
	var md mediaDetails
	// A GET: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, readAs(provider.CategoryInternal), func() error {
		return p.call(ctx, http.MethodGet, base, token, pathMedia+"/"+url.PathEscape(id), nil, nil, &md)
	})
	return md, err
}

// poll asks how processing stands.
func (p *Provider) poll(ctx context.Context, base, token string, st State) (provider.Outcome, error) {
	md, err := p.media(ctx, base, token, st.MediaID)
	if err != nil {
		if ae := (*apiError)(nil); errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
			return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, ae.HTTP,
				"Pinterest no longer knows media %s after its upload: %v", st.MediaID, ae)
		}
		return provider.Outcome{}, classify(err, provider.CategoryInternal)
	}
	now := p.cfg.Now()
	switch md.Status {
	case mediaSucceeded:
		st.Phase = phaseCreating
		st.CreateSince = now
		return st.next(provider.StatusProcessing, 0), nil
	case mediaFailed:
		return provider.Outcome{}, rejected(st.MediaID)
	case mediaRegistered:
		if now.Sub(st.UploadedAt) > p.cfg.LostUploadAfter {
			// The upload was accepted but Pinterest never saw it: the media cannot become a
			// Pin, so a new registration cannot publish twice.
			return p.reregister(st), nil
		}
	default:
		if now.Sub(st.UploadedAt) > p.cfg.ProcessingTimeout {
			return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
				"Pinterest was still processing media %s %s after the upload", st.MediaID, p.cfg.ProcessingTimeout)
		}
	}
	st.Polls++
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// create makes the Pin, unless an earlier, interrupted Step already did.
func (p *Provider) create(ctx context.Context, d *provider.Destination, base, token string, st State, o Options) (provider.Outcome, error) {
	if id, err := p.findPin(ctx, base, token, o, st.CreateSince.Add(-p.cfg.DedupSkew)); err != nil {
		return provider.Outcome{}, p.pinError(err, o)
	} else if id != "" {
		st.Found = true
		return st.done(id), nil
	}
	src := videoSource{SourceType: "video_id", MediaID: st.MediaID}
	if d.Thumbnail != nil && d.Thumbnail.URL != "" {
		src.CoverImageURL = d.Thumbnail.URL
	} else {
		at := p.cfg.CoverFrame
		if dur := d.Video.Duration; dur > 0 && at > dur/2 {
			at = dur / 2
		}
		secs := int(at / time.Second)
		src.CoverKeyFrameTime = &secs
	}
	var out pin
	body := pinCreate{BoardID: o.BoardID, Title: o.Title, Description: o.Description, Link: o.Link, MediaSource: src}
	// A create that failed may have made the Pin. It is made again only after the board, read
	// again as above, shows no Pin of this destination's.
	err := p.cfg.Repeat.DoChecked(ctx, func(err error) *provider.Error { return provider.AsError(p.pinError(err, o)) }, func() error {
		return p.call(ctx, http.MethodPost, base, token, pathPins, nil, body, &out)
	}, func() (bool, error) {
		id, err := p.findPin(ctx, base, token, o, st.CreateSince.Add(-p.cfg.DedupSkew))
		out.ID, st.Found = id, id != ""
		return st.Found, err
	})
	if err != nil {
		return provider.Outcome{}, p.pinError(err, o)
	}
	if out.ID == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusCreated, "Pinterest created the Pin without an id")
	}
	return st.done(out.ID), nil
}

// pinError classifies the errors of the board listing and the Pin creation.
func (p *Provider) pinError(err error, o Options) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return classify(err, provider.CategoryInvalidOptions)
	}
	switch {
	case ae.HTTP == http.StatusNotFound && ae.Code == codeBoardNotFound:
		return provider.Permanent(provider.CategoryInvalidOptions, ae.HTTP,
			"Pinterest board %s is not one of this account's boards (the channel's options list them): %s", o.BoardID, ae.Message)
	case ae.Code == codeImageBroken:
		return provider.Permanent(provider.CategoryMediaRejected, ae.HTTP, "Pinterest refused the Pin's cover image: %s", ae.Message)
	case ae.HTTP == http.StatusNotFound:
		// The media (or the board) vanished: the video would have to be sent again.
		return provider.Permanent(provider.CategoryInternal, ae.HTTP, "%s", ae.Error())
	}
	return ae.publishError(provider.CategoryInvalidOptions)
}

// findPin looks for a video Pin on the board with the destination's texts created at or after
// since. Pins come newest first: the search stops at a page that is all older.
func (p *Provider) findPin(ctx context.Context, base, token string, o Options, since time.Time) (string, error) {
	q := url.Values{"page_size": {"100"}}
	for range p.cfg.DedupPages {
		var pg page[pin]
		// A GET: asking again changes nothing.
		err := p.cfg.Repeat.Do(ctx, readAs(provider.CategoryInvalidOptions), func() error {
			return p.call(ctx, http.MethodGet, base, token, pathBoards+"/"+url.PathEscape(o.BoardID)+"/pins", q, nil, &pg)
		})
		if err != nil {
			return "", err
		}
		older := 0
		for _, x := range pg.Items {
			at, ok := x.createdAt()
			if ok && at.Before(since) {
				older++
				continue
			}
			if x.ID != "" && deref(x.Title) == o.Title && deref(x.Description) == o.Description && deref(x.Link) == o.Link &&
				(x.Media == nil || x.Media.MediaType == "video") {
				return x.ID, nil
			}
		}
		if pg.Bookmark == nil || *pg.Bookmark == "" || (len(pg.Items) > 0 && older == len(pg.Items)) {
			break
		}
		q.Set("bookmark", *pg.Bookmark)
	}
	return "", nil
}

// PinURL is the public URL of a Pin.
func PinURL(id string) string { return "https://www.pinterest.com/pin/" + url.PathEscape(id) + "/" }

func (st State) done(id string) provider.Outcome {
	st.Phase = phaseDone
	st.PinID = id
	st.URL = PinURL(id)
	return st.outcome()
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: provider.StatusPublished, State: raw, ExternalID: st.PinID, URL: st.URL}
}

// Identify returns who the credentials belong to (GET /v5/user_account): the account id,
// the business name (or the username) as name, the username and the profile image. baseURL ""
// means the configured one; credentials carry access_token. A rejected token is an
// auth_expired *provider.Error.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	base, token, err := p.target(baseURL, credentials)
	if err != nil {
		return provider.Identity{}, err
	}
	var u user
	if err := p.call(ctx, http.MethodGet, base, token, pathUserAccount, nil, nil, &u); err != nil {
		return provider.Identity{}, classify(err, provider.CategoryInternal)
	}
	if u.ID == "" && u.Username == "" {
		return provider.Identity{}, provider.Permanent(provider.CategoryInternal, http.StatusOK, "Pinterest answered the user account without an id")
	}
	id := u.ID
	if id == "" {
		id = u.Username
	}
	name := u.BusinessName
	if name == "" {
		name = u.Username
	}
	return provider.Identity{ExternalID: id, Name: name, Username: u.Username, AvatarURL: u.ProfileImage}, nil
}

// maxBoardPages bounds the board listing of Options (100 boards a page).
const maxBoardPages = 20

// Options returns the publish options of a Pinterest channel: the static registry's, with
// board_id's choices replaced by the account's boards (GET /v5/boards, every page), and
// "boards" listing each board's id, name and privacy. baseURL "" means the configured one;
// credentials carry access_token. Errors are *provider.Error values, classified as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	base, token, err := p.target(baseURL, credentials)
	if err != nil {
		return nil, err
	}
	var boards []board
	q := url.Values{"page_size": {"100"}}
	for range maxBoardPages {
		var pg page[board]
		if err := p.call(ctx, http.MethodGet, base, token, pathBoards, q, nil, &pg); err != nil {
			return nil, classify(err, provider.CategoryInternal)
		}
		boards = append(boards, pg.Items...)
		if pg.Bookmark == nil || *pg.Bookmark == "" {
			break
		}
		q.Set("bookmark", *pg.Bookmark)
	}
	choices := make([]any, 0, len(boards))
	list := make([]any, 0, len(boards))
	for _, b := range boards {
		choices = append(choices, b.ID)
		list = append(list, map[string]any{"id": b.ID, "name": b.Name, "privacy": b.Privacy})
	}
	opt := map[string]any{"type": "string", "required": true, "choices": choices,
		"note": "the id of one of the account's boards (see boards for their names)"}
	if len(boards) == 0 {
		opt["note"] = "the Pinterest account has no board: create one on Pinterest first"
	} else if len(boards) == 1 {
		opt["default"] = boards[0].ID
	}
	opts := staticOptions()
	opts["board_id"] = opt
	opts["boards"] = list
	return opts, nil
}
