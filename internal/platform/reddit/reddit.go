// Package reddit publishes video to a subreddit the way PRAW's submit_video does (video posts
// are not part of Reddit's documented API): POST /api/media/asset.json leases an S3 object for
// the video, the video is POSTed to S3 with the lease's policy fields, the same is done for
// the poster image, the lease's websocket is opened, POST /api/submit (kind=video) starts the
// post, and the websocket reports when Reddit has processed the video: the post's URL, or
// "failed".
//
// Each Step does one thing and returns the State to store before the next: the checks of
// the subreddit (exists, allows video, flair), then for the video and then the poster a lease
// (State keeps the asset id and object URL; the policy's signature and security token stay
// in memory only) and its upload, then the submit, then the wait for the result.
//
// Crash-resume: an S3 POST stores the whole object or nothing, and the object is public, so a
// Step that finds a leased asset without its lease in memory (a restart) asks S3 with HEAD:
// an object that is there is not uploaded again; one that is not is leased anew and uploaded.
// The submit is answered at once and its State is stored before the result is awaited: a
// Step after a restart never submits again; it reconnects to the websocket and looks for the
// post among the account's newest submissions (GET /user/{name}/submitted, matching the
// post's url https://v.redd.it/{asset id}, which is how Reddit lists hosted video).
package reddit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is Reddit's OAuth API host.
const DefaultBaseURL = "https://oauth.reddit.com"

// DefaultUserAgent follows Reddit's "<platform>:<app ID>:<version string> (by /u/<reddit
// username>)" form; an operator sets Config.UserAgent to name the Reddit account of the app.
const DefaultUserAgent = "server:reelay:1.0 (self-hosted reelay)"

// leaseMargin keeps an upload from starting just before its lease's policy expires.
const leaseMargin = 10 * time.Second

// maxLeases bounds how often one file is leased anew (expired policies, lost leases).
const maxLeases = 6

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the API base (DefaultBaseURL); a destination's BaseURL wins over it.
	BaseURL string
	// HTTPClient makes every request and the websocket connections (a client of its own, no
	// overall timeout: uploads are bounded by their context).
	HTTPClient *http.Client
	// UserAgent is sent with every request (DefaultUserAgent).
	UserAgent string
	// APITimeout bounds each API call and websocket handshake (30 s).
	APITimeout time.Duration
	// ResultWait is how long one Step waits (real time) on the websocket for the result
	// (3 s) before it returns processing.
	ResultWait time.Duration
	// ResultTimeout is how long after the submit (on Now) the provider keeps waiting for the
	// result before it gives up (30 min). It never submits again.
	ResultTimeout time.Duration
	// ListingEvery is how many processing Steps pass between looks at the account's
	// submissions while the websocket is open (5): Reddit sometimes makes the post without
	// sending the result.
	ListingEvery int
	// WatchTTL is how long (real time) a websocket connection is kept open at most (1 h).
	WatchTTL time.Duration
	// PollInitial and PollMax bound the wait between processing Steps (2 s doubling every
	// second Step, at most 30 s).
	PollInitial, PollMax time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider is Reddit's provider.Provider. It holds, in memory, the upload leases and the
// websocket connections of destinations in progress; Close releases them.
type Provider struct {
	cfg Config

	mu      sync.Mutex
	leases  map[string]*lease
	watches map[string]*watch
}

// The contract the Provider keeps (internal/provider), checked by the compiler: app.New
// finds these abilities by asking.
var (
	_ provider.Provider               = (*Provider)(nil)
	_ provider.Identifier             = (*Provider)(nil)
	_ provider.OptionsReader          = (*Provider)(nil)
	_ provider.SubredditOptionsReader = (*Provider)(nil)
	_ provider.MetricsSource          = (*Provider)(nil)
	_ provider.CommentSource          = (*Provider)(nil)
	_ provider.Closer                 = (*Provider)(nil)
)

// New returns a Reddit provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultBaseURL)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.UserAgent = cmp.Or(cfg.UserAgent, DefaultUserAgent)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.ResultWait = provider.Positive(cfg.ResultWait, 3*time.Second)
	cfg.ResultTimeout = provider.Positive(cfg.ResultTimeout, 30*time.Minute)
	cfg.ListingEvery = provider.Positive(cfg.ListingEvery, 5)
	cfg.WatchTTL = provider.Positive(cfg.WatchTTL, time.Hour)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 2*time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, 30*time.Second)
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg, leases: map[string]*lease{}, watches: map[string]*watch{}}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Reddit }

// Phases of State.
const (
	phaseStart      = ""
	phaseVideo      = "video"
	phasePoster     = "poster"
	phaseSubmit     = "submit"
	phaseProcessing = "processing"
	phaseDone       = "done"
)

// Asset is one uploaded file in State: Reddit's asset id and the object's URL. Neither is a
// secret (the object is public once uploaded).
type Asset struct {
	AssetID string `json:"asset_id,omitempty"`
	URL     string `json:"url,omitempty"`
	// WebsocketURL is where Reddit reports the processing of a video asset.
	WebsocketURL string `json:"websocket_url,omitempty"`
	Uploaded     bool   `json:"uploaded,omitempty"`
	// Leases counts the leases taken for this file.
	Leases int `json:"leases,omitempty"`
}

// State is what the publisher stores between Steps.
type State struct {
	Phase string `json:"phase,omitempty"`
	// Subreddit is the community's name as Reddit spells it; Username the account's.
	Subreddit string `json:"subreddit,omitempty"`
	Username  string `json:"username,omitempty"`
	Video     Asset  `json:"video,omitzero"`
	Poster    Asset  `json:"poster,omitzero"`
	// DefaultPoster says the poster is reelay's own image (no usable thumbnail was given).
	DefaultPoster bool      `json:"default_poster,omitempty"`
	SubmittedAt   time.Time `json:"submitted_at,omitzero"`
	// ResultURL is the websocket URL /api/submit answered.
	ResultURL string `json:"result_url,omitempty"`
	// Uncertain says the submit's answer was lost: it may or may not have reached Reddit.
	Uncertain  bool `json:"uncertain,omitempty"`
	Polls      int  `json:"polls,omitempty"`
	Reconnects int  `json:"reconnects,omitempty"`
	// The outcome, once done.
	Status     string `json:"status,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	URL        string `json:"url,omitempty"`
	Message    string `json:"message,omitempty"`
}

func parseOptions(d *provider.Destination) (Options, error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return o, fmt.Errorf("reddit options: %w", err)
	}
	if o.Title == "" {
		o.Title = d.Title
	}
	o.Subreddit = cleanSubreddit(o.Subreddit)
	caps := Description.Capabilities
	switch lim := caps.Text["title"]; {
	case strings.TrimSpace(o.Title) == "":
		return o, fmt.Errorf("reddit.title is required (or set the post's title)")
	case !lim.Check(o.Title):
		return o, fmt.Errorf("the Reddit title is %d UTF-16 units long; Reddit accepts at most %d", lim.Count(o.Title), lim.Max)
	case o.Subreddit == "":
		return o, fmt.Errorf("reddit.subreddit is required")
	case o.FlairText != "" && o.FlairID == "":
		return o, fmt.Errorf("reddit.flair_text needs reddit.flair_id (an editable flair template)")
	}
	return o, nil
}

// cleanSubreddit takes "r/name", "/r/name" or "name".
func cleanSubreddit(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "/")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "r/"), "R/")
	return strings.TrimRight(s, "/")
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Reddit", &st); err != nil {
		return provider.Outcome{}, err
	}
	c, err := p.client(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, c, d, st)
	case phaseVideo, phasePoster:
		return p.uploadStep(ctx, c, d, st)
	case phaseSubmit:
		return p.submit(ctx, c, d, st)
	case phaseProcessing:
		return p.await(ctx, c, d, st)
	case phaseDone:
		return st.outcome(), nil
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Reddit state has unknown phase %q", st.Phase)
}

// client resolves the API base and access token of a channel.
func (p *Provider) client(baseURL string, creds map[string]string) (client, error) {
	token := strings.TrimSpace(creds["access_token"])
	if token == "" {
		return client{}, provider.Permanent(provider.CategoryAuthExpired, 0, "the Reddit channel has no access token")
	}
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		base = p.cfg.BaseURL
	}
	return client{p: p, base: base, token: token}, nil
}

// scheme is the API base's scheme, used for Reddit's protocol-relative upload actions.
func (c client) scheme() string {
	if u, err := url.Parse(c.base); err == nil && u.Scheme != "" {
		return u.Scheme
	}
	return "https"
}

// start checks what can be checked before anything is uploaded: the options, the video, the
// account, and that the subreddit exists, takes video and gets the flair it requires.
func (p *Provider) start(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	o, err := parseOptions(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	if _, _, err := videoType(d.Video); err != nil {
		return provider.Outcome{}, err
	}
	m, err := c.me(ctx)
	if err != nil {
		return provider.Outcome{}, classify(err, "GET /api/v1/me")
	}
	sr, err := p.checkSubreddit(ctx, c, o)
	if err != nil {
		return provider.Outcome{}, err
	}
	st = State{Phase: phaseVideo, Subreddit: sr, Username: m.Name}
	return st.next(provider.StatusUploading, 0), nil
}

// checkSubreddit returns the subreddit's name as Reddit spells it, or an invalid_options
// error naming it.
func (p *Provider) checkSubreddit(ctx context.Context, c client, o Options) (string, error) {
	sub, err := c.about(ctx, o.Subreddit)
	if err != nil {
		if ae, ok := err.(*apiError); ok {
			switch ae.status {
			case http.StatusNotFound:
				return "", provider.Permanent(provider.CategoryInvalidOptions, ae.status, "r/%s does not exist on Reddit", o.Subreddit)
			case http.StatusForbidden:
				return "", provider.Permanent(provider.CategoryInvalidOptions, ae.status,
					"r/%s is private, quarantined or banned, or this account may not see it (%s)", o.Subreddit, ae.Error())
			}
		}
		return "", classify(err, "GET /r/"+o.Subreddit+"/about")
	}
	name := sub.DisplayName
	if !sub.AllowVideos || sub.SubmissionType == "self" {
		return "", provider.Permanent(provider.CategoryInvalidOptions, 0, "r/%s does not allow video posts", name)
	}
	req, err := c.requirements(ctx, name)
	if err != nil {
		if ae, ok := err.(*apiError); !ok || (ae.status != http.StatusNotFound && ae.status != http.StatusForbidden) {
			return "", classify(err, "GET /api/v1/"+name+"/post_requirements")
		}
	}
	lim := platform.TextLimit{Unit: platform.UnitUTF16}
	n := lim.Count(o.Title)
	if req.TitleMax != nil && *req.TitleMax > 0 && n > *req.TitleMax {
		return "", provider.Permanent(provider.CategoryInvalidOptions, 0, "r/%s takes titles of at most %d characters; this one has %d", name, *req.TitleMax, n)
	}
	if req.TitleMin != nil && n < *req.TitleMin {
		return "", provider.Permanent(provider.CategoryInvalidOptions, 0, "r/%s takes titles of at least %d characters; this one has %d", name, *req.TitleMin, n)
	}
	if !req.IsFlairRequired && o.FlairID == "" {
		return name, nil
	}
	flairs, ferr := c.flairs(ctx, name)
	if ferr != nil {
		if ae, ok := ferr.(*apiError); !ok || ae.status != http.StatusForbidden {
			return "", classify(ferr, "GET /r/"+name+"/api/link_flair_v2")
		}
		flairs = nil // not visible to this account: Reddit checks the id at the submit
	}
	var choices []string
	for _, f := range flairs {
		if !f.ModOnly {
			choices = append(choices, fmt.Sprintf("%s (%s)", f.ID, f.Text))
		}
	}
	if o.FlairID == "" {
		msg := fmt.Sprintf("r/%s requires post flair: set reddit.flair_id", name)
		if len(choices) > 0 {
			msg += " to one of " + strings.Join(choices, ", ")
		}
		return "", provider.Permanent(provider.CategoryInvalidOptions, 0, "%s", msg)
	}
	if ferr == nil {
		for _, f := range flairs {
			if f.ID == o.FlairID && !f.ModOnly {
				if o.FlairText != "" && !f.TextEditable {
					return "", provider.Permanent(provider.CategoryInvalidOptions, 0,
						"the flair %s (%s) of r/%s does not take custom text: leave reddit.flair_text out", f.ID, f.Text, name)
				}
				return name, nil
			}
		}
		return "", provider.Permanent(provider.CategoryInvalidOptions, 0,
			"reddit.flair_id %s is not a flair template of r/%s that posters may use; choices: %s", o.FlairID, name, strings.Join(choices, ", "))
	}
	return name, nil
}

// videoType returns the video's media type and file name for the lease, or why Reddit would
// not take it.
func videoType(v provider.Media) (mimetype, filename string, err error) {
	caps := Description.Capabilities
	if v.Size <= 0 || v.Open == nil {
		return "", "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if caps.MaxVideoBytes > 0 && v.Size > caps.MaxVideoBytes {
		return "", "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video is %d bytes; Reddit takes at most %d", v.Size, caps.MaxVideoBytes)
	}
	if max := time.Duration(caps.MaxDurationSeconds * float64(time.Second)); max > 0 && v.Duration > max {
		return "", "", provider.Permanent(provider.CategoryMediaRejected, 0, "the video lasts %s; Reddit takes at most %s", v.Duration, max)
	}
	mt := "video/mp4"
	if v.ContentType != "" {
		if t, _, err := mime.ParseMediaType(v.ContentType); err == nil {
			mt = t
		}
	}
	switch mt {
	case "video/mp4":
		return mt, "video.mp4", nil
	case "video/quicktime":
		return mt, "video.mov", nil
	}
	return "", "", provider.Permanent(provider.CategoryMediaRejected, 0, "Reddit takes MP4 or MOV video, not %s", v.ContentType)
}

// posterFor returns the poster image to upload: the destination's thumbnail when Reddit takes
// its type, else reelay's own.
func posterFor(d *provider.Destination) (m provider.Media, mimetype, filename string, own bool) {
	if t := d.Thumbnail; t != nil && t.Size > 0 && t.Open != nil {
		mt, _, _ := mime.ParseMediaType(t.ContentType)
		switch mt {
		case "image/jpeg":
			return *t, mt, "poster.jpg", false
		case "image/png":
			return *t, mt, "poster.png", false
		}
	}
	return defaultPoster(), "image/png", "poster.png", true
}

// uploadStep leases or uploads the video or the poster: one request to Reddit or S3 per
// Step, apart from the HEAD that checks an earlier upload after a restart.
func (p *Provider) uploadStep(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	a, what := &st.Video, "the video"
	var (
		m                  provider.Media
		mimetype, filename string
	)
	if st.Phase == phaseVideo {
		var err error
		if mimetype, filename, err = videoType(d.Video); err != nil {
			return provider.Outcome{}, err
		}
		m = d.Video
	} else {
		a, what = &st.Poster, "the poster image"
		m, mimetype, filename, st.DefaultPoster = posterFor(d)
	}

	if a.AssetID != "" {
		l := p.takeLease(d.ID, a.AssetID)
		if l == nil {
			// The lease is gone (a restart) or expired: S3 has the whole object or nothing.
			ok, err := p.exists(ctx, a.URL)
			if err != nil {
				return provider.Outcome{}, err
			}
			if ok {
				a.Uploaded = true
				return p.advance(st), nil
			}
			*a = Asset{Leases: a.Leases}
		} else {
			// An S3 POST stores the whole object under the lease's key or nothing (see the
			// package comment): before the file is sent again, HEAD tells whether the last
			// POST stored it after all, and a stored object is not sent twice.
			err := p.cfg.Repeat.DoChecked(ctx, func(err error) *provider.Error {
				if se, ok := err.(*s3Error); ok {
					return classifyS3(se, what)
				}
				return provider.AsError(err)
			}, func() error {
				return p.upload(ctx, l, m, filename, mimetype)
			}, func() (bool, error) {
				return p.exists(ctx, a.URL)
			})
			if err == nil {
				p.dropLease(d.ID, a.AssetID)
				a.Uploaded = true
				return p.advance(st), nil
			}
			if se, ok := err.(*s3Error); ok {
				if se.expired() {
					p.dropLease(d.ID, a.AssetID)
					*a = Asset{Leases: a.Leases}
					return st.next(provider.StatusUploading, 0), nil
				}
				return provider.Outcome{}, classifyS3(se, what)
			}
			return provider.Outcome{}, err // transient: the lease is kept for the next try
		}
	}

	if a.Leases >= maxLeases {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"Reddit: %s could not be uploaded after %d upload leases", what, a.Leases)
	}
	// A lease asked for again leaves an asset that never gets its file: a post is made of the
	// object URL it names, so the other one is never posted, and its upload policy lapses.
	var l *lease
	err := p.cfg.Repeat.Do(ctx, readAs("POST /api/media/asset.json"), func() error {
		var err error
		l, err = c.requestLease(ctx, filename, mimetype, c.scheme())
		return err
	})
	if err != nil {
		return provider.Outcome{}, classify(err, "POST /api/media/asset.json")
	}
	p.putLease(d.ID, l)
	*a = Asset{AssetID: l.assetID, URL: l.objectURL(), Leases: a.Leases + 1}
	if st.Phase == phaseVideo {
		a.WebsocketURL = l.ws
	}
	return st.next(provider.StatusUploading, 0), nil
}

// advance moves past a finished upload.
func (p *Provider) advance(st State) provider.Outcome {
	if st.Phase == phaseVideo {
		st.Phase = phasePoster
	} else {
		st.Phase = phaseSubmit
	}
	return st.next(provider.StatusUploading, 0)
}

// submit opens the video's websocket and then submits the post. It returns as soon as
// Reddit has answered, so that the State saying "submitted" is stored before anything else.
func (p *Provider) submit(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	o, err := parseOptions(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	// Connecting to the websocket only listens: connecting again changes nothing.
	var w *watch
	err = p.cfg.Repeat.Do(ctx, nil, func() error {
		var err error
		w, err = p.dial(ctx, st.Video.WebsocketURL)
		return err
	})
	if err != nil {
		// Without the websocket the result would be missed (PRAW does not submit either).
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0,
			"Reddit: connecting to the media websocket: %v", err)
	}
	form := url.Values{
		"api_type": {"json"}, "kind": {"video"}, "sr": {st.Subreddit}, "title": {o.Title},
		"url": {st.Video.URL}, "video_poster_url": {st.Poster.URL},
		"nsfw": {fmt.Sprint(o.NSFW != nil && *o.NSFW)}, "spoiler": {fmt.Sprint(o.Spoiler != nil && *o.Spoiler)},
		"sendreplies": {"true"}, "resubmit": {"true"},
	}
	if o.FlairID != "" {
		form.Set("flair_id", o.FlairID)
		if o.FlairText != "" {
			form.Set("flair_text", o.FlairText)
		}
	}
	now := p.cfg.Now()
	// A submit Reddit answered with an error of its own is made again, as the next Step would
	// make it, after the account's newest submissions show no post of this video (a submit
	// that went through and was processed meanwhile). One that got no answer is never made
	// again (below).
	var data submitData
	var found provider.Outcome
	var lost error // a submit that got no answer
	err = p.cfg.Repeat.DoChecked(ctx, readAs("POST /api/submit"), func() error {
		var err error
		data, err = c.submit(ctx, form)
		switch err.(type) {
		case nil, *apiError, submitErrors:
			return err
		}
		lost = err // not made again: see below
		return nil
	}, func() (bool, error) {
		out, ok, err := p.look(ctx, c, d.ID, st)
		found = out
		return ok, err
	})
	if err == nil && found.Done() {
		w.close()
		return found, nil
	}
	if lost != nil {
		err = lost
	}
	if err != nil {
		if se, ok := err.(submitErrors); ok {
			w.close()
			return provider.Outcome{}, classifySubmit(se, st.Subreddit)
		}
		if _, answered := err.(*apiError); answered {
			w.close()
			return provider.Outcome{}, classify(err, "POST /api/submit")
		}
		// The answer was lost: Reddit may have the post. It is never submitted again; the
		// websocket (opened before) or the account's submissions will tell.
		st.Uncertain = true
	}
	p.putWatch(d.ID, st.Video.AssetID, w)
	st.Phase, st.SubmittedAt, st.ResultURL = phaseProcessing, now, data.WebsocketURL
	return st.next(provider.StatusProcessing, 0), nil
}

// await waits for the processing result: on the websocket held since the submit, or, when it
// is gone, on a new connection and in the account's newest submissions.
func (p *Provider) await(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	looked := false
	w := p.getWatch(d.ID, st.Video.AssetID)
	if w != nil {
		select {
		case <-w.done:
			if w.err != nil { // the connection ended without a result
				p.dropWatch(d.ID, st.Video.AssetID)
				w = nil
			}
		default:
		}
	}
	if w == nil {
		// After a restart or a broken connection: listen again first, then look, so that a
		// result is caught by one or the other.
		ws := st.ResultURL
		if ws == "" {
			ws = st.Video.WebsocketURL
		}
		if nw, err := p.dial(ctx, ws); err == nil {
			w = nw
			p.putWatch(d.ID, st.Video.AssetID, w)
			st.Reconnects++
		}
		out, found, err := p.look(ctx, c, d.ID, st)
		if err != nil || found {
			return out, err
		}
		looked = true
	}
	if w != nil && w.wait(ctx, p.cfg.ResultWait) && w.err == nil {
		p.dropWatch(d.ID, st.Video.AssetID)
		return p.result(st, w.msg)
	}
	st.Polls++
	if !looked && st.Polls%p.cfg.ListingEvery == 0 {
		out, found, err := p.look(ctx, c, d.ID, st)
		if err != nil || found {
			return out, err
		}
		looked = true
	}
	if p.cfg.Now().Sub(st.SubmittedAt) >= p.cfg.ResultTimeout {
		if !looked {
			out, found, err := p.look(ctx, c, d.ID, st)
			if err != nil || found {
				return out, err
			}
		}
		p.dropWatch(d.ID, st.Video.AssetID)
		why := "Reddit did not report the result of processing the video"
		if st.Uncertain {
			why = "Reddit's answer to the submit was lost"
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
			"%s, and no post with it appeared in u/%s's submissions within %s; it is not submitted again",
			why, st.Username, p.cfg.ResultTimeout)
	}
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

// look searches the account's newest submissions for the post of the video.
func (p *Provider) look(ctx context.Context, c client, destID string, st State) (provider.Outcome, bool, error) {
	posts, err := c.submitted(ctx, st.Username)
	if err != nil {
		return provider.Outcome{}, false, classify(err, "GET /user/"+st.Username+"/submitted")
	}
	for _, ps := range posts {
		if ps.URL == "https://v.redd.it/"+st.Video.AssetID || ps.URL == st.Video.URL {
			p.dropWatch(destID, st.Video.AssetID)
			st.Phase, st.Status = phaseDone, provider.StatusPublished
			st.ExternalID = ps.Name
			if st.ExternalID == "" && ps.ID != "" {
				st.ExternalID = "t3_" + ps.ID
			}
			st.URL = "https://www.reddit.com" + ps.Permalink
			st.Message = st.note()
			return st.outcome(), true, nil
		}
	}
	return provider.Outcome{}, false, nil
}

// result turns the websocket's message into the outcome.
func (p *Provider) result(st State, m wsMessage) (provider.Outcome, error) {
	if m.Type != "success" || m.Payload.Redirect == "" {
		msg := "Reddit could not process the video (websocket: " + m.Type + ")"
		if m.Payload.Message != "" {
			msg += ": " + m.Payload.Message
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%s", msg)
	}
	st.Phase, st.Status, st.URL = phaseDone, provider.StatusPublished, m.Payload.Redirect
	st.ExternalID = postID(m.Payload.Redirect)
	st.Message = st.note()
	return st.outcome(), nil
}

// postID reads the fullname of a post from its URL (.../comments/{id}/...).
func postID(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	seg := strings.Split(strings.Trim(pu.Path, "/"), "/")
	for i := 0; i+1 < len(seg); i++ {
		if seg[i] == "comments" && seg[i+1] != "" {
			return "t3_" + seg[i+1]
		}
	}
	return ""
}

func (st State) note() string {
	if st.DefaultPoster {
		return "Reddit requires a poster image for video posts; reelay's plain poster was used because no JPEG or PNG thumbnail was given."
	}
	return ""
}

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: st.Status, State: raw, ExternalID: st.ExternalID, URL: st.URL, Message: st.Message}
}
